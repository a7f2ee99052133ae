""":class:`Client` (blocking) and :class:`AsyncClient` (asyncio) over httpx.

Both take the same arguments, have the same methods (listed once, in
:mod:`headwater.client.surface`) and share everything about a request but the
sending (:mod:`headwater.client.session`)::

    with Client("http://127.0.0.1:5000", token="...") as client:
        graph = client.upstream("dataset:file:/data/gold/revenue", depth=3)

    async with AsyncClient("http://127.0.0.1:5000") as client:
        graph = await client.upstream("dataset:file:/data/gold/revenue", depth=3)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from headwater.client.call import Call
from headwater.client.retry import Retry
from headwater.client.session import DEFAULT_URL, Session, next_page
from headwater.client.surface import AsyncOperations, SyncOperations

__all__ = ["AsyncClient", "Client"]

T = TypeVar("T")


def _session(url: str, token: str | None, retry: Retry | None, strict: bool) -> Session:
    return Session(url.rstrip("/"), token or None, retry or Retry(), strict)


class Client(SyncOperations):
    """A blocking client of one headwater server.

    ``token`` is sent as ``Authorization: Bearer``; ``timeout`` bounds each
    attempt (seconds); ``retry`` says what is sent again (:class:`Retry`);
    ``strict`` refuses answers with fields the models do not know (for tests).
    ``http`` is an ``httpx.Client`` to send through (a FastAPI ``TestClient``
    for an in-process app); the client closes only one it made itself.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        retry: Retry | None = None,
        strict: bool = False,
        http: httpx.Client | None = None,
    ) -> None:
        self.session = _session(url, token, retry, strict)
        self._owns_http = http is None
        self.http = http if http is not None else httpx.Client(timeout=timeout)

    def send(self, call: Call[T]) -> T:
        """Send ``call`` (retrying as :class:`Retry` says) and read its answer."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.http.request(**self.session.request(call))
            except httpx.HTTPError as exc:
                delay = self.session.after_failure(call, exc, attempt)
            else:
                result, wait = self.session.after_answer(call, response, attempt)
                if wait is None:
                    return result  # type: ignore[return-value]  # None only for Call[None]
                delay = wait
            time.sleep(delay)

    def iterate(self, call: Call[Any]) -> Iterator[Any]:
        """Every item of a paging list, from ``call``'s page on."""
        page_call: Call[Any] | None = call
        while page_call is not None:
            page = self.send(page_call)
            yield from page.items
            page_call = next_page(page_call, page)

    def close(self) -> None:
        if self._owns_http:
            self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncClient(AsyncOperations):
    """:class:`Client` for asyncio: the same arguments and methods, each awaited.

    ``http`` is an ``httpx.AsyncClient`` (one over ``httpx.ASGITransport`` for an
    in-process app).
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        timeout: float = 30.0,
        retry: Retry | None = None,
        strict: bool = False,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.session = _session(url, token, retry, strict)
        self._owns_http = http is None
        self.http = http if http is not None else httpx.AsyncClient(timeout=timeout)

    async def send(self, call: Call[T]) -> T:
        """Send ``call`` (retrying as :class:`Retry` says) and read its answer."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self.http.request(**self.session.request(call))
            except httpx.HTTPError as exc:
                delay = self.session.after_failure(call, exc, attempt)
            else:
                result, wait = self.session.after_answer(call, response, attempt)
                if wait is None:
                    return result  # type: ignore[return-value]  # None only for Call[None]
                delay = wait
            await asyncio.sleep(delay)

    async def iterate(self, call: Call[Any]) -> AsyncIterator[Any]:
        """Every item of a paging list, from ``call``'s page on."""
        page_call: Call[Any] | None = call
        while page_call is not None:
            page = await self.send(page_call)
            for item in page.items:
                yield item
            page_call = next_page(page_call, page)

    async def aclose(self) -> None:
        if self._owns_http:
            await self.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
