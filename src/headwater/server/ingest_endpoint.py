"""The two ingestion POSTs as one ASGI handler in front of the FastAPI app.

Producers post events far more often than anyone reads, and for one ~3 KB
event FastAPI's work per request (matching the path against every read
route, solving dependencies, its exception middleware) costs a sixth of the
server's CPU per single-event POST (measured side by side: ``docs/server.md``,
"Throughput"). So ``POST /api/v1/lineage`` and ``POST /api/v1/lineage/batch``
are served here and only here: :class:`IngestEndpoint` checks write access
with the same function the routes' dependency uses, calls the handlers in
:mod:`headwater.server.routes.lineage`, and answers errors with the app's own
handlers. Every other request goes on to the app. The handlers are declared
on a router that the app documents in ``/openapi.json`` but does not serve.

It relies on Starlette's documented API only: as app middleware it runs after
Starlette has put the app in ``scope["app"]``, where the handlers read its state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from headwater.errors import HeadwaterError
from headwater.server.deps import require_write_access
from headwater.server.handlers import (
    error_body,
    headwater_error_response,
    unexpected_error_response,
)
from headwater.server.routes.lineage import post_lineage, post_lineage_batch

__all__ = ["IngestEndpoint"]

# The batch path has no route in the app: another method there is answered
# here, as the routing answers a method a path does not take.
_POST_ONLY = "/api/v1/lineage/batch"

_HANDLERS: dict[str, Callable[[Request], Awaitable[Response]]] = {
    "/api/v1/lineage": post_lineage,
    "/api/v1/lineage/batch": post_lineage_batch,
}


class IngestEndpoint:
    """ASGI middleware serving the two ingestion POSTs; the rest goes to ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = (_HANDLERS.get(scope["path"])
                   if scope["type"] == "http" and scope["method"] == "POST" else None)
        if handler is None:
            if scope["type"] == "http" and scope["path"] == _POST_ONLY:
                response: Response = JSONResponse(error_body("Method Not Allowed"), 405,
                                                  headers={"Allow": "POST"})
                await response(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            await require_write_access(request)
            response = await handler(request)
        except HeadwaterError as exc:
            response = await headwater_error_response(request, exc)
        except ClientDisconnect:
            return  # the client (or the body deadline) closed the connection: nobody to answer
        except Exception as exc:  # noqa: BLE001 - a bug: the app's last-resort answer
            response = await unexpected_error_response(request, exc)
        await response(scope, receive, send)
