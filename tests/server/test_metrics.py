"""``GET /metrics``: after good, duplicate, invalid and database-refused events, each
counter has moved by exactly what was sent, and the table counts are sampled; with
``--workers 2`` every scrape adds up both workers."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from headwater.store import Store
from tests.store.builders import dataset, run_event
from tests.server.live import running_server
from tests.store.test_concurrency import _install_failure


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def event(i: int, job: str = "job") -> dict[str, Any]:
    return run_event("COMPLETE", f"2024-01-01T00:00:{i:02d}Z",
                     f"00000000-0000-0000-0000-{i:012d}", job=job,
                     outputs=[dataset("file", f"/o/{i}")])


def test_counters_move_by_what_was_ingested(store: Store, client: TestClient) -> None:
    _install_failure(store)  # the database refuses events of job 'explode': 422
    before = scrape(client)
    assert value(before, "headwater_table_rows", table="events") == 0

    a, b, c = event(1), event(2), event(3)
    bad = [{"eventTime": "never", "producer": "p"}, {"eventTime": "nor this", "producer": "p"}]
    response = client.post("/api/v1/lineage/batch",
                           json=[a, b, a, bad[0], event(4, job="explode")])
    assert response.status_code == 200
    assert response.json()["summary"] == {"received": 5, "successful": 3, "failed": 2,
                                          "retriable": 0, "non_retriable": 2, "duplicates": 1}
    statuses = [client.post("/api/v1/lineage", json=body).status_code
                for body in (c, c, bad[1], event(5, job="explode"))]
    assert statuses == [200, 200, 400, 422]
    assert client.get("/api/v1/namespaces/nowhere").status_code == 404

    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("headwater_events_received_total") == 9
    assert moved("headwater_events_stored_total") == 5
    assert moved("headwater_events_duplicate_total") == 2
    assert moved("headwater_events_refused_total", status="400") == 2
    assert moved("headwater_events_refused_total", status="422") == 2

    batch = {"route": "/api/v1/lineage/batch", "method": "POST"}
    single = {"route": "/api/v1/lineage", "method": "POST"}
    assert moved("headwater_http_requests_total", **batch, status="200") == 1
    assert moved("headwater_http_requests_total", **single, status="200") == 2
    assert moved("headwater_http_requests_total", **single, status="400") == 1
    assert moved("headwater_http_requests_total", **single, status="422") == 1
    # A read route is labelled by its template, not the path asked for.
    assert moved("headwater_http_requests_total", route="/api/v1/namespaces/{namespace}",
                 method="GET", status="404") == 1
    assert moved("headwater_http_requests_total", route="/metrics", method="GET",
                 status="200") == 1  # the first scrape
    assert moved("headwater_http_request_duration_seconds_count", **single) == 4

    # Each stored event (a duplicate too) was in exactly one committed transaction;
    # refused ones in none.
    assert moved("headwater_store_transaction_events_sum") == 5
    transactions = moved("headwater_store_transaction_seconds_count")
    assert transactions == moved("headwater_store_transaction_events_count") >= 2
    assert moved("headwater_store_transaction_seconds_sum") > 0

    # Rows are counted at most every 30 s: this scrape still shows the first sample.
    assert value(after, "headwater_table_rows", table="events") == 0
    client.app.state.metrics.sampler.every = 0.0  # type: ignore[attr-defined]
    fresh = scrape(client)
    assert value(fresh, "headwater_table_rows", table="events") == 3  # a, b, c
    assert value(fresh, "headwater_table_rows", table="runs") == 3
    assert value(fresh, "headwater_quarantine_values") == 4  # two invalid, two refused


@pytest.mark.live
@pytest.mark.slow
def test_workers_add_up_in_every_scrape(tmp_path: Path) -> None:
    """With --workers 2 each scrape, whichever worker answers, counts both workers' events."""
    folder = tmp_path / "prometheus"
    folder.mkdir()
    events = [event(i % 60, job=f"job{i}") for i in range(120)]
    db = f"sqlite:///{tmp_path / 'workers.db'}"
    with running_server("--db", db, "--workers", "2",
                        env={"PROMETHEUS_MULTIPROC_DIR": str(folder)}) as base:
        def post(body: dict[str, Any]) -> int:
            # A connection per request, so both workers take some.
            return httpx.post(f"{base}/api/v1/lineage", json=body, timeout=60).status_code

        with ThreadPoolExecutor(8) as pool:
            assert set(pool.map(post, events)) == {200}
        for _ in range(6):
            text = httpx.get(f"{base}/metrics", timeout=60).text
            samples = {s.name: s.value for f in text_string_to_metric_families(text)
                       for s in f.samples if not s.labels}
            assert samples["headwater_events_received_total"] == len(events)
            assert samples["headwater_events_stored_total"] == len(events)
        # Each worker's own files, read alone: both served part of the events.
        per_worker = []
        for pid in {p.stem.rsplit("_", 1)[1] for p in folder.glob("counter_*.db")}:
            alone = tmp_path / f"worker-{pid}"
            alone.mkdir()
            for path in folder.glob(f"*_{pid}.db"):
                shutil.copy(path, alone / path.name)
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=str(alone))
            per_worker.append(registry.get_sample_value("headwater_events_received_total") or 0)
    assert sum(per_worker) == len(events)
    assert len([n for n in per_worker if n]) == 2, per_worker
