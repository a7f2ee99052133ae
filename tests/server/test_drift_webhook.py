"""``serve --drift-webhook``: drifts POSTed to a real HTTP receiver on 127.0.0.1, on
SQLite and PostgreSQL.

The receiver answers what each test scripts (503s, then 200; a 400; nothing until
released); the ingestion API never waits for it, a failed drift stays queued in the
store across a restart, and the metrics count each outcome.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.errors import ConfigError
from headwater.server.app import create_app
from headwater.server.drift_webhook import DriftWebhook, backoff, signature
from headwater.store import Store
from headwater.store import tables as t
from tests.store.builders import dataset, run_event

SECRET = "webhook-test-secret"
# Long enough for any pass of the worker on a loaded machine; the waits end as soon as
# the awaited delivery happens.
WAIT = 60.0


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 answering each POST with the next scripted status
    (200 once the script is used up); ``hold`` makes it wait before answering."""

    script: list[int] = field(default_factory=list)
    hold: threading.Event | None = None
    #: Set when a POST arrives, before it is held.
    entered: threading.Event = field(default_factory=threading.Event)
    received: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    url: str = ""

    def wait_for(self, count: int, status: int | None = 200) -> None:
        """Until ``count`` requests (answered ``status``, if given) arrived."""
        with self.arrived:
            done = self.arrived.wait_for(
                lambda: len([r for r in self.received if status in (None, r[0])]) >= count, WAIT
            )
        assert done, f"{count} deliveries awaited, got {[r[0] for r in self.received]}"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.entered.set()
            if state.hold is not None:
                state.hold.wait(WAIT)
            status = state.script.pop(0) if state.script else 200
            with state.arrived:
                state.received.append((status, dict(self.headers), body))
                state.arrived.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/drift"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    if state.hold is not None:
        state.hold.set()
    server.shutdown()
    server.server_close()


def _closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connections are refused)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hooks/drift"


def _write(run: int, second: int, fields: list[tuple[str, str]]) -> dict[str, Any]:
    return run_event(
        "COMPLETE",
        f"2024-01-01T00:00:{second:02d}Z",
        f"00000000-0000-0000-0000-{run:012d}",
        outputs=[dataset("file", "/orders", fields)],
    )


FIRST = _write(1, 1, [("id", "long"), ("amount", "double"), ("note", "string")])
REMOVED = _write(2, 2, [("id", "long"), ("amount", "double")])  # breaking
ADDED = _write(3, 3, [("id", "long"), ("amount", "double"), ("day", "string")])  # compatible


def _post(client: TestClient, *events: dict[str, Any]) -> None:
    answer = client.post("/api/v1/lineage/batch", json=list(events))
    assert answer.status_code == 200, answer.text


def _queued(store: Store) -> list[tuple[str, int]]:
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(t.drift_outbox.c.drift_key, t.drift_outbox.c.attempts).order_by(
                t.drift_outbox.c.id
            )
        )
        return [(row.drift_key, row.attempts) for row in rows]


def _metric(client: TestClient, outcome: str) -> float:
    text = client.get("/metrics").text
    line = f'headwater_drift_webhook_deliveries_total{{outcome="{outcome}"}}'
    (value,) = [row.split()[-1] for row in text.splitlines() if row.startswith(line)]
    return float(value)


def _metric_reaches(client: TestClient, outcome: str, value: float) -> bool:
    """Whether the outcome's count reaches ``value`` within the wait: the receiver
    records a request before it answers, and the worker counts the answer after."""
    import time

    deadline = time.monotonic() + WAIT
    while _metric(client, outcome) < value and time.monotonic() < deadline:
        time.sleep(0.01)
    return _metric(client, outcome) == value


def test_a_drift_is_posted_signed_with_its_impact_after_failures(
    store: Store, receiver: Receiver
) -> None:
    receiver.script = [503, 503]
    settings = Settings(drift_webhook=receiver.url, drift_webhook_secret=SECRET)
    with TestClient(create_app(settings, store)) as client:
        _post(client, FIRST, REMOVED)
        receiver.wait_for(1)
        assert [status for status, _, _ in receiver.received] == [503, 503, 200]
        assert _metric_reaches(client, "delivered", 1) and _metric(client, "retried") == 2
        drift = client.get("/api/v2/drift").json()["drifts"][0]
    _, headers, body = receiver.received[-1]
    sent = json.loads(body)
    assert sent["type"] == "headwater.drift"
    assert sent["drift"]["id"] == drift["id"] and sent["drift"]["breaking"] is True
    assert [c["path"] for c in sent["drift"]["changes"]] == ["note"]
    assert sent["drift"]["impact"]["asOf"] == drift["changedAt"]
    assert headers["X-Headwater-Event"] == "drift"
    assert headers["X-Headwater-Signature"] == signature(
        SECRET, headers["X-Headwater-Timestamp"], body
    )
    assert (
        signature("another", headers["X-Headwater-Timestamp"], body)
        != headers["X-Headwater-Signature"]
    )
    # The three attempts posted the same drift; delivered, it leaves the queue.
    assert len({b for _, _, b in receiver.received}) == 1
    assert _queued(store) == []


