"""A synthetic lineage graph, as OpenLineage events, for headwater's graph benchmark.

At ``scale=1.0``: 100,000 datasets, 50,000 jobs, 1,000,000 runs and about
2,000,000 column edges. The shape aims to look like a real warehouse:

- 10% of datasets are raw (no producing job); every other dataset is written by
  exactly one job (a job writes 1-3 outputs).
- Jobs sit on ``LAYERS`` layers; a job reads 1-4 datasets, mostly from the layer
  just before its own (long chains: a top-layer dataset is ~``LAYERS`` jobs away from
  raw data) and sometimes from any earlier layer (cross-links). Popular inputs
  are chosen with a skewed distribution, so some datasets fan out to hundreds of
  readers while most have a few.
- Every dataset has ``FIELDS`` columns; each output column derives from 1-3 input
  columns of the job's inputs, with an OpenLineage transformation type.
- Each job has ``runs_per_job`` runs (20 at full scale), each a START and a
  COMPLETE event; only the latest run of a job carries the schema and column
  lineage facets, earlier ones carry plain inputs/outputs (as a producer that
  re-runs an unchanged job would, minus the repeated facets, to keep the event
  volume ingestible on one machine).

Deterministic for a given seed. The generator yields events; the benchmark sends
them through the store's own write path.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["FIELDS", "LAYERS", "START", "SyntheticGraph", "build_graph", "events"]

FIELDS = 12
LAYERS = 25
NAMESPACE = "synthetic"
#: Event time of the first round of runs; round ``r`` runs ``r`` hours later.
START = datetime(2026, 1, 1, tzinfo=UTC)
PRODUCER = "https://github.com/headwater/benchmarks/synthetic"
_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_FACET_URL = "https://openlineage.io/spec/facets/1-0-1/{}.json"
_TRANSFORMS = [
    ("DIRECT", "IDENTITY"),
    ("DIRECT", "TRANSFORMATION"),
    ("DIRECT", "AGGREGATION"),
    ("INDIRECT", "FILTER"),
    ("INDIRECT", "JOIN"),
]


@dataclass
class SyntheticJob:
    name: str
    layer: int
    inputs: list[str]
    outputs: list[str]
    # output dataset -> output field -> [(input dataset, input field, type, subtype)]
    columns: dict[str, dict[str, list[tuple[str, str, str, str]]]] = field(default_factory=dict)


@dataclass
class SyntheticGraph:
    datasets: list[str]
    jobs: list[SyntheticJob]
    runs_per_job: int

    @property
    def column_edges(self) -> int:
        return sum(
            len(inputs)
            for job in self.jobs
            for fields in job.columns.values()
            for inputs in fields.values()
        )


def _field(i: int) -> str:
    return f"c{i:02d}"


def build_graph(scale: float = 1.0, seed: int = 7, runs_per_job: int = 20) -> SyntheticGraph:
    """The datasets and jobs at ``scale`` (1.0 = 100k datasets, 50k jobs, 20 runs per job)."""
    rng = random.Random(seed)
    n_datasets = max(20, int(100_000 * scale))
    n_jobs = max(10, int(50_000 * scale))
    n_raw = max(2, n_datasets // 10)

    datasets = [f"raw.source_{i}" for i in range(n_raw)]
    by_layer: list[list[str]] = [list(datasets)]
    remaining = n_datasets - n_raw
    jobs: list[SyntheticJob] = []
    for j in range(n_jobs):
        layer = 1 + (j * LAYERS) // n_jobs
        while len(by_layer) <= layer:
            by_layer.append([])
        jobs_left = n_jobs - j
        n_out = max(1, min(3, round(remaining / jobs_left))) if remaining > 0 else 0
        n_out = min(n_out, remaining)
        outputs = [f"l{layer:02d}.job_{j}_out_{k}" for k in range(n_out)]
        remaining -= n_out
        inputs = _pick_inputs(rng, by_layer, layer)
        job = SyntheticJob(f"l{layer:02d}.job_{j}", layer, inputs, outputs)
        for out in outputs:
            job.columns[out] = {
                _field(f): _column_inputs(rng, inputs)
                for f in range(FIELDS)
            }
        jobs.append(job)
        by_layer[layer].extend(outputs)
        datasets.extend(outputs)
    return SyntheticGraph(datasets, jobs, runs_per_job)


def _column_inputs(rng: random.Random, inputs: list[str]) -> list[tuple[str, str, str, str]]:
    """1-3 distinct input columns (possibly of the same input dataset) with a transformation."""
    count = rng.choice((1, 2, 2, 3, 3))
    picked = {(rng.choice(inputs), _field(rng.randrange(FIELDS))) for _ in range(count)}
    return [(src, src_field, *rng.choice(_TRANSFORMS)) for src, src_field in sorted(picked)]


def _pick_inputs(rng: random.Random, by_layer: list[list[str]], layer: int) -> list[str]:
    # The layer just before (referenced, not copied: at scale 10 a layer holds ~40k names).
    candidates_near = by_layer[layer - 1] or by_layer[0]
    picks: set[str] = set()
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        if rng.random() < 0.75 or layer == 1:
            pool = candidates_near
        else:
            pool = by_layer[rng.randrange(0, layer)] or by_layer[0]
        # Skewed choice: low indexes are popular, so a few datasets fan out widely.
        index = min(len(pool) - 1, int(len(pool) * rng.random() ** 3))
        picks.add(pool[index])
    return sorted(picks)


def _dataset(name: str, facets: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": NAMESPACE, "name": name}
    if facets:
        out["facets"] = facets
    return out


def _facet(kind: str, **body: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": _FACET_URL.format(kind), **body}


def _output_facets(job: SyntheticJob, out: str) -> dict[str, Any]:
    schema = _facet(
        "SchemaDatasetFacet",
        fields=[{"name": _field(f), "type": "bigint"} for f in range(FIELDS)],
    )
    column_lineage = _facet(
        "ColumnLineageDatasetFacet",
        fields={
            name: {
                "inputFields": [
                    {
                        "namespace": NAMESPACE,
                        "name": src,
                        "field": src_field,
                        "transformations": [{"type": kind, "subtype": subtype}],
                    }
                    for src, src_field, kind, subtype in inputs
                ]
            }
            for name, inputs in job.columns[out].items()
        },
    )
    return {"schema": schema, "columnLineage": column_lineage}


def events(
    graph: SyntheticGraph, start: datetime | None = None, part: tuple[int, int] = (0, 1)
) -> Iterator[dict[str, Any]]:
    """START and COMPLETE events of every run, in event-time order, job by job per round.

    ``part=(k, n)`` yields only the events of jobs ``k``, ``k + n``, ``k + 2n``, ...
    (the same run ids as the whole stream), so ``n`` processes can ingest one graph.
    """
    index_of_part, parts = part
    t0 = start or START
    rng = random.Random(11)
    raw_schema = {
        "schema": _facet(
            "SchemaDatasetFacet",
            fields=[{"name": _field(f), "type": "bigint"} for f in range(FIELDS)],
        )
    }
    for round_no in range(graph.runs_per_job):
        last = round_no == graph.runs_per_job - 1
        for index, job in enumerate(graph.jobs):
            when = t0 + timedelta(hours=round_no, seconds=index)
            run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            if index % parts != index_of_part:
                continue
            run = {"runId": run_id}
            job_ref = {"namespace": NAMESPACE, "name": job.name}
            inputs = [
                _dataset(d, raw_schema if last and d.startswith("raw.") else None)
                for d in job.inputs
            ]
            yield {
                "eventType": "START",
                "eventTime": when.isoformat(),
                "run": run,
                "job": job_ref,
                "inputs": inputs,
                "outputs": [_dataset(o) for o in job.outputs],
                "producer": PRODUCER,
                "schemaURL": _SCHEMA_URL,
            }
            outputs = [_dataset(o, _output_facets(job, o) if last else None) for o in job.outputs]
            yield {
                "eventType": "COMPLETE",
                "eventTime": (when + timedelta(milliseconds=500)).isoformat(),
                "run": run,
                "job": job_ref,
                "inputs": inputs,
                "outputs": outputs,
                "producer": PRODUCER,
                "schemaURL": _SCHEMA_URL,
            }
