"""The graph benchmark's bulk loader (``benchmarks/bulk_load.py``) against the write path.

The scale-10 figures are measured on a store the loader fills directly, so the
loader must store what ``Store.record`` stores for the same synthetic events: the
same rows in every table (``tests/store/dump.py``: natural keys, derived columns,
times and payloads) and the same answers to the benchmark's reads -- v2 table and
column lineage, node pages and lists -- over HTTP. A small graph (scale 0.01, two
runs per job), with the raw log kept whole here so the log compares too.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.events import parse_event
from headwater.server.app import create_app
from headwater.store import Store
from tests.store.dump import dump
from tests.support.pgcluster import PgCluster

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bulk_load  # noqa: E402
import synthetic  # noqa: E402

SCALE, RUNS = 0.01, 2


@pytest.fixture(scope="module")
def graph() -> synthetic.SyntheticGraph:
    return synthetic.build_graph(SCALE, runs_per_job=RUNS)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    """Two empty migrated stores on one database kind: (write path, bulk loader)."""
    if request.param == "sqlite":
        urls = [f"sqlite:///{tmp_path / name}.db" for name in ("recorded", "loaded")]
    else:
        request.getfixturevalue("pg_url")  # skips or fails as every PostgreSQL test does
        cluster: PgCluster | None = request.getfixturevalue("pg_cluster")
        if cluster is None:
            pytest.skip("needs the throwaway cluster (two databases)")
        urls = [cluster.create_database(f"bulk_{uuid.uuid4().hex[:10]}") for _ in range(2)]
    stores = [Store.open(url, migrate=True) for url in urls]
    try:
        yield stores[0], stores[1]
    finally:
        for store in stores:
            store.close()


def _answers(store: Store, graph: synthetic.SyntheticGraph) -> dict[str, Any]:
    ns = synthetic.NAMESPACE
    top = [o for job in graph.jobs if job.layer >= synthetic.LAYERS - 3 for o in job.outputs]
    low = [o for job in graph.jobs if job.layer <= 3 for o in job.outputs]
    job = graph.jobs[len(graph.jobs) // 2].name
    asks: dict[str, tuple[str, dict[str, Any]]] = {
        "up": (
            "/api/v2/lineage",
            {
                "nodeId": f"dataset:{ns}:{top[0]}",
                "direction": "upstream",
                "depth": 10,
                "maxNodes": 1000,
            },
        ),
        "down": (
            "/api/v2/lineage",
            {
                "nodeId": f"dataset:{ns}:{low[0]}",
                "direction": "downstream",
                "depth": 10,
                "maxNodes": 1000,
            },
        ),
        "down-cut": (
            "/api/v2/lineage",
            {
                "nodeId": f"dataset:{ns}:{low[1]}",
                "direction": "downstream",
                "depth": 10,
                "maxNodes": 20,
            },
        ),
        "column": (
            "/api/v2/lineage",
            {
                "nodeId": f"datasetField:{ns}:{top[1]}:c03",
                "direction": "upstream",
                "depth": 10,
                "maxNodes": 1000,
            },
        ),
        "dataset": (f"/api/v1/namespaces/{ns}/datasets/{top[2]}", {}),
        "raw dataset": (f"/api/v1/namespaces/{ns}/datasets/{graph.jobs[0].inputs[0]}", {}),
        "versions": (f"/api/v1/namespaces/{ns}/datasets/{top[2]}/versions", {"limit": 5}),
        "job": (f"/api/v1/namespaces/{ns}/jobs/{job}", {}),
        "runs": (f"/api/v1/namespaces/{ns}/jobs/{job}/runs", {"limit": 5}),
        "datasets": (f"/api/v1/namespaces/{ns}/datasets", {"limit": 50, "offset": 300}),
        "jobs": (f"/api/v1/namespaces/{ns}/jobs", {"limit": 50, "offset": 200}),
    }
    out = {}
    with TestClient(create_app(Settings(), store)) as client:
        for name, (path, params) in asks.items():
            response = client.get(path, params=params)
            assert response.status_code == 200, (name, response.text)
            out[name] = response.json()
    return out


def test_bulk_load_stores_what_the_write_path_stores(
    two_stores: tuple[Store, Store], graph: synthetic.SyntheticGraph
) -> None:
    recorded, loaded = two_stores
    events = list(synthetic.events(graph))
    for start in range(0, len(events), 500):
        recorded.record([parse_event(e) for e in events[start : start + 500]])
    report = bulk_load.load(loaded.engine, graph, sample_every=1)
    assert report.rows["column_lineage"] == graph.column_edges
    assert report.sampled_events == len(events)

    want, got = dump(recorded), dump(loaded)
    differing = [table for table in want if want[table] != got[table]]
    assert not differing, {table: (len(want[table]), len(got[table])) for table in differing}
    answers = _answers(recorded, graph)
    assert answers["up"]["nodes"] and answers["column"]["nodes"]
    assert answers["down-cut"]["truncatedNodes"]
    assert _answers(loaded, graph) == answers

    # The loaded store takes events afterwards: ids continue past the loaded rows.
    job = graph.jobs[0]
    extra = {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-01T00:00:00Z",
        "run": {"runId": str(uuid.UUID(int=1, version=4))},
        "job": {"namespace": synthetic.NAMESPACE, "name": job.name},
        "inputs": [{"namespace": synthetic.NAMESPACE, "name": job.inputs[0]}],
        "outputs": [{"namespace": synthetic.NAMESPACE, "name": "new.output"}],
        "producer": synthetic.PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/x",
    }
    for store in (recorded, loaded):
        store.record([parse_event(extra)])
    assert dump(loaded) == dump(recorded)


def test_sampled_raw_log_keeps_every_run_of_a_sampled_job(tmp_path: Path) -> None:
    graph = synthetic.build_graph(SCALE, runs_per_job=2)
    with Store.open(f"sqlite:///{tmp_path / 'sampled.db'}", migrate=True) as store:
        report = bulk_load.load(store.engine, graph, sample_every=10)
        jobs = {job.name for job in graph.jobs[::10]}
        assert report.sampled_events == len(jobs) * 2 * 2
        with store.engine.connect() as conn:
            logged = {
                row.job_name for row in conn.exec_driver_sql("SELECT DISTINCT job_name FROM events")
            }
        assert logged == jobs
        assert report.rows["runs"] == len(graph.jobs) * 2
