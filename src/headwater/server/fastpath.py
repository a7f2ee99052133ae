"""The ingestion routes without FastAPI's per-request machinery.

Producers post events far more often than anyone reads, and for a 3 KB event
FastAPI's work per request (matching the path against every read route,
solving dependencies, the exception and telemetry layers) cost about as much
CPU as decoding and checking the event. This ASGI middleware hands
``POST /api/v1/lineage`` and ``POST /api/v1/lineage/batch`` straight to the
handler functions those routes use (:mod:`headwater.server.routes.lineage`),
after the same write-access check, and answers errors exactly as the app's
exception handlers do. Every other request goes on to the app. The FastAPI
routes stay declared, so the OpenAPI document still describes both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from headwater.errors import HeadwaterError
from headwater.server.deps import require_write_access
from headwater.server.handlers import headwater_error_response, unexpected_error_response
from headwater.server.routes.lineage import post_lineage, post_lineage_batch

__all__ = ["IngestFastPath"]

_HANDLERS: dict[str, Callable[[Request], Awaitable[Response]]] = {
    "/api/v1/lineage": post_lineage,
    "/api/v1/lineage/batch": post_lineage_batch,
}


class IngestFastPath:
    """ASGI middleware: the two ingestion POSTs go straight to their handlers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = (_HANDLERS.get(scope["path"])
                   if scope["type"] == "http" and scope["method"] == "POST" else None)
        if handler is None:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            await require_write_access(request)
            response = await handler(request)
        except HeadwaterError as exc:
            response = await headwater_error_response(request, exc)
        except Exception as exc:  # noqa: BLE001 - a bug: the app's last-resort answer
            response = await unexpected_error_response(request, exc)
        await response(scope, receive, send)
