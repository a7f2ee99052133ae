"""OpenLineage events that build the hand-built retail graph of ``tests/graph/retail.py``.

Two days of runs, with one change between them so that "as of" and run-level
lineage have something to tell apart:

- day 1: every job runs once; ``build_revenue`` reads only ``silver.orders``;
- day 2: every job runs again; ``build_revenue`` now also reads ``raw.products``
  (a new job version). So *as of day 1* ``raw.products`` is not upstream of
  ``gold.revenue``; *now* it is.

Every output carries a ``schema`` facet and a ``columnLineage`` facet with the
column edges of ``tests/graph/retail.py`` (day-2 runs only for the products edge).
Run ids are fixed so tests can name them.
"""

from __future__ import annotations

from typing import Any

from tests.graph.retail import COLUMN_EDGES, FIELDS, JOBS, NS, ds

PRODUCER = "https://github.com/headwater/headwater/tests/api"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"

# Order in which the jobs run each day (each job after its inputs' producers).
ORDER = ["clean_orders", "clean_customers", "build_revenue", "build_ltv", "publish"]
DAY_1 = "2026-03-01"
DAY_2 = "2026-03-02"

ALL_FIELDS: dict[str, list[str]] = {
    **{name: fields for name, fields in ((k.split(":", 2)[2], v) for k, v in FIELDS.items())},
    "raw.customers": ["customer_id", "name"],
    "silver.customers": ["customer_id"],
}


def run_id(job: str, day: int) -> str:
    """A fixed UUID per (job, day)."""
    index = ORDER.index(job) + 1
    return f"00000000-0000-4000-8000-{day:04d}{index:08d}"


def _inputs(job: str, day: int) -> list[str]:
    inputs, _ = JOBS[job]
    if job == "build_revenue" and day == 1:
        return ["silver.orders"]
    return list(inputs)


def _facet(kind: str, **body: Any) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-1/{kind}.json",
        **body,
    }


def _output(job: str, name: str, day: int) -> dict[str, Any]:
    reads = {ds(i) for i in _inputs(job, day)}
    lineage: dict[str, Any] = {}
    for edge in COLUMN_EDGES:
        up_ns_name, up_field = edge.upstream.rsplit(":", 1)
        down_ns_name, down_field = edge.downstream.rsplit(":", 1)
        up_dataset = up_ns_name.split(":", 2)[2]
        down_dataset = down_ns_name.split(":", 2)[2]
        if down_dataset != name or ds(up_dataset) not in reads:
            continue
        entry = lineage.setdefault(down_field, {"inputFields": []})
        entry["inputFields"].append(
            {
                "namespace": NS,
                "name": up_dataset,
                "field": up_field,
                "transformations": [
                    {"type": "DIRECT", "subtype": tr.type, "description": f"{tr.type.lower()}"}
                    for tr in edge.transformations
                ],
            }
        )
    facets: dict[str, Any] = {
        "schema": _facet(
            "SchemaDatasetFacet",
            fields=[{"name": f, "type": "string"} for f in ALL_FIELDS.get(name, [])],
        )
    }
    if lineage:
        facets["columnLineage"] = _facet("ColumnLineageDatasetFacet", fields=lineage)
    return {"namespace": NS, "name": name, "facets": facets}


def _input(name: str) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if name.startswith("raw."):
        facets["schema"] = _facet(
            "SchemaDatasetFacet",
            fields=[{"name": f, "type": "string"} for f in ALL_FIELDS.get(name, [])],
        )
    return {"namespace": NS, "name": name, "facets": facets}


def events() -> list[dict[str, Any]]:
    """START and COMPLETE of every job on both days, in time order."""
    out: list[dict[str, Any]] = []
    for day, date in ((1, DAY_1), (2, DAY_2)):
        for index, job in enumerate(ORDER):
            _, outputs = JOBS[job]
            base = {
                "run": {"runId": run_id(job, day), "facets": {}},
                "job": {"namespace": NS, "name": job, "facets": {}},
                "producer": PRODUCER,
                "schemaURL": SCHEMA_URL,
            }
            inputs = [_input(i) for i in _inputs(job, day)]
            out.append(
                {
                    **base,
                    "eventType": "START",
                    "eventTime": f"{date}T{10 + index:02d}:00:00Z",
                    "inputs": inputs,
                    "outputs": [{"namespace": NS, "name": o} for o in outputs],
                }
            )
            out.append(
                {
                    **base,
                    "eventType": "COMPLETE",
                    "eventTime": f"{date}T{10 + index:02d}:30:00Z",
                    "inputs": inputs,
                    "outputs": [_output(job, o, day) for o in outputs],
                }
            )
    return out
