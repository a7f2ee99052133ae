"""The watcher's run model on a scripted Connect REST API (httpx.MockTransport):
states the test worker does not reach on demand (STOPPED, a connector-level
failure, a restarted failed task), run ids without a state file, pending
events sent again byte for byte, and an unreadable API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from headwater.connect import ConnectClient, ConnectUnavailable, ConnectWatcher
from headwater.connect.events import run_id_for
from tests.agent.spec import validate_event

URL = "http://connect.example.com:8083"


class FakeConnect:
    """A Connect REST API whose connectors the test sets."""

    def __init__(self) -> None:
        self.connectors: dict[str, dict[str, Any]] = {}
        self.down = False

    def set(
        self,
        name: str,
        state: str,
        tasks: list[tuple[str, str | None]],
        config: dict[str, str] | None = None,
        trace: str | None = None,
    ) -> None:
        self.connectors[name] = {
            "info": {
                "name": name,
                "type": "sink",
                "config": {
                    "connector.class": "FileStreamSink",
                    "topics": "t",
                    "file": "/out/x",
                    **(config or {}),
                },
            },
            "status": {
                "name": name,
                "connector": {
                    "state": state,
                    "worker_id": "w:8083",
                    **({"trace": trace} if trace else {}),
                },
                "tasks": [
                    {"id": i, "state": s, "worker_id": "w:8083", **({"trace": t} if t else {})}
                    for i, (s, t) in enumerate(tasks)
                ],
                "type": "sink",
            },
        }

    def handler(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            return httpx.Response(500, json={"error_code": 500})
        if request.url.path == "/":
            return httpx.Response(200, json={"version": "4.1.1", "kafka_cluster_id": "abc"})
        if request.url.path == "/connectors":
            return httpx.Response(200, json=self.connectors)
        name = request.url.path.split("/")[2]
        return httpx.Response(200, json={name: {"topics": []}})


def _watcher(
    fake: FakeConnect, sent: list[dict[str, Any]] | Any, state: Path | None, **kwargs: Any
) -> ConnectWatcher:
    client = ConnectClient(URL, client=httpx.Client(transport=httpx.MockTransport(fake.handler)))
    emit = sent.extend if isinstance(sent, list) else sent
    return ConnectWatcher(
        client, emit, bootstrap_servers="b:9092", state_path=state, list_topics=None, **kwargs
    )


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["eventType"] for e in events]


def test_stopped_is_running_with_the_state_and_a_restarted_failure_is_a_new_run(tmp_path):
    fake, sent = FakeConnect(), []
    watcher = _watcher(fake, sent, tmp_path / "s.json")
    fake.set("c", "RUNNING", [("RUNNING", None)])
    watcher.poll()
    fake.set("c", "STOPPED", [])
    watcher.poll()
    assert sent[-1]["eventType"] == "RUNNING"
    assert sent[-1]["run"]["facets"]["kafkaConnect"]["stopped"] is True
    fake.set("c", "RUNNING", [("FAILED", "java.lang.IllegalStateException: boom\n\tat x")])
    watcher.poll()
    fake.set("c", "RUNNING", [("RUNNING", None)])  # the task restarted
    watcher.poll()
    assert _types(sent) == ["START", "RUNNING", "FAIL", "START"]
    assert sent[2]["run"]["facets"]["errorMessage"]["message"] == (
        "java.lang.IllegalStateException: boom"
    )
    first, second = sent[0]["run"]["runId"], sent[3]["run"]["runId"]
    assert first == run_id_for("kafka-connect://connect.example.com:8083", "c", 0)
    assert second == run_id_for("kafka-connect://connect.example.com:8083", "c", 1)
    for event in sent:
        validate_event(event)


def test_a_connector_level_failure_uses_the_connectors_trace():
    fake, sent = FakeConnect(), []
    fake.set(
        "c", "FAILED", [], trace="org.apache.kafka.connect.errors.ConnectException: bad config"
    )
    _watcher(fake, sent, None, namespace="connect-prod").poll()
    assert _types(sent) == ["START", "FAIL"]
    assert sent[1]["job"] == {**sent[1]["job"], "namespace": "connect-prod", "name": "c"}
    assert "bad config" in sent[1]["run"]["facets"]["errorMessage"]["message"]


def test_run_ids_need_no_state_file():
    fake = FakeConnect()
    fake.set("c", "RUNNING", [("RUNNING", None)])
    one: list[dict[str, Any]] = []
    two: list[dict[str, Any]] = []
    _watcher(fake, one, None).poll()
    _watcher(fake, two, None).poll()
    assert one[0]["run"]["runId"] == two[0]["run"]["runId"]


def test_pending_events_are_sent_again_unchanged_after_a_failed_delivery(tmp_path):
    fake = FakeConnect()
    fake.set("c", "RUNNING", [("RUNNING", None)])
    state = tmp_path / "s.json"

    def refuse(events: list[dict[str, Any]]) -> None:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        _watcher(fake, refuse, state).poll()
    pending = json.loads(state.read_text())["pending"]
    assert _types(pending) == ["START"]
    sent: list[dict[str, Any]] = []
    _watcher(fake, sent, state).poll()
    assert sent == pending  # the same bytes: the server stores it once
    assert json.loads(state.read_text())["pending"] == []
    _watcher(fake, sent, state).poll()
    assert len(sent) == 1


def test_an_unreadable_api_raises_and_sends_nothing(tmp_path):
    fake, sent = FakeConnect(), []
    fake.down = True
    with pytest.raises(ConnectUnavailable):
        _watcher(fake, sent, tmp_path / "s.json").poll()
    assert sent == []


def test_a_state_file_that_is_not_one_is_refused(tmp_path):
    state = tmp_path / "s.json"
    state.write_text("[1, 2]")
    with pytest.raises(Exception, match="not a headwater connect state file"):
        _watcher(FakeConnect(), [], state)


def test_heartbeat_repeats_running_for_a_silent_live_run_only(tmp_path):
    from datetime import UTC, datetime, timedelta

    fake, sent = FakeConnect(), []
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    watcher = _watcher(fake, sent, tmp_path / "s.json", heartbeat=600, clock=lambda: now[0])
    fake.set("c", "RUNNING", [("RUNNING", None)])
    watcher.poll()
    now[0] += timedelta(seconds=599)
    watcher.poll()
    now[0] += timedelta(seconds=1)
    watcher.poll()
    assert _types(sent) == ["START", "RUNNING"]
    assert sent[1]["eventTime"] == "2026-01-01T00:10:00.000Z"
    assert sent[1]["run"]["runId"] == sent[0]["run"]["runId"]
    # A restarted watcher knows when the run last spoke.
    now[0] += timedelta(seconds=300)
    _watcher(fake, sent, tmp_path / "s.json", heartbeat=600, clock=lambda: now[0]).poll()
    assert len(sent) == 2
    fake.set("c", "RUNNING", [("FAILED", "boom")])
    watcher = _watcher(fake, sent, tmp_path / "s.json", heartbeat=600, clock=lambda: now[0])
    watcher.poll()
    now[0] += timedelta(hours=1)
    watcher.poll()  # an ended run has no heartbeat
    assert _types(sent) == ["START", "RUNNING", "FAIL"]
