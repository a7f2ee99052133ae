"""One API operation as data: what to send and how to read the answer.

An operation's function (in :mod:`headwater.client.operations`) only builds a
:class:`Call`; it does no I/O. :class:`~headwater.client.Client` and
:class:`~headwater.client.AsyncClient` send the same calls, each its own way,
so every operation is written once for both.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from headwater.client.decode import decode
from headwater.client.errors import UnexpectedAnswer

__all__ = [
    "Call",
    "Reader",
    "model",
    "nothing",
    "params",
    "raw",
    "segment",
    "text",
    "time_param",
]

T = TypeVar("T", covariant=True)
R = TypeVar("R")

Reader = Callable[[httpx.Response, bool], T]
"""Reads a successful answer into the operation's result; the flag asks for strict decoding."""


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request and the reader of its answer."""

    method: str
    path: str
    read: Reader[T]
    params: Mapping[str, Any] = field(default_factory=dict)
    content: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # False for a write that creates something new each time it is sent (a token, a
    # block): see headwater.client.retry for what is repeated then.
    idempotent: bool = True
    # Error statuses whose body is still the operation's answer when it reads as one:
    # a batch whose every event is refused is a 400 that lists them all.
    answered_by: frozenset[int] = frozenset()

    def with_params(self, **changes: Any) -> Call[T]:
        """The same call with some query parameters replaced (how pages advance); a
        parameter given as None is left out."""
        merged = {**self.params, **changes}
        return replace(self, params={k: v for k, v in merged.items() if v is not None})

    @staticmethod
    def json(
        method: str,
        path: str,
        read: Reader[T],
        body: Any,
        *,
        compress: bool = False,
        idempotent: bool = True,
    ) -> Call[T]:
        """A call with a JSON body, gzip-encoded when ``compress``."""
        content = json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"}
        if compress:
            content = gzip.compress(content)
            headers["Content-Encoding"] = "gzip"
        return Call(method, path, read, {}, content, headers, idempotent)


def model(kind: type[R]) -> Reader[R]:
    """Read a JSON answer as ``kind``."""

    def read(response: httpx.Response, strict: bool) -> R:
        try:
            body = response.json()
        except ValueError as exc:
            raise UnexpectedAnswer(f"not JSON: {response.text[:200]!r}") from exc
        return decode(kind, body, strict=strict)

    read.kind = kind  # type: ignore[attr-defined]  # the model, for the tests against /openapi.json
    return read


def text(response: httpx.Response, strict: bool) -> str:
    """Read a text answer (CSV, Prometheus metrics) as it is."""
    return response.text


def nothing(response: httpx.Response, strict: bool) -> None:
    """An answer without a body (204)."""
    return None


def raw(response: httpx.Response, strict: bool) -> Any:
    """The answer as sent: parsed JSON, text for ``text/*``, None when it has no body."""
    if response.status_code == 204 or not response.content:
        return None
    if response.headers.get("content-type", "").startswith("text/"):
        return response.text
    try:
        return response.json()
    except ValueError as exc:
        raise UnexpectedAnswer(f"not JSON: {response.text[:200]!r}") from exc


def segment(value: str) -> str:
    """A path parameter, percent-encoded whole: names with slashes stay one segment."""
    return quote(value, safe="")


def time_param(value: datetime | str | None) -> str | None:
    """A time parameter: a ``datetime`` as ISO-8601 (naive means UTC), text as given."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def params(**values: Any) -> dict[str, Any]:
    """Query parameters without the ones left as ``None`` (the server's defaults apply)."""
    return {key: value for key, value in values.items() if value is not None}
