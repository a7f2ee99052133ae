"""Every error the server answers, mapped to a JSON status in one place.

The body of every error response has the same shape::

    {"error": "<what is wrong>", "field": "<where, e.g. run.runId>"}

``field`` names the JSON path inside the event (``inputs[2].namespace``), a
header (``Content-Type``), a query parameter (``query.limit``) or ``body``.

Server-only errors extend the tree in :mod:`headwater.errors`::

    HeadwaterError
    ├── EventError          400  the event is not valid OpenLineage (field = JSON path)
    ├── NotFoundError       404
    ├── WriteRefused        422  the database refused the event (isolated); do not retry
    ├── StoreError          503  the database is unavailable; retry
    └── RequestError        4xx  the request itself is unusable (status chosen by raiser)
        ├── AuthError       401  missing or wrong bearer token
        └── BodyTooLarge    413  body over ``max_body_bytes`` (before or after gzip)
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import compile_path

from headwater.errors import EventError, HeadwaterError, NotFoundError, StoreError, WriteRefused
from headwater.server.openapi import install_openapi

__all__ = [
    "AuthError",
    "BodyTooLarge",
    "RequestError",
    "error_body",
    "headwater_error_response",
    "install_handlers",
    "unexpected_error_response",
]

logger = logging.getLogger(__name__)

_HTTP_METHODS = frozenset({"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"})


class RequestError(HeadwaterError):
    """The HTTP request cannot be used (bad header, body, encoding); carries its status."""

    def __init__(self, message: str, *, status_code: int = 400, field: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.field = field


class AuthError(RequestError):
    """Writes need ``Authorization: Bearer <api key>`` and it was missing or wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status_code=401, field="Authorization")


class BodyTooLarge(RequestError):
    """The body (or its gzip-decompressed form) exceeds the configured limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"request body exceeds the limit of {limit} bytes "
            "(set HEADWATER_MAX_BODY_BYTES or --max-body-bytes to raise it)",
            status_code=413,
            field="body",
        )


def error_body(message: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    """The JSON body of an error response."""
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    body.update(extra)
    return body


def _location(loc: tuple[Any, ...]) -> str:
    """A FastAPI error location as a path: ``("query", "limit")`` -> ``query.limit``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


async def headwater_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The response to a :class:`~headwater.errors.HeadwaterError` (see the module doc)."""
    if isinstance(exc, RequestError):
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, AuthError) else None
        return JSONResponse(error_body(str(exc), exc.field), exc.status_code, headers=headers)
    if isinstance(exc, EventError):
        return JSONResponse(error_body(str(exc), exc.field, retriable=False), 400)
    if isinstance(exc, WriteRefused):
        return JSONResponse(error_body(str(exc), exc.field, retriable=False), 422)
    if isinstance(exc, NotFoundError):
        return JSONResponse(error_body(str(exc)), 404)
    if isinstance(exc, StoreError):
        logger.error("store failure on %s %s: %s", request.method, request.url.path, exc)
        return JSONResponse(error_body(f"database unavailable: {exc}", retriable=True), 503)
    return JSONResponse(error_body(str(exc)), 400)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    field = _location(tuple(first.get("loc", ())))
    return JSONResponse(error_body(f"{field}: {first.get('msg')}", field or None), 400)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = exc.headers
    if exc.status_code == 405:
        allowed = _documented_methods(request)
        if allowed:
            headers = {**(headers or {}), "Allow": ", ".join(sorted(allowed))}
    return JSONResponse(error_body(str(exc.detail)), exc.status_code, headers=headers)


def _documented_methods(request: Request) -> set[str]:
    """Every method the OpenAPI document lists at the request's path.

    The framework's 405 names only the methods of the one route that matched the
    path, and several routers share paths (a GET in one module, its DELETE in
    another). Paths are matched encoded, as the routes match them.
    """
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if raw else request.url.path
    document: dict[str, Any] = request.app.openapi()
    return {
        method.upper()
        for template, item in document.get("paths", {}).items()
        if compile_path(template)[0].match(path)
        for method in item
        if method.upper() in _HTTP_METHODS
    }


async def _client_gone(request: Request, exc: Exception) -> JSONResponse:
    """The client closed the connection mid-body (or missed the body deadline).

    Nobody reads this answer; it exists so a vanished client is not logged as a bug.
    """
    logger.info("client left during %s %s", request.method, request.url.path)
    return JSONResponse(error_body("the client closed the connection"), 400)


async def unexpected_error_response(request: Request, exc: Exception) -> JSONResponse:
    """Last resort, for a bug: logged with the traceback, never leaked to the client."""
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse(error_body("internal server error"), 500)


def install_handlers(app: FastAPI) -> None:
    """Register the JSON error handlers on ``app``, and document them in its OpenAPI.

    Both happen here so the statuses the document lists (400 for a request that
    fails validation, not FastAPI's 422) are the ones the handlers answer.
    """
    app.add_exception_handler(HeadwaterError, headwater_error_response)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(ClientDisconnect, _client_gone)
    app.add_exception_handler(Exception, unexpected_error_response)
    install_openapi(app)
