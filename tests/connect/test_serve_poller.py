"""``serve --connect-url``: the server polls the real Connect worker on a thread
and stores what it sees through its own ingest path (in-process app, real
SQLite store); the state file carries the runs across app restarts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.connect.helpers import delete, put, running, unique, wait_state

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _job(
    client: TestClient, namespace: str, name: str, check: Any, timeout: float = 30
) -> dict[str, Any]:
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/jobs/{quote(name, safe='')}"
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        answer = client.get(path)
        if answer.status_code == 200:
            body = answer.json()
            if check(body):
                return body
        time.sleep(0.2)
    raise AssertionError(f"job {name} never reached the expected state: {body}")


def test_serve_polls_connect_into_its_store(connect_worker, kafka_bootstrap, tmp_path: Path):
    url = connect_worker.url
    name, topic = unique("served"), unique("served-topic")
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    put(url, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic})
    wait_state(url, name, running)
    settings = Settings(
        connect_url=url,
        connect_bootstrap_servers=kafka_bootstrap,
        connect_namespace="connect-test",
        connect_interval=0.3,
        connect_state=tmp_path / "connect-state.json",
    )
    store = Store.open(f"sqlite:///{tmp_path / 'lineage.db'}", migrate=True)
    try:
        with TestClient(create_app(settings, store)) as client:
            job = _job(
                client,
                "connect-test",
                name,
                lambda j: (j.get("latestRun") or {}).get("state") == "RUNNING",
            )
            run_id = job["latestRun"]["id"]
            assert {(d["namespace"], d["name"]) for d in job["inputs"]} == {("file", str(source))}
            assert {(d["namespace"], d["name"]) for d in job["outputs"]} == {
                (f"kafka://{kafka_bootstrap}", topic)
            }
        # A restarted server continues the same run and ends it when the connector goes.
        delete(url, name)
        with TestClient(create_app(settings, store)) as client:
            job = _job(
                client,
                "connect-test",
                name,
                lambda j: (j.get("latestRun") or {}).get("state") == "COMPLETED",
            )
            assert job["latestRun"]["id"] == run_id
            # The COMPLETE of a deleted connector keeps the datasets its run had.
            assert {(d["namespace"], d["name"]) for d in job["inputs"]} == {("file", str(source))}
            graph = client.get("/api/v1/lineage", params={"nodeId": f"dataset:file:{source}"})
            assert f"job:connect-test:{name}" in {n["id"] for n in graph.json()["graph"]}
            runs = client.get(f"/api/v1/namespaces/connect-test/jobs/{name}/runs").json()["runs"]
            assert [r["id"] for r in runs] == [run_id]
    finally:
        store.close()


def test_connect_url_needs_one_worker():
    with pytest.raises(Exception, match="one worker"):
        Settings(connect_url="http://connect:8083", workers=2)
