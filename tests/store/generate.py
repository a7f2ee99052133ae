"""A deterministic generator of realistic OpenLineage traffic for replay tests and benchmarks.

Jobs are chained through datasets (ingest -> clean -> join -> report) and run
once per simulated hour: START, RUNNING (sometimes from a second producer,
sometimes at the same instant as another event), then COMPLETE or FAIL (a few
runs are left open, a few send only their terminal event). Schemas grow every
few hours, outputs carry ``schema`` and ``columnLineage`` facets, and there are
occasional DatasetEvents and JobEvents.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.store.builders import PRODUCER, SCHEMA_URL, facet

START = datetime(2024, 3, 1, tzinfo=UTC)
NS = "spark://prod"
SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"


def _time(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


class _Pipeline:
    """Datasets and the jobs between them; schemas change over time."""

    def __init__(self, rng: random.Random, width: int) -> None:
        self.rng = rng
        self.raw = [("s3://landing", f"events/source_{i}") for i in range(width)]
        self.clean = [("s3://lake", f"clean/source_{i}") for i in range(width)]
        self.joined = ("s3://lake", "joined/all_sources")
        self.report = ("postgres://warehouse:5432", "analytics.public.report")
        self.columns: dict[tuple[str, str], list[str]] = {}
        for ds in [*self.raw, *self.clean, self.joined, self.report]:
            self.columns[ds] = ["id", "ts", "amount", "customer", "country"]
        # (job name, inputs, outputs)
        self.jobs: list[tuple[str, list[tuple[str, str]], list[tuple[str, str]]]] = []
        for i in range(width):
            self.jobs.append((f"ingest.source_{i}", [], [self.raw[i]]))
            self.jobs.append((f"clean.source_{i}", [self.raw[i]], [self.clean[i]]))
        self.jobs.append(("join.all_sources", list(self.clean), [self.joined]))
        self.jobs.append(("report.daily", [self.joined], [self.report]))

    def evolve(self, hour: int) -> None:
        if hour and hour % 7 == 0:
            ds = self.rng.choice(list(self.columns))
            self.columns[ds] = [*self.columns[ds], f"col_{hour}"]

    def dataset(self, ds: tuple[str, str], *, output: bool, inputs: list[tuple[str, str]],
                run_id: str) -> dict[str, Any]:
        cols = self.columns[ds]
        facets: dict[str, Any] = {
            "schema": facet(fields=[{"name": c, "type": "string" if c in ("customer", "country")
                                     else "long", "description": f"{c} of the record"}
                                    for c in cols]),
            "dataSource": facet(name=ds[0], uri=ds[0]),
        }
        if output and inputs:
            facets["columnLineage"] = facet(fields={
                c: {"inputFields": [{"namespace": src[0], "name": src[1], "field": c,
                                     "transformations": [{"type": "DIRECT", "subtype": "IDENTITY",
                                                          "description": "", "masking": False}]}
                                    for src in inputs if c in self.columns[src]]}
                for c in cols},
                dataset=[{"namespace": inputs[0][0], "name": inputs[0][1], "field": "id",
                          "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}]}])
        if output:
            facets["lifecycleStateChange"] = facet(lifecycleStateChange="OVERWRITE")
        item: dict[str, Any] = {"namespace": ds[0], "name": ds[1], "facets": facets}
        if output:
            item["outputFacets"] = {"outputStatistics": facet(rowCount=self.rng.randint(1, 10**6))}
        else:
            item["inputFacets"] = {"dataQualityMetrics": facet(rowCount=self.rng.randint(1, 10**6))}
        return item


def _run_event(event_type: str | None, t: datetime, run_id: str, job: str,
               inputs: list[dict[str, Any]], outputs: list[dict[str, Any]],
               producer: str = PRODUCER, parent: str | None = None) -> dict[str, Any]:
    run_facets: dict[str, Any] = {
        "nominalTime": facet(nominalStartTime=_time(t.replace(minute=0, second=0, microsecond=0)))}
    if parent:
        run_facets["parent"] = facet(run={"runId": parent},
                                     job={"namespace": NS, "name": "scheduler"})
    event: dict[str, Any] = {
        "eventTime": _time(t),
        "run": {"runId": run_id, "facets": run_facets},
        "job": {"namespace": NS, "name": job, "facets": {
            "jobType": facet(processingType="BATCH", integration="SPARK", jobType="JOB"),
            "sourceCodeLocation": facet(type="git", url=f"https://git.example.com/{job}.py"),
        }},
        "inputs": inputs,
        "outputs": outputs,
        "producer": producer,
        "schemaURL": SCHEMA_URL,
    }
    if event_type is not None:
        event["eventType"] = event_type
    return event


def generate(count: int, *, seed: int = 7, width: int = 3) -> list[dict[str, Any]]:
    """At least ``count`` events in event-time order."""
    return list(_events(count, seed, width))


def _events(count: int, seed: int, width: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    pipe = _Pipeline(rng, width)
    produced = 0
    hour = 0
    while produced < count:
        pipe.evolve(hour)
        t = START + timedelta(hours=hour)
        parent = str(uuid.UUID(int=rng.getrandbits(128)))
        for job, ins, outs in pipe.jobs:
            run_id = str(uuid.UUID(int=rng.getrandbits(128)))
            t += timedelta(seconds=rng.randint(1, 30), microseconds=rng.randint(0, 999_999))
            inputs = [pipe.dataset(d, output=False, inputs=[], run_id=run_id) for d in ins]
            outputs = [pipe.dataset(d, output=True, inputs=ins, run_id=run_id) for d in outs]
            shape = rng.random()
            events = []
            if shape > 0.05:  # 5% send only their terminal event
                events.append(_run_event("START", t, run_id, job, inputs, outputs, parent=parent))
            mid = t + timedelta(seconds=rng.randint(1, 20))
            events.append(_run_event("RUNNING", mid, run_id, job, inputs, [], parent=parent))
            if rng.random() < 0.2:
                # A second producer reports the same instant with extra facets.
                other = _run_event("RUNNING", mid, run_id, job, inputs, outputs,
                                   producer="https://example.com/other-producer", parent=parent)
                other["run"]["facets"]["spark_version"] = facet(version="4.0.1")
                events.append(other)
            if rng.random() < 0.05:
                events.append(_run_event("OTHER", mid + timedelta(seconds=1), run_id, job, [], []))
            end = mid + timedelta(seconds=rng.randint(1, 60))
            roll = rng.random()
            if roll < 0.85:
                events.append(_run_event("COMPLETE", end, run_id, job, inputs, outputs,
                                         parent=parent))
            elif roll < 0.95:
                events.append(_run_event("FAIL", end, run_id, job, inputs, [], parent=parent))
            # else: left open (still RUNNING)
            t = end
            for event in events:
                yield event
                produced += 1
        if hour % 10 == 3:
            ds = rng.choice(pipe.raw)
            yield {"eventTime": _time(t + timedelta(seconds=1)),
                   "dataset": pipe.dataset(ds, output=False, inputs=[], run_id=""),
                   "producer": PRODUCER,
                   "schemaURL": SPEC + "#/definitions/DatasetEvent"}
            produced += 1
        if hour % 25 == 11:
            yield {"eventType": "COMPLETE", "eventTime": _time(t + timedelta(seconds=2)),
                   "job": {"namespace": NS, "name": "manual.backfill", "facets": {}},
                   "inputs": [{"namespace": pipe.joined[0], "name": pipe.joined[1]}],
                   "outputs": [{"namespace": "file", "name": f"/backfill/{hour}"}],
                   "producer": PRODUCER,
                   "schemaURL": SPEC + "#/definitions/JobEvent"}
            produced += 1
        hour += 1
