"""What :class:`Client` and :class:`AsyncClient` share around each request: the URL
and headers it goes out with, and what an answer or a failure means -- the
result, a retry after some seconds, or an error from :mod:`headwater.client.errors`.

Only the sending itself (blocking or awaited) differs between the two clients.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from headwater import __version__
from headwater.client.call import Call
from headwater.client.errors import (
    ClientError,
    RequestTimeout,
    ServerUnreachable,
    UnexpectedAnswer,
    api_error,
)
from headwater.client.retry import Retry

__all__ = ["DEFAULT_URL", "Session", "next_page"]

logger = logging.getLogger("headwater.client")

DEFAULT_URL = "http://127.0.0.1:5000"

T = TypeVar("T")


@dataclass(frozen=True)
class Session:
    """One server, one token, one retry policy."""

    url: str
    token: str | None
    retry: Retry
    strict: bool

    def request(self, call: Call[Any]) -> dict[str, Any]:
        """The keyword arguments of ``httpx.Client.request`` for ``call``."""
        headers = {"User-Agent": f"headwater-client/{__version__}", **call.headers}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return {
            "method": call.method,
            "url": self.url + call.path,
            "params": _query(call.params),
            "content": call.content,
            "headers": headers,
        }

    def after_answer(
        self, call: Call[T], response: httpx.Response, attempt: int
    ) -> tuple[T | None, float | None]:
        """``(result, None)``, or ``(None, seconds)`` to retry; raises an APIError."""
        status = response.status_code
        if status < 400:
            return call.read(response, self.strict), None
        if status in call.answered_by:
            try:
                # Not strictly: the answer carries the error body's fields as well.
                return call.read(response, False), None
            except UnexpectedAnswer:
                pass  # an error body of the ordinary kind: raised below
        if self.retry.status_is_retriable(status, call.idempotent):
            delay = self.retry.delay(attempt, response.headers.get("retry-after"))
            if delay is not None:
                logger.info(
                    "%s %s answered %d; retry %d of %d in %.2f s",
                    call.method,
                    call.path,
                    status,
                    attempt,
                    self.retry.retries,
                    delay,
                )
                return None, delay
        raise _error(call, response)

    def after_failure(self, call: Call[Any], exc: httpx.HTTPError, attempt: int) -> float:
        """Seconds to wait before sending again after ``exc``; raises when it is over."""
        # A connection never made reached no server: any call may go again. A read that
        # timed out may have been acted on: only calls safe to repeat go again.
        connecting = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
        repeatable = connecting or (call.idempotent and isinstance(exc, httpx.TransportError))
        delay = self.retry.delay(attempt) if repeatable else None
        if delay is not None:
            logger.info(
                "%s %s failed (%s); retry %d of %d in %.2f s",
                call.method,
                call.path,
                type(exc).__name__,
                attempt,
                self.retry.retries,
                delay,
            )
            return delay
        where = f"{call.method} {self.url}{call.path}"
        if isinstance(exc, httpx.TimeoutException):
            raise RequestTimeout(f"no answer from {where} in time: {exc}") from exc
        if isinstance(exc, httpx.TransportError):
            raise ServerUnreachable(f"cannot reach {self.url}: {exc}") from exc
        raise ClientError(f"{where} failed: {exc}") from exc


def next_page(call: Call[Any], page: Any) -> Call[Any] | None:
    """The call for the page after ``page`` (which ``call`` answered), or None at the end.

    A keyset-paged list answers ``nextCursor``: the next page starts right after
    this one's last item, whatever was inserted meanwhile (``offset`` goes back to
    0, as it would skip within what follows). Other lists page by ``offset``;
    their end is a short or empty page, or ``totalCount`` reached.
    """
    items = page.items
    cursor = getattr(page, "nextCursor", None)
    if cursor and items:
        return call.with_params(cursor=cursor, offset=0 if "offset" in call.params else None)
    if "offset" not in call.params or "cursor" in call.params:
        return None  # a cursor list at its end (or one that pages no other way)
    offset = int(call.params["offset"])
    limit = call.params.get("limit")
    following = offset + len(items)
    total = getattr(page, "totalCount", None)
    if not items or (limit is not None and len(items) < limit):
        return None
    if total is not None and following >= total:
        return None
    return call.with_params(offset=following)


def _query(params: Mapping[str, Any]) -> dict[str, Any]:
    # httpx spells booleans True/False; the API, like JSON, true/false.
    return {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items()}


def _error(call: Call[Any], response: httpx.Response) -> ClientError:
    message, field, retriable = response.text or response.reason_phrase, None, None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        message = body["error"]
        field = body.get("field") if isinstance(body.get("field"), str) else None
        retriable = body.get("retriable") if isinstance(body.get("retriable"), bool) else None
    return api_error(
        response.status_code,
        message,
        field=field,
        retriable=retriable,
        method=call.method,
        url=str(response.request.url),
    )
