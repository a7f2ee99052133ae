"""OpenLineage traffic for the server's isolation tests: good runs, and events it must refuse.

Good events (:func:`good_events`) are the runs of a few jobs chained through a
few datasets: each run sends a START, sometimes a RUNNING, then a COMPLETE or
FAIL; every event reads one dataset and writes another, with ``schema``,
``columnLineage`` and ``tags`` facets, so each one derives versions, fields,
column edges and tag assignments.

Bad events are a good event with one defect:

* :data:`BAD`: a class the server's parser refuses; each names the JSON path
  the answer must point at (the path or a prefix of it, for defects deep in
  a facet);
* :data:`MALFORMED`: a facet of the wrong shape that a loose check lets
  through but fact extraction cannot walk. The server may store such an
  event or refuse it, but it must never cost the events sent beside it.

:func:`limit_events` are good events sitting exactly on every limit, which
the server must store.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "BAD",
    "DATASETS",
    "JOBS",
    "MALFORMED",
    "Defect",
    "RunPlan",
    "content_key",
    "good_events",
    "limit_events",
    "make_bad",
    "make_malformed",
]

PRODUCER = "https://github.com/headwater/headwater/tests/isolation"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACET_URL = "https://openlineage.io/spec/facets/1-0-0/Facet.json"
NAMESPACE = "isolation"
JOBS = ("ingest", "clean", "publish")
DATASETS = (
    ("file", "/lake/raw/orders"),
    ("file", "/lake/clean/orders"),
    ("s3://lake", "marts/orders_daily"),
    ("postgres://warehouse:5432", "shop.public.orders"),
)
BASE_TIME = datetime(2026, 3, 1, tzinfo=UTC)
COLUMNS = ("id", "customer", "amount")
_RUN_IDS = uuid.UUID("0f6c1a52-3a57-4c1e-9d43-61c1e2b7f1aa")


def facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": FACET_URL, **fields}


def content_key(event: Any) -> str:
    """Identity of an event's content: equal for the same event however it was built."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class RunPlan:
    """One run: which job, which dataset it reads and writes, and how it ends."""

    job: int
    source: int
    target: int
    terminal: str  # COMPLETE or FAIL
    running: bool  # also sends a RUNNING event
    wide: bool  # the output has one more column than the input


