"""The emitter: batching, retries, circuit breaker, spool and replay, bounded close, never raising."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from headwater.agent.config import AgentConfig, DeliveryConfig
from headwater.agent.emitter import CircuitBreaker, Emitter, build_emitter
from headwater.transport.http import HttpConfig, HttpTransport
from headwater.transport.spool import Spool
from tests.transport.lineage_server import lineage_server

FAST = DeliveryConfig(retries=2, retry_backoff=0.01, breaker_failure_threshold=100)


def _event(i: int, **extra: Any) -> dict[str, Any]:
    return {"eventType": "COMPLETE", "run": {"runId": f"run-{i}"}, "n": i, **extra}


def _http(url: str) -> HttpTransport:
    return HttpTransport(HttpConfig.from_dict({"url": url}))


def _mock_http(handler: Any) -> HttpTransport:
    return HttpTransport(HttpConfig.from_dict({"url": "http://backend.invalid"}),
                         client=httpx.Client(transport=httpx.MockTransport(handler)))


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _spooled(directory: Path, prefix: str = "spool-") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for path in sorted(directory.glob(f"{prefix}*.jsonl")):
        events.extend(json.loads(line) for line in path.read_text().splitlines() if line)
    return events


def test_events_arrive_in_batches_at_a_real_server(tmp_path: Path) -> None:
    with lineage_server() as server:
        emitter = Emitter(_http(server.url), DeliveryConfig(batch_size=40), spool=Spool(tmp_path))
        for i in range(250):
            emitter.emit(_event(i))
        assert emitter.flush(10) is True
        emitter.close()
    assert sorted(e["n"] for e in server.events) == list(range(250))
    assert all(r.path == "/api/v1/lineage/batch" for r in server.requests)
    assert max(len(r.body) for r in server.requests) <= 40
    assert emitter.metrics.snapshot()["sent"] == 250
    assert _spooled(tmp_path) == []


def test_single_posts_for_a_backend_without_batch(tmp_path: Path) -> None:
    with lineage_server(offers_batch=False) as server:
        emitter = Emitter(_http(server.url), FAST, spool=Spool(tmp_path))
        for i in range(30):
            emitter.emit(_event(i))
        emitter.close(10)
    assert sorted(e["n"] for e in server.events) == list(range(30))
    assert {r.path for r in server.requests} == {"/api/v1/lineage"}


def test_server_errors_are_retried_until_they_pass(tmp_path: Path) -> None:
    with lineage_server() as server:
        server.fail_first = [503, 500]
        emitter = Emitter(_http(server.url), FAST, spool=Spool(tmp_path))
        for i in range(5):
            emitter.emit(_event(i))
        emitter.close(10)
    assert sorted(e["n"] for e in server.events) == list(range(5))
    assert _spooled(tmp_path) == []


def test_unreachable_backend_spools_then_next_start_delivers_everything(tmp_path: Path) -> None:
    first = Emitter(_http(_closed_port_url()), FAST, spool=Spool(tmp_path))
    for i in range(12):
        first.emit(_event(i))
    first.close(10)
    assert sorted(e["n"] for e in _spooled(tmp_path)) == list(range(12))
    assert first.metrics.snapshot()["spooled"] == 12

    with lineage_server() as server:
        second = Emitter(_http(server.url), FAST, spool=Spool(tmp_path))
        second.emit(_event(100))
        second.close(10)
    assert sorted(e["n"] for e in server.events) == [*range(12), 100]
    assert second.metrics.snapshot()["replayed"] == 12
    assert list(tmp_path.glob("spool-*")) == []  # delivered files are removed


def test_a_spool_file_is_plain_openlineage_jsonl(tmp_path: Path) -> None:
    emitter = Emitter(_http(_closed_port_url()), DeliveryConfig(retries=0), spool=Spool(tmp_path))
    emitter.emit(_event(1, nested={"a": [1, 2]}))
    emitter.close(5)
    (path,) = tmp_path.glob("spool-*.jsonl")
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        _event(1, nested={"a": [1, 2]})]


def test_circuit_breaker_stops_calling_a_failing_backend(tmp_path: Path) -> None:
    calls: list[httpx.Request] = []

    def always_down(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503)

    delivery = DeliveryConfig(retries=0, breaker_failure_threshold=2, breaker_reset_seconds=3600)
    emitter = Emitter(_mock_http(always_down), delivery, spool=Spool(tmp_path))
    for i in range(6):
        emitter.emit(_event(i))
        assert emitter.flush(5)
    emitter.close(5)
    assert len(calls) == 2  # after two failures in a row nothing more is attempted
    assert emitter.breaker.state == "open"
    assert sorted(e["n"] for e in _spooled(tmp_path)) == list(range(6))


def test_circuit_breaker_states() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=3, reset_seconds=10, clock=lambda: now[0])
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "open" and not breaker.allow()
    now[0] = 10.0
    assert breaker.state == "half-open" and breaker.allow()
    breaker.record_failure()  # the trial failed: open again for a full period
    assert breaker.state == "open"
    now[0] = 20.0
    breaker.record_success()
    assert breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "closed"  # the count restarted after the success


def test_refused_events_are_kept_apart_and_not_retried(tmp_path: Path) -> None:
    calls: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(400, json={"error": "bad event"})

    emitter = Emitter(_mock_http(refuse), FAST, spool=Spool(tmp_path))
    emitter.emit(_event(1))
    emitter.close(5)
    assert len(calls) == 1
    assert _spooled(tmp_path) == []
    assert _spooled(tmp_path, "rejected-") == [_event(1)]
    assert emitter.metrics.snapshot()["rejected"] == 1


def test_partly_refused_batch_keeps_the_good_events(tmp_path: Path) -> None:
    with lineage_server() as server:
        emitter = Emitter(_http(server.url), FAST, spool=Spool(tmp_path))
        emitter.emit(_event(1))
        emitter.emit(_event(2, reject=True))
        emitter.emit(_event(3))
        emitter.close(10)
    assert sorted(e["n"] for e in server.events) == [1, 3]
    assert _spooled(tmp_path, "rejected-") == [_event(2, reject=True)]
    assert _spooled(tmp_path) == []


def test_close_is_bounded_when_the_backend_hangs_and_nothing_is_lost(tmp_path: Path) -> None:
    release = threading.Event()
    received: list[bytes] = []

    def hang(request: httpx.Request) -> httpx.Response:
        release.wait(30)
        received.append(request.content)
        return httpx.Response(200)

    emitter = Emitter(_mock_http(hang), FAST, spool=Spool(tmp_path))
    for i in range(3):
        emitter.emit(_event(i))
    started = time.monotonic()
    emitter.close(timeout=0.3)
    elapsed = time.monotonic() - started
    release.set()
    # Generous bound: the point is that close does not wait for the hung request (30 s).
    assert elapsed < 5
    assert sorted(e["n"] for e in _spooled(tmp_path)) == [0, 1, 2]


def test_a_full_queue_spools_instead_of_blocking(tmp_path: Path) -> None:
    release = threading.Event()

    def slow(request: httpx.Request) -> httpx.Response:
        release.wait(30)
        return httpx.Response(200)

    emitter = Emitter(_mock_http(slow), DeliveryConfig(queue_size=2, batch_size=1, retries=0),
                      spool=Spool(tmp_path))
    for i in range(10):
        emitter.emit(_event(i))  # returns at once although the sender is stuck
    assert emitter.metrics.snapshot()["spooled"] >= 7
    release.set()
    emitter.close(10)
    stats = emitter.metrics.snapshot()
    # Everything spooled was replayed once the backend answered again.
    assert stats["sent"] == 10
    assert stats["replayed"] == stats["spooled"]
    assert stats["lost"] == 0
    assert list(tmp_path.glob("spool-*")) == []


def test_emit_never_raises_and_logs_a_broken_transport_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def emit(self, event: Any) -> None:
            raise AssertionError("bug in a transport")

        def emit_batch(self, events: Any) -> list[Any]:
            raise AssertionError("bug in a transport")

        def close(self, timeout: float) -> None:
            raise AssertionError("bug in close")

    with caplog.at_level(logging.WARNING, logger="headwater.agent.emitter"):
        emitter = Emitter(Broken(), FAST, spool=Spool(tmp_path))
        for i in range(5):
            emitter.emit(_event(i))
            emitter.flush(5)
        emitter.emit({"unserialisable": object()})
        emitter.close(5)
    assert sorted(e["n"] for e in _spooled(tmp_path)) == list(range(5))
    assert emitter.metrics.snapshot()["lost"] == 1
    transport_warnings = [r for r in caplog.records if "transport failed" in r.getMessage()]
    assert len(transport_warnings) == 1


def test_without_a_spool_undeliverable_events_are_counted_as_lost(tmp_path: Path) -> None:
    delivery = DeliveryConfig(retries=0, spool_enabled=False)
    emitter = Emitter(_http(_closed_port_url()), delivery, spool=None)
    emitter.emit(_event(1))
    emitter.close(5)
    assert emitter.metrics.snapshot()["lost"] == 1


def test_emit_after_close_is_spooled(tmp_path: Path) -> None:
    with lineage_server() as server:
        emitter = Emitter(_http(server.url), FAST, spool=Spool(tmp_path))
        emitter.close(5)
        emitter.close(5)  # idempotent
        emitter.emit(_event(9))
    assert server.events == []
    assert _spooled(tmp_path) == [_event(9)]


def test_build_emitter_from_config_file_transport(tmp_path: Path) -> None:
    config = AgentConfig.from_sources(
        {"spark.openlineage.transport.type": "file",
         "spark.openlineage.transport.location": str(tmp_path / "events.jsonl"),
         "spark.headwater.spool.dir": str(tmp_path / "spool")},
        {},
    )
    emitter = build_emitter(config)
    emitter.emit(_event(1))
    emitter.close(5)
    assert [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()] == [
        _event(1)]


def test_build_emitter_disabled_or_misconfigured_never_raises(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    disabled = build_emitter(AgentConfig.from_sources(
        {"spark.openlineage.transport.type": "file",
         "spark.openlineage.transport.location": str(tmp_path / "events.jsonl")},
        {"OPENLINEAGE_DISABLED": "true"}))
    disabled.emit(_event(1))
    disabled.close(1)
    assert not (tmp_path / "events.jsonl").exists()

    with caplog.at_level(logging.ERROR):
        broken = build_emitter(AgentConfig.from_sources(
            {"spark.openlineage.transport.type": "http",
             "spark.headwater.spool.dir": str(tmp_path / "spool")}, {}))
        broken.emit(_event(2))
        broken.close(1)
    assert "transport.url" in caplog.text


def test_spooled_events_are_replayed_in_the_same_run_once_the_backend_is_back(
    tmp_path: Path,
) -> None:
    up = threading.Event()
    received: list[Any] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        if not up.is_set():
            return httpx.Response(503)
        body = json.loads(request.content)
        received.extend(body if isinstance(body, list) else [body])
        return httpx.Response(200)

    emitter = Emitter(_mock_http(flaky), DeliveryConfig(retries=0), spool=Spool(tmp_path))
    for i in range(3):
        emitter.emit(_event(i))
    assert emitter.flush(5)
    assert sorted(e["n"] for e in _spooled(tmp_path)) == [0, 1, 2]
    up.set()
    emitter.emit(_event(3))
    assert emitter.flush(5)
    emitter.close(5)
    assert sorted(e["n"] for e in received) == [0, 1, 2, 3]
    assert list(tmp_path.glob("spool-*")) == []


def test_a_file_left_claimed_by_a_dead_process_is_replayed(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    (tmp_path / f"spool-1-abc.jsonl.{dead_pid}.replaying").write_text(json.dumps(_event(5)) + "\n")
    (tmp_path / f"spool-2-abc.jsonl.{os.getpid()}.replaying").write_text("{}\n")  # alive: kept
    with lineage_server() as server:
        emitter = Emitter(_http(server.url), FAST, spool=Spool(tmp_path))
        emitter.close(10)
    assert server.events == [_event(5)]
    assert [p.name for p in tmp_path.iterdir()] == [f"spool-2-abc.jsonl.{os.getpid()}.replaying"]
