"""``headwater serve --workers 2``: two server processes share the port and the store."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.server.live import running_server

pytestmark = [pytest.mark.live, pytest.mark.slow]

PRODUCER = "https://github.com/headwater/headwater/tests/live-workers"


def _event(job: int, run: str, state: str, second: int) -> dict[str, object]:
    return {
        "eventType": state,
        "eventTime": f"2026-11-22T10:{second // 60:02d}:{second % 60:02d}Z",
        "producer": PRODUCER,
        "run": {"runId": run},
        "job": {"namespace": "workers", "name": f"job_{job}"},
        "inputs": [{"namespace": "file", "name": f"/lake/in_{job}"}],
        "outputs": [{"namespace": "file", "name": f"/lake/out_{job}"}],
    }


def test_two_workers_store_every_event_once(tmp_path: Path) -> None:
    runs = [str(uuid.uuid4()) for _ in range(60)]
    singles = [_event(i % 6, run, "START", i) for i, run in enumerate(runs)]
    batches = [[_event(i % 6, run, "COMPLETE", 100 + i) for i, run in enumerate(runs)][k::3]
               for k in range(3)]
    db = f"sqlite:///{tmp_path / 'workers.db'}"
    with running_server("--db", db, "--workers", "2") as base:
        with httpx.Client(base_url=base, timeout=60) as client:
            def post_single(event: dict[str, object]) -> bool:
                response = client.post("/api/v1/lineage", json=event)
                assert response.status_code == 200, response.text
                return bool(response.json()["duplicate"])

            def post_batch(batch: list[dict[str, object]]) -> int:
                response = client.post("/api/v1/lineage/batch", json=batch)
                assert response.status_code == 200, response.text
                return int(response.json()["summary"]["successful"])

            with ThreadPoolExecutor(8) as pool:
                duplicates = list(pool.map(post_single, singles + singles[:10]))
                stored = list(pool.map(post_batch, batches))
            assert duplicates.count(True) == 10
            assert sum(stored) == len(runs)

            jobs = client.get("/api/v1/namespaces/workers/jobs").json()
            assert jobs["totalCount"] == 6
            states = []
            for job in range(6):
                listed = client.get(f"/api/v1/namespaces/workers/jobs/job_{job}/runs",
                                    params={"limit": 100}).json()
                states += [run["state"] for run in listed["runs"]]
            assert sorted(states) == ["COMPLETED"] * len(runs)
            lineage = client.get("/api/v1/lineage",
                                 params={"nodeId": "dataset:file:/lake/out_3", "depth": 2}).json()
            ids = {node["id"] for node in lineage["graph"]}
            assert {"dataset:file:/lake/out_3", "job:workers:job_3",
                    "dataset:file:/lake/in_3"} <= ids
    assert (tmp_path / "workers.db-writelock").exists()
