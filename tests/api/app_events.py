"""OpenLineage events of Spark-application-shaped runs: one parent run, child runs per action.

The shape the headwater agent (and the OpenLineage Spark listener) emits::

    job etl_app          run APP_1 (09:00-09:50 COMPLETE)
      job etl_app.load   run LOAD_1  (09:05-09:10 COMPLETE)  raw.orders -> silver.orders
      job etl_app.build  run BUILD_1 (09:15-09:20 FAIL)      silver.orders -> gold.sales
    job etl_app          run APP_2 (10:00-10:30 COMPLETE)
      job etl_app.load   run LOAD_2  (10:05-10:12 COMPLETE)  raw.orders -> silver.orders
    job lonely           run ORPHAN  (11:00-11:01 COMPLETE)  parent run REMOTE of job
                                                             remote_app, whose own events
                                                             never arrive

Each child run carries a ``parent`` run facet naming its parent run and job.
"""

from __future__ import annotations

from typing import Any

NS = "apps"
PRODUCER = "https://github.com/headwater/headwater/tests/api"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
DAY = "2026-04-01"

APP_1 = "00000000-0000-4000-8000-0000000000a1"
APP_2 = "00000000-0000-4000-8000-0000000000a2"
LOAD_1 = "00000000-0000-4000-8000-0000000000b1"
BUILD_1 = "00000000-0000-4000-8000-0000000000b2"
LOAD_2 = "00000000-0000-4000-8000-0000000000b3"
ORPHAN = "00000000-0000-4000-8000-0000000000c1"
REMOTE = "00000000-0000-4000-8000-0000000000c9"


def _parent(run_id: str, job: str) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json",
        "run": {"runId": run_id},
        "job": {"namespace": NS, "name": job},
    }


def _run(
    run_id: str,
    job: str,
    start: str,
    end: str,
    final: str = "COMPLETE",
    parent: tuple[str, str] | None = None,
    inputs: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    facets = {"parent": _parent(*parent)} if parent else {}
    base = {
        "run": {"runId": run_id, "facets": facets},
        "job": {"namespace": NS, "name": job, "facets": {}},
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "inputs": [{"namespace": NS, "name": name} for name in inputs],
        "outputs": [{"namespace": NS, "name": name} for name in outputs],
    }
    return [
        {**base, "eventType": "START", "eventTime": f"{DAY}T{start}:00Z"},
        {**base, "eventType": final, "eventTime": f"{DAY}T{end}:00Z"},
    ]


def events() -> list[dict[str, Any]]:
    """Every event above, in time order."""
    return [
        *_run(APP_1, "etl_app", "09:00", "09:50"),
        *_run(LOAD_1, "etl_app.load", "09:05", "09:10", parent=(APP_1, "etl_app"),
              inputs=("raw.orders",), outputs=("silver.orders",)),
        *_run(BUILD_1, "etl_app.build", "09:15", "09:20", final="FAIL",
              parent=(APP_1, "etl_app"), inputs=("silver.orders",), outputs=("gold.sales",)),
        *_run(APP_2, "etl_app", "10:00", "10:30"),
        *_run(LOAD_2, "etl_app.load", "10:05", "10:12", parent=(APP_2, "etl_app"),
              inputs=("raw.orders",), outputs=("silver.orders",)),
        *_run(ORPHAN, "lonely", "11:00", "11:01", parent=(REMOTE, "remote_app")),
    ]
