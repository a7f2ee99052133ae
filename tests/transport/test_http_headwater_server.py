"""Agent -> headwater server end to end with no network: the HTTP transport and the emitter
drive an in-process ``create_app`` through FastAPI's TestClient (a real httpx.Client)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.agent.config import DeliveryConfig
from headwater.agent.emitter import Emitter
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.transport.http import HttpConfig, HttpTransport
from headwater.transport.spool import Spool


def run_event(job: str, state: str = "COMPLETE", run_id: str | None = None) -> dict[str, Any]:
    return {
        "eventType": state,
        "eventTime": "2026-01-02T03:04:05.000Z",
        "producer": "https://example.com/headwater-tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id or str(uuid.uuid4())},
        "job": {"namespace": "transport-tests", "name": job},
        "inputs": [],
        "outputs": [{"namespace": "file", "name": f"/data/{job}"}],
    }


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'headwater.db'}", api_key="secret-key")
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def _transport(client: TestClient, api_key: str | None = "secret-key") -> HttpTransport:
    config: dict[str, Any] = {"url": "http://testserver", "compression": "gzip"}
    if api_key:
        config["auth"] = {"type": "api_key", "apiKey": api_key}
    return HttpTransport(HttpConfig.from_dict(config), client=client)


def _job_names(client: TestClient) -> set[str]:
    # The server has an API key, so reads need it too.
    response = client.get("/api/v1/namespaces/transport-tests/jobs",
                          headers={"Authorization": "Bearer secret-key"})
    assert response.status_code == 200, response.text
    return {job["name"] for job in response.json()["jobs"]}


def test_batches_reach_the_headwater_batch_endpoint(client: TestClient) -> None:
    transport = _transport(client)
    failures = transport.emit_batch([run_event(f"job_{i}") for i in range(3)])
    assert failures == []
    assert transport.batch_supported is True
    assert _job_names(client) == {"job_0", "job_1", "job_2"}


def test_a_partly_bad_batch_reports_only_the_bad_event(client: TestClient) -> None:
    bad = run_event("bad")
    bad["run"]["runId"] = "not-a-uuid"
    failures = _transport(client).emit_batch([run_event("good"), bad])
    assert [(f.index, f.retriable) for f in failures] == [(1, False)]
    assert _job_names(client) == {"good"}


def test_emitter_delivers_to_the_server_and_a_wrong_key_is_refused_not_retried(
    client: TestClient, tmp_path: Path
) -> None:
    emitter = Emitter(_transport(client), DeliveryConfig(retries=1, retry_backoff=0.01),
                      spool=Spool(tmp_path / "spool"))
    run_id = str(uuid.uuid4())
    emitter.emit(run_event("nightly", "START", run_id))
    emitter.emit(run_event("nightly", "COMPLETE", run_id))
    emitter.close(10)
    assert emitter.metrics.snapshot()["sent"] == 2
    assert _job_names(client) == {"nightly"}

    refused = Emitter(_transport(client, api_key="wrong"), DeliveryConfig(retries=3),
                      spool=Spool(tmp_path / "spool"))
    refused.emit(run_event("intruder"))
    refused.close(10)
    stats = refused.metrics.snapshot()
    assert (stats["rejected"], stats["spooled"]) == (1, 0)
    assert "intruder" not in _job_names(client)


def test_events_the_server_refuses_are_set_aside_and_their_neighbours_delivered(
    client: TestClient, tmp_path: Path
) -> None:
    poisoned = run_event("poisoned")
    poisoned["job"]["facets"] = {"note": {"text": "a NUL \x00 no database stores"}}
    too_long = run_event("x" * 2000)
    spool = Spool(tmp_path / "spool")
    emitter = Emitter(_transport(client), DeliveryConfig(retries=3, retry_backoff=0.01,
                                                         batch_size=100), spool=spool)
    for i in range(40):
        emitter.emit(run_event(f"good_{i}"))
        if i == 20:
            emitter.emit(poisoned)
            emitter.emit(too_long)
    emitter.close(10)
    stats = emitter.metrics.snapshot()
    assert (stats["sent"], stats["rejected"], stats["spooled"]) == (40, 2, 0)
    assert _job_names(client) == {f"good_{i}" for i in range(40)}
    rejected = [line for path in (tmp_path / "spool").glob("rejected-*.jsonl")
                for line in path.read_text().splitlines()]
    assert len(rejected) == 2 and any("poisoned" in line for line in rejected)
    # The server kept its own copy of each, with the reason.
    kept = client.get("/api/v2/quarantine",
                      headers={"Authorization": "Bearer secret-key"}).json()
    assert kept["totalCount"] == 2
    assert {e["field"] for e in kept["events"]} == {"job.facets.note.text", "job.name"}