def test_ingest_does_not_wait_for_the_receiver(store: Store, receiver: Receiver) -> None:
    """The receiver holds its first answer until released: the ingestion POSTs that
    make the next drifts are answered meanwhile."""
    receiver.hold = threading.Event()
    with TestClient(create_app(Settings(drift_webhook=receiver.url), store)) as client:
        _post(client, FIRST, REMOVED)
        assert receiver.entered.wait(WAIT)
        # The worker is now inside a POST the receiver is holding...
        _post(client, ADDED)
        _post(client, _write(4, 4, [("id", "long")]))
        # ...and those were stored: three drifts, two still queued behind the held one.
        assert client.get("/api/v2/drift").json()["totalCount"] == 3
        receiver.hold.set()
        receiver.wait_for(3)
        assert _metric_reaches(client, "delivered", 3)
    changed = [json.loads(b)["drift"]["changes"][0]["path"] for _, _, b in receiver.received]
    assert sorted(changed) == ["amount", "day", "note"]


def test_a_drift_survives_a_receiver_down_and_a_restart(store: Store, receiver: Receiver) -> None:
    down = Settings(drift_webhook=_closed_port_url())
    with TestClient(create_app(down, store)) as client:
        _post(client, FIRST, REMOVED)
        assert client.get("/api/v2/drift").json()["totalCount"] == 1
    # The server stopped with the drift undelivered: it is still queued.
    ((key, _),) = _queued(store)
    assert key.startswith("version:")
    with TestClient(create_app(Settings(drift_webhook=receiver.url), store)):
        receiver.wait_for(1)
    assert _queued(store) == []


def test_breaking_only_skips_compatible_drifts_and_a_4xx_is_not_retried(
    store: Store, receiver: Receiver
) -> None:
    receiver.script = [400]
    settings = Settings(drift_webhook=receiver.url, drift_webhook_breaking_only=True)
    with TestClient(create_app(settings, store)) as client:
        _post(client, REMOVED, ADDED)  # day added: compatible
        _post(client, _write(4, 4, [("id", "long"), ("day", "string")]))  # amount removed
        receiver.wait_for(1, status=400)
        _post(client, _write(5, 5, [("day", "string")]))  # id removed
        receiver.wait_for(1)
        assert _metric(client, "skipped") == 1
        assert _metric(client, "rejected") == 1 and _metric(client, "retried") == 0
    paths = [
        [c["path"] for c in json.loads(b)["drift"]["changes"]] for _, _, b in receiver.received
    ]
    assert paths == [["amount"], ["id"]]
    assert _queued(store) == []


def test_a_drift_still_failing_past_the_limit_is_given_up(store: Store) -> None:
    from tests.store.builders import record

    record(store, [FIRST, REMOVED])
    hook = DriftWebhook(store, _closed_port_url(), give_up=3600.0, base_delay=0.01, max_delay=0.01)
    assert hook.deliver_due() == 1
    ((_, attempts),) = _queued(store)
    assert attempts == 1
    hook.give_up = hook.give_up * 0  # every queued drift is now past the limit
    _wait_until_due(hook)
    assert hook.deliver_due() == 1
    assert _queued(store) == []
    hook.close()


def _wait_until_due(hook: DriftWebhook) -> None:
    import time

    from headwater.store import drift_outbox

    deadline = time.monotonic() + WAIT
    while not drift_outbox.due(hook.store.engine, 1):
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_contract_drift_is_queued_once_while_it_stays_the_same(store: Store) -> None:
    from tests.store.builders import record
    from tests.store.test_contract import DECLARED, WRITTEN_DOUBLE, WRITTEN_STRING, _read
    from tests.store.test_contract import _write as write_topic

    record(
        store,
        [
            write_topic(1, 1, WRITTEN_DOUBLE),
            _read(1, 2, DECLARED),
            write_topic(2, 3, WRITTEN_STRING),
        ],
    )
    contract = [key for key, _ in _queued(store) if key.startswith("contract:")]
    assert len(contract) == 1
    with store.engine.begin() as conn:
        conn.execute(t.drift_outbox.delete())
    # The consumer runs again declaring the same schema: the same drift, nothing queued.
    record(store, [_read(2, 4, DECLARED)])
    assert _queued(store) == []


def test_backoff_doubles_up_to_the_cap_with_jitter() -> None:
    assert [backoff(n, 1.0, 600.0, draw=1.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 8.0]
    assert backoff(20, 1.0, 600.0, draw=1.0) == 600.0
    assert backoff(3, 1.0, 600.0, draw=0.0) == 2.0  # at least half the ceiling
    assert 2.0 <= backoff(3, 1.0, 600.0) <= 4.0


@pytest.mark.parametrize("url", ["ftp://example.com/x", "not a url", "http://"])
def test_a_bad_webhook_url_is_refused_at_start(url: str) -> None:
    with pytest.raises(ConfigError, match="drift_webhook"):
        Settings(drift_webhook=url)
