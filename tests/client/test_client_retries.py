"""Retries and timeouts over real sockets: the client against a uvicorn server on
127.0.0.1 whose answers a test can script (errors first, then the real app), and
against a port where nothing listens."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from headwater.client import (
    AsyncClient,
    BadRequest,
    Client,
    RateLimited,
    RequestTimeout,
    Retry,
    ServerError,
    ServerUnreachable,
)
from headwater.client.retry import RETRIABLE_STATUSES
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.server.live import free_port

pytestmark = pytest.mark.live

FAST = Retry(retries=3, backoff=0.01, max_backoff=0.05)


class Scripted:
    """An ASGI app answering each path's scripted statuses first, then passing to ``app``.

    ``/slow`` sleeps ``slow`` seconds before passing on, for timeouts.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.script: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self.hits: dict[str, int] = {}
        self.slow = 0.0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        self.hits[path] = self.hits.get(path, 0) + 1
        if path == "/api/v1/health" and self.slow:
            await asyncio.sleep(self.slow)
        planned = self.script.get(path)
        if planned:
            status, headers = planned.pop(0)
            body = b'{"error": "scripted", "field": "query.x"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        *((k.encode(), v.encode()) for k, v in headers.items()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return None
        return await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Scripted]]:
    path: Path = tmp_path_factory.mktemp("retries") / "headwater.db"
    store = Store.open(f"sqlite:///{path}", migrate=True)
    scripted = Scripted(create_app(Settings(api_key="retry-tests"), store))
    port = free_port()
    config = uvicorn.Config(
        scripted, host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uvicorn_server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", scripted
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)
        store.close()


@pytest.fixture
def scripted(server: tuple[str, Scripted]) -> Scripted:
    server[1].script.clear()
    server[1].hits.clear()
    server[1].slow = 0.0
    return server[1]


@pytest.fixture
def url(server: tuple[str, Scripted]) -> str:
    return server[0]


def _delays(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage().rsplit(" in ", 1)[1]
        for r in caplog.records
        if r.name == "headwater.client" and "retry" in r.getMessage()
    ]


@pytest.mark.parametrize("status", sorted(RETRIABLE_STATUSES))
def test_retriable_answers_are_retried_until_the_real_one(
    url: str, scripted: Scripted, status: int
) -> None:
    scripted.script["/api/v1/health"] = [(status, {}), (status, {})]
    with Client(url, retry=FAST) as client:
        assert client.health().status == "ok"
    assert scripted.hits["/api/v1/health"] == 3


def test_retry_after_is_honoured(
    url: str, scripted: Scripted, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="headwater.client")
    scripted.script["/api/v1/health"] = [(429, {"Retry-After": "0.3"}), (503, {})]
    with Client(url, retry=FAST) as client:
        client.health()
    delays = _delays(caplog)
    assert delays[0] == "0.30 s"  # what the server asked, not the backoff
    assert float(delays[1].split()[0]) <= FAST.backoff * 2  # the backoff after a bare 503


def test_a_retry_after_past_the_limit_gives_up_at_once(url: str, scripted: Scripted) -> None:
    scripted.script["/api/v1/health"] = [(429, {"Retry-After": "3600"})]
    with Client(url, retry=FAST) as client, pytest.raises(RateLimited):
        client.health()
    assert scripted.hits["/api/v1/health"] == 1


def test_other_4xx_are_never_retried(url: str, scripted: Scripted) -> None:
    scripted.script["/api/v1/health"] = [(400, {}), (400, {})]
    with Client(url, retry=FAST) as client, pytest.raises(BadRequest) as refused:
        client.health()
    assert refused.value.field == "query.x"
    assert scripted.hits["/api/v1/health"] == 1


def test_retries_run_out(url: str, scripted: Scripted) -> None:
    scripted.script["/api/v1/health"] = [(503, {})] * 5
    with Client(url, retry=Retry(retries=2, backoff=0.01)) as client:
        with pytest.raises(ServerError) as failed:
            client.health()
    assert failed.value.status_code == 503
    assert scripted.hits["/api/v1/health"] == 3


def test_a_write_that_creates_is_not_repeated_after_a_502(url: str, scripted: Scripted) -> None:
    scripted.script["/api/v2/tokens"] = [(502, {})]
    with Client(url, token="retry-tests", retry=FAST) as client:
        with pytest.raises(ServerError):
            client.create_token("once", scopes=["read"])
        assert scripted.hits["/api/v2/tokens"] == 1
        # After a 503 the server did not act on it: sent again, created once.
        scripted.script["/api/v2/tokens"] = [(503, {})]
        assert client.create_token("once", scopes=["read"]).name == "once"
        assert [t.name for t in client.tokens().tokens] == ["once"]


def test_a_slow_answer_times_out_after_the_retries(url: str, scripted: Scripted) -> None:
    scripted.slow = 1.0
    with Client(url, timeout=0.2, retry=Retry(retries=1, backoff=0.01)) as client:
        with pytest.raises(RequestTimeout):
            client.health()
    assert scripted.hits["/api/v1/health"] == 2


def test_nothing_listening_is_unreachable_after_the_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="headwater.client")
    with Client(f"http://127.0.0.1:{free_port()}", retry=FAST) as client:
        with pytest.raises(ServerUnreachable):
            client.health()
    assert len(_delays(caplog)) == FAST.retries


def test_the_async_client_retries_the_same_way(url: str, scripted: Scripted) -> None:
    scripted.script["/api/v1/health"] = [(504, {}), (429, {"Retry-After": "0"})]

    async def main() -> str:
        async with AsyncClient(url, retry=FAST) as client:
            return (await client.health()).status

    assert asyncio.run(main()) == "ok"
    assert scripted.hits["/api/v1/health"] == 3


def test_backoff_grows_with_jitter_and_reads_http_dates() -> None:
    import random

    policy = Retry(retries=5, backoff=1.0, max_backoff=4.0, random=random.Random(7))
    waits = [[policy.delay(n) for _ in range(200)] for n in (1, 2, 3, 4)]
    for ceiling, drawn in zip((1.0, 2.0, 4.0, 4.0), waits, strict=True):
        assert all(0 <= d <= ceiling for d in drawn)  # type: ignore[operator]
        assert max(drawn) > ceiling * 0.9 and min(drawn) < ceiling * 0.1  # type: ignore[operator]
    assert policy.delay(6) is None
    assert policy.delay(1, "Thu, 01 Jan 1970 00:00:00 GMT") == 0.0
    assert policy.delay(1, "2") == 2.0