def _time(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _input(source: tuple[str, str]) -> dict[str, Any]:
    fields = [{"name": c, "type": "string" if c == "customer" else "long",
               "description": f"{c} of the order"} for c in COLUMNS]
    return {"namespace": source[0], "name": source[1], "facets": {"schema": facet(fields=fields)},
            "inputFacets": {"dataQualityMetrics": facet(rowCount=1000)}}


def _output(source: tuple[str, str], target: tuple[str, str], wide: bool) -> dict[str, Any]:
    columns = [*COLUMNS, "amount_eur"] if wide else list(COLUMNS)
    fields = [{"name": c, "type": "string" if c == "customer" else "long"} for c in columns]
    fields[1]["tags"] = [{"key": "pii", "value": "customer", "source": "CONFIG"}]
    derived = {"amount_eur": "amount"}
    lineage = {
        c: {"inputFields": [{
            "namespace": source[0], "name": source[1], "field": derived.get(c, c),
            "transformations": [{"type": "DIRECT",
                                 "subtype": "TRANSFORMATION" if c in derived else "IDENTITY",
                                 "description": "", "masking": False}]}]}
        for c in columns}
    return {
        "namespace": target[0],
        "name": target[1],
        "facets": {
            "schema": facet(fields=fields),
            "columnLineage": facet(fields=lineage),
            "tags": facet(tags=[{"key": "tier", "value": "gold", "source": "CONFIG"},
                                {"key": "pii", "value": "true", "source": "CONFIG",
                                 "field": "customer"}]),
        },
        "outputFacets": {"outputStatistics": facet(rowCount=1000, size=65536)},
    }


def good_events(plans: Sequence[RunPlan]) -> list[dict[str, Any]]:
    """The events of ``plans``, in event-time order (run ``k`` starts ``k`` minutes in)."""
    events = []
    for k, plan in enumerate(plans):
        run_id = str(uuid.uuid5(_RUN_IDS, str(k)))
        source = DATASETS[plan.source]
        target = DATASETS[plan.target if plan.target != plan.source
                          else (plan.source + 1) % len(DATASETS)]
        start = BASE_TIME + timedelta(minutes=k)
        steps = [("START", 0)] + ([("RUNNING", 10)] if plan.running else [])
        for event_type, second in [*steps, (plan.terminal, 20)]:
            events.append({
                "eventType": event_type,
                "eventTime": _time(start + timedelta(seconds=second)),
                "run": {"runId": run_id, "facets": {
                    "nominalTime": facet(nominalStartTime=_time(start)),
                }},
                "job": {"namespace": NAMESPACE, "name": JOBS[plan.job], "facets": {
                    "sourceCodeLocation": facet(type="git",
                                                url=f"https://git.example.com/{JOBS[plan.job]}"),
                }},
                "inputs": [_input(source)],
                "outputs": [_output(source, target, plan.wide)],
                "producer": PRODUCER,
                "schemaURL": SCHEMA_URL,
            })
    return events


# -- events the parser refuses ---------------------------------------------------------

@dataclass(frozen=True)
class Defect:
    """One way to break a good event, and the JSON path the refusal must name."""

    field: str
    apply: Callable[[dict[str, Any]], None]


def _edit(path: Sequence[str | int],
          change: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
    """An edit replacing the value at ``path`` (keys and indexes) by ``change(old value)``."""
    def apply(event: dict[str, Any]) -> None:
        parent: Any = event
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        # A key the edit adds (a new facet) has no old value.
        old = parent.get(last) if isinstance(parent, dict) else parent[last]
        parent[last] = change(old)

    return apply


def _set(path: Sequence[str | int], value: Any) -> Callable[[dict[str, Any]], None]:
    return _edit(path, lambda _old: value)


def _append(path: Sequence[str | int], suffix: str) -> Callable[[dict[str, Any]], None]:
    return _edit(path, lambda old: old + suffix)


_OUT_FACETS: tuple[str | int, ...] = ("outputs", 0, "facets")

# Multi-byte characters make the UTF-8 length, not the character count, cross
# each limit: "é" and "ü" are 2 bytes, "€" is 3.
BAD: dict[str, Defect] = {
    "eventTime past 9999 in UTC": Defect("eventTime", _set(["eventTime"],
                                                           "9999-12-31T23:59:59-14:00")),
    "eventTime before year 1 in UTC": Defect("eventTime", _set(["eventTime"],
                                                               "0001-01-01T00:00:00+14:00")),
    "eventTime not a date": Defect("eventTime", _set(["eventTime"], "2026-02-30T10:00:00Z")),
    "NUL in job name": Defect("job.name", _append(["job", "name"], "\u0000")),
    "NUL in dataset name": Defect("inputs[0].name", _set(["inputs", 0, "name"], "/lake/\u0000raw")),
    "NUL in facet value": Defect("outputs[0].facets", _set(
        [*_OUT_FACETS, "schema", "fields", 0, "type"], "long\u0000")),
    "NUL in facet name": Defect("run.facets", _set(["run", "facets", "spark\u0000conf"],
                                                   facet(appName="orders"))),
    "NUL in nested key": Defect("outputs[0].facets", _set(
        [*_OUT_FACETS, "columnLineage", "fields", "id\u0000"], {"inputFields": []})),
    "job namespace over 512 bytes": Defect("job.namespace", _set(["job", "namespace"],
                                                                 "ns-" + "é" * 255)),
    "dataset namespace over 512 bytes": Defect("inputs[0].namespace", _set(
        ["inputs", 0, "namespace"], "file" + "é" * 255)),
    "dataset name over 1024 bytes": Defect("outputs[0].name", _set(
        ["outputs", 0, "name"], "/lake/" + "ü" * 509 + "x")),
    "job name over 1024 bytes": Defect("job.name", _set(["job", "name"], "j" * 1025)),
    "schema field name over 256 bytes": Defect("outputs[0].facets", _set(
        [*_OUT_FACETS, "schema", "fields", 0, "name"], "c" + "€" * 85 + "x")),
    "facet name over 256 bytes": Defect("run.facets", _set(["run", "facets", "f" * 257],
                                                           facet(note="long name"))),
    "tag key over 256 bytes": Defect("outputs[0].facets", _set(
        [*_OUT_FACETS, "tags", "tags", 0, "key"], "t" * 257)),
    "runId a number": Defect("run.runId", _set(["run", "runId"], 12345)),
    "runId not a UUID": Defect("run.runId", _set(["run", "runId"], "run-12345")),
    "inputs an object": Defect("inputs", _set(["inputs"], {"namespace": "file", "name": "/x"})),
    "job name a number": Defect("job.name", _set(["job", "name"], 7)),
    "run facets an array": Defect("run.facets", _set(["run", "facets"], [])),
    "output an array item of text": Defect("outputs[0]", _set(["outputs", 0], "orders")),
    "integer over int64": Defect("run.facets", _set(["run", "facets", "stats"],
                                                    facet(rows=2**63))),
    "integer under int64": Defect("outputs[0].outputFacets", _set(
        ["outputs", 0, "outputFacets", "outputStatistics", "rowCount"], -(2**63) - 1)),
}

# Each breaks a walk over the facet that trusts its shape (iterating a number).
MALFORMED: dict[str, Callable[[dict[str, Any]], None]] = {
    "schema fields a number": _set(["inputs", 0, "facets", "schema", "fields"], 5),
    "column lineage inputFields a number": _set(
        [*_OUT_FACETS, "columnLineage", "fields", "id", "inputFields"], 7),
    "column lineage transformations a number": _set(
        [*_OUT_FACETS, "columnLineage", "fields", "id", "inputFields", 0, "transformations"], 3),
    "column lineage dataset a number": _set([*_OUT_FACETS, "columnLineage", "dataset"], 4),
    "tags a number": _set([*_OUT_FACETS, "tags", "tags"], 9),
    "symlink identifiers a number": _set([*_OUT_FACETS, "symlinks"], facet(identifiers=2)),
}


def make_bad(kind: str, base: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base`` with the defect ``kind`` of :data:`BAD`."""
    event = copy.deepcopy(base)
    BAD[kind].apply(event)
    return event


def make_malformed(kind: str, base: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base`` with the malformed facet ``kind`` of :data:`MALFORMED`."""
    event = copy.deepcopy(base)
    MALFORMED[kind](event)
    return event


def _every_limit_on_one_dataset(event: dict[str, Any]) -> None:
    # The longest node ids any index holds: namespace, name and field name at once.
    output = event["outputs"][0]
    output["namespace"] = "file" + "é" * 254
    output["name"] = "/lake/" + "ü" * 509
    output["facets"]["schema"]["fields"][1]["name"] = "c" + "€" * 85
    output["facets"]["tags"]["tags"][1]["field"] = "c" + "€" * 85


def limit_events() -> list[dict[str, Any]]:
    """Good events each sitting exactly on one limit (and the extreme event times)."""
    base = good_events([RunPlan(0, 0, 1, "COMPLETE", running=False, wide=True)])[-1]
    edits: list[Callable[[dict[str, Any]], None]] = [
        _set(["job", "namespace"], "ns-" + "é" * 254 + "x"),  # 512 bytes
        _set(["inputs", 0, "namespace"], "file" + "é" * 254),  # 512 bytes
        _set(["outputs", 0, "name"], "/lake/" + "ü" * 509),  # 1024 bytes
        _set(["job", "name"], "j" * 1024),
        _set([*_OUT_FACETS, "schema", "fields", 0, "name"], "c" + "€" * 85),  # 256 bytes
        _set(["run", "facets", "f" * 256], facet(note="longest name")),
        _set([*_OUT_FACETS, "tags", "tags", 0, "key"], "t" * 256),
        _set(["run", "facets", "stats"], facet(largest=2**63 - 1, smallest=-(2**63))),
        _set(["eventTime"], "9999-12-31T23:59:59.999999Z"),
        _set(["eventTime"], "0001-01-01T00:00:00Z"),
        _set(["eventTime"], "9999-12-31T09:59:59-14:00"),  # 23:59:59 UTC
        _every_limit_on_one_dataset,
    ]
    events = []
    for n, edit in enumerate(edits):
        event = copy.deepcopy(base)
        event["run"]["runId"] = str(uuid.uuid5(_RUN_IDS, f"limit-{n}"))
        edit(event)
        events.append(event)
    return events
