"""``ETag`` and ``If-None-Match`` for read answers: an unchanged re-fetch is a 304.

:class:`ETags` is ASGI middleware in front of the routes. For a GET of one of
:data:`ETAGGED_PATHS` (version and run answers, v1 and v2 lineage) it reads,
before the route reads any of the answer's rows, the store's watermark
(:func:`headwater.store.reads.watermark.read_watermark`), which every committed
write changes — a late event that only adds a facet to a finished run
included — and derives a weak ``ETag`` from it and from

- the request: the path as sent (names hold encoded slashes) and its query
  parameters, sorted;
- who asks: the namespaces the request's token may see (``*`` for a token not
  limited to namespaces), so an answer filtered for one token is never called
  current for a token that sees fewer or other namespaces;
- the server's version, so an upgrade that changes an answer's shape changes it.

A request whose ``If-None-Match`` names that tag (or ``*``) is answered ``304
Not Modified`` with the tag and no body, without running the route; otherwise a
200 answer carries the tag. The body is not hashed: a 304 costs one query and
no answer is built. The price is that any write to the store, even one the
answer does not show, makes the next re-fetch a full answer (docs/api.md,
"Caching"). The same watermark means the same store, so the same path,
parameters and namespaces get the same answer: a tag handed out with a 200 is
never wrong for a later 304.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from headwater import __version__
from headwater.errors import StoreError
from headwater.server.access import principal_of
from headwater.store.reads.watermark import read_watermark

__all__ = ["ETAGGED_PATHS", "ETags", "document_etags", "etag_matches"]

_SEGMENT = "[^/]+"
#: The GET paths whose answers carry an ETag (regular expressions on the raw path).
ETAGGED_PATHS: tuple[str, ...] = (
    f"/api/v1/namespaces/{_SEGMENT}/datasets/{_SEGMENT}/versions(/{_SEGMENT})?",
    f"/api/v1/namespaces/{_SEGMENT}/jobs/{_SEGMENT}/versions(/{_SEGMENT})?",
    f"/api/v1/namespaces/{_SEGMENT}/jobs/{_SEGMENT}/runs",
    f"/api/v1/jobs/runs/{_SEGMENT}(/facets|/children)?",
    "/api/v1/lineage",
    "/api/v1/column-lineage",
    "/api/v1/runlineage/upstream",
    "/api/v2/lineage",
)
_ETAGGED = re.compile("|".join(f"(?:{p})" for p in ETAGGED_PATHS))


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (weak comparison, RFC 9110 13.1.2)."""
    if not if_none_match:
        return False
    wanted = etag.removeprefix("W/")
    return any(
        tag.strip() == "*" or tag.strip().removeprefix("W/") == wanted
        for tag in if_none_match.split(",")
    )


def _tag(scope: Scope, watermark: str) -> str:
    principal = principal_of(scope)
    visible = "*" if principal.namespaces is None else "\n".join(sorted(principal.namespaces))
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
    query: bytes = scope.get("query_string", b"")
    parameters = b"&".join(sorted(query.split(b"&")))
    key = b"\0".join(
        (
            __version__.encode(),
            watermark.encode(),
            raw_path.split(b"?", 1)[0],
            parameters,
            visible.encode("utf-8", "surrogatepass"),
        )
    )
    return f'W/"{hashlib.sha256(key).hexdigest()[:32]}"'


class ETags:
    """ASGI middleware: ETags and 304s for :data:`ETAGGED_PATHS` (see the module docstring)."""

    def __init__(self, app: ASGIApp, store: Any) -> None:
        self.app = app
        self.store = store

    def _watermark(self) -> str:
        try:
            with self.store.engine.connect() as conn:
                return read_watermark(conn)
        except Exception as exc:  # noqa: BLE001 - any database failure: no tag
            raise StoreError(str(exc).splitlines()[0]) from exc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        if not _ETAGGED.fullmatch(raw.split(b"?", 1)[0].decode("latin-1")):
            await self.app(scope, receive, send)
            return
        try:
            # Before the route reads anything: its rows are then at least this new.
            watermark = await run_in_threadpool(self._watermark)
            etag = _tag(scope, watermark)
        except StoreError:
            await self.app(scope, receive, send)  # the route answers the 503 itself
            return
        if etag_matches(Headers(scope=scope).get("if-none-match"), etag):
            await Response(status_code=304, headers={"ETag": etag, "Vary": "Accept-Encoding"})(
                scope, receive, send
            )
            return

        async def send_tagged(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                MutableHeaders(scope=message)["ETag"] = etag
            await send(message)

        await self.app(scope, receive, send_tagged)


_NOT_MODIFIED = {"description": "Unchanged since the answer whose `ETag` `If-None-Match` names."}
_IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "The `ETag` of an earlier answer: 304 with no body if it is still current.",
    "schema": {"type": "string"},
}
_ETAG_HEADER = {"ETag": {"description": "A weak tag of this answer.", "schema": {"type": "string"}}}


def document_etags(app: FastAPI) -> None:
    """Have ``/openapi.json`` say which operations take ``If-None-Match`` and answer 304."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        for path, operations in document.get("paths", {}).items():
            concrete = re.sub(r"\{[^}]*\}", "x", path)
            get = operations.get("get")
            if get is None or not _ETAGGED.fullmatch(concrete):
                continue
            parameters = get.setdefault("parameters", [])
            if not any(p.get("name") == "If-None-Match" for p in parameters):
                parameters.append(dict(_IF_NONE_MATCH))
            responses = get.setdefault("responses", {})
            responses.setdefault("304", dict(_NOT_MODIFIED))
            if "200" in responses:
                responses["200"].setdefault("headers", {}).update(_ETAG_HEADER)
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
