"""gzip for answers worth compressing, chosen by the request's ``Accept-Encoding``.

:class:`Compression` is ASGI middleware. It compresses an answer when

- the client accepts ``gzip`` with a q-value above 0 (``gzip;q=0`` refuses it,
  and so does ``*;q=0`` unless ``gzip`` is named), per RFC 9110 section 12.5.3;
- its media type is text: JSON, ``text/*`` (HTML, CSS, CSV), JavaScript, SVG;
- its body is at least :data:`MIN_SIZE` bytes (a smaller one gains nothing
  after gzip's own header), or it streams (its size is not known up front);
- it is a full answer of a GET or a POST that is not an ingestion POST: the
  ingestion answers (``POST /api/v1/lineage[/batch]``) are a few bytes of
  status, and a producer's client waits on them; a HEAD, a 206 range, a 204
  or a 304 has no body to compress; an answer already encoded is left as it is.

Every answer of a compressible type gets ``Vary: Accept-Encoding``, compressed
or not, so a cache keeps the two representations apart. A compressed answer's
``ETag`` is made weak (``W/``): the bytes differ from the identity encoding's,
the meaning does not, and ``If-None-Match`` compares weakly.

A streaming answer stays streaming: each chunk is compressed and flushed
(``Z_SYNC_FLUSH``) as it comes, so the client reads it as it is produced.

Only gzip is offered: it is in the standard library, every HTTP client speaks
it, and at level 5 it costs a few milliseconds per megabyte of JSON.
"""

from __future__ import annotations

import zlib

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["COMPRESSIBLE_TYPES", "Compression", "GZIP_LEVEL", "MIN_SIZE", "accepts_gzip"]

#: Answers smaller than this many bytes go out as they are.
MIN_SIZE = 1024
#: zlib's level: 5 compresses JSON nearly as well as 9 at about half the CPU.
GZIP_LEVEL = 5
#: Media types (before any ``;``) compressed; plus every ``text/*``.
COMPRESSIBLE_TYPES = frozenset(
    {
        "application/json",
        "application/javascript",
        "application/problem+json",
        "application/xml",
        "image/svg+xml",
        "application/openmetrics-text",
    }
)
_INGEST_PATHS = frozenset({"/api/v1/lineage", "/api/v1/lineage/batch"})
_NO_BODY = frozenset({204, 206, 304})


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an ``Accept-Encoding`` value admits gzip (a q-value above 0)."""
    if not accept_encoding:
        return False
    named: float | None = None
    wildcard: float | None = None
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        coding = coding.strip().lower()
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0  # a malformed q-value admits nothing
        if coding in ("gzip", "x-gzip"):
            named = quality if named is None else max(named, quality)
        elif coding == "*":
            wildcard = quality
    chosen = named if named is not None else wildcard
    return chosen is not None and chosen > 0


def _compressible(headers: Headers) -> bool:
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media.startswith("text/") and media != "text/event-stream" or media in COMPRESSIBLE_TYPES


class Compression:
    """ASGI middleware: gzip the answers worth it (see the module docstring)."""

    def __init__(self, app: ASGIApp, minimum_size: int = MIN_SIZE) -> None:
        self.app = app
        self.minimum_size = minimum_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (
            scope["method"] == "POST" and scope["path"] in _INGEST_PATHS
        ):
            await self.app(scope, receive, send)
            return
        wanted = scope["method"] != "HEAD" and accepts_gzip(
            Headers(scope=scope).get("accept-encoding")
        )
        await _Responder(self.app, self.minimum_size, wanted)(scope, receive, send)


class _Responder:
    """One answer's pass through :class:`Compression`."""

    def __init__(self, app: ASGIApp, minimum_size: int, wanted: bool) -> None:
        self.app = app
        self.minimum_size = minimum_size
        self.wanted = wanted
        self.send: Send
        self.start: Message | None = None
        self.compressor: zlib._Compress | None = None
        self.passing = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.send = send
        await self.app(scope, receive, self._send)

    async def _send(self, message: Message) -> None:
        if self.passing:
            await self.send(message)
            return
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            if not _compressible(headers):
                self.passing = True
                await self.send(message)
                return
            headers.add_vary_header("Accept-Encoding")
            if not self.wanted or message["status"] in _NO_BODY or "content-encoding" in headers:
                self.passing = True
                await self.send(message)
                return
            self.start = message  # held until the first body part says how big it is
            return
        if message["type"] != "http.response.body" or (
            self.start is None and self.compressor is None
        ):
            await self.send(message)
            return
        body: bytes = message.get("body", b"")
        more: bool = message.get("more_body", False)
        if self.compressor is None:
            start, self.start = self.start, None
            if not more and len(body) < self.minimum_size:
                self.passing = True
                await self.send(start)
                await self.send(message)
                return
            self.compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            headers = MutableHeaders(scope=start)
            headers["Content-Encoding"] = "gzip"
            etag = headers.get("etag")
            if etag is not None and not etag.startswith("W/"):
                headers["ETag"] = f"W/{etag}"
            del headers["content-length"]
            if not more:
                # The whole body is here: its compressed length is known, so the
                # answer keeps a Content-Length instead of being chunked.
                compressed = self.compressor.compress(body) + self.compressor.flush()
                headers["Content-Length"] = str(len(compressed))
                await self.send(start)
                await self.send({"type": "http.response.body", "body": compressed})
                return
            await self.send(start)
        if more:
            chunk = self.compressor.compress(body) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
            await self.send({"type": "http.response.body", "body": chunk, "more_body": True})
        else:
            chunk = self.compressor.compress(body) + self.compressor.flush()
            await self.send({"type": "http.response.body", "body": chunk})
