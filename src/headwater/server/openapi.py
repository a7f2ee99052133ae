"""The OpenAPI document (``/openapi.json``) lists every status each route answers.

Routes declare their error statuses with :func:`error_responses`, each with the
:class:`~headwater.server.schemas.ErrorResponse` body. A route with parameters or a
body can also fail request validation, which FastAPI documents as a 422 of its own
shape; :mod:`headwater.server.handlers` answers it with a 400, so
:func:`install_openapi` documents that 400 instead and drops FastAPI's
validation-error schemas, which no route answers with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.routing import BaseRoute

from headwater.server.schemas import ErrorResponse

__all__ = ["ERROR_DESCRIPTIONS", "document_only", "error_responses", "install_openapi"]

#: What each error status means, as the document describes it.
ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "A parameter or the body is malformed or out of range; `field` names it.",
    401: "The server has tokens (or an API key) and the request carries none, or a wrong one.",
    403: "The token lacks the scope (or the namespace) this needs.",
    404: "What the path or a parameter names does not exist (or is deleted).",
    409: "It exists already.",
    413: "The body is over the server's limit (before or after gzip).",
    415: "The Content-Type or Content-Encoding is not one the route reads.",
    422: "The database refused what was written; sending it again fails again.",
    503: "The database is unavailable; nothing was written. Retry.",
}

_SCHEMAS = "#/components/schemas/"
_METHODS = frozenset({"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"})


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route answering ``codes`` with an :class:`ErrorResponse`."""
    return {
        code: {"model": ErrorResponse, "description": ERROR_DESCRIPTIONS[code]} for code in codes
    }


def document_only(app: FastAPI, routes: Sequence[BaseRoute]) -> None:
    """Have ``app``'s document describe ``routes``, which something other than its router serves."""
    app.state.documented_only_routes = list(routes)


def install_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` document request validation errors as 400 (built once)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = build()  # FastAPI keeps it in app.openapi_schema
            _add_routes(document, app, getattr(app.state, "documented_only_routes", ()))
            _validation_as_400(document)
            _access_errors(document)
            return document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _add_routes(document: dict[str, Any], app: FastAPI, routes: Sequence[BaseRoute]) -> None:
    """Merge the paths and schemas of ``routes`` into ``document``."""
    if not routes:
        return
    extra = get_openapi(title=app.title, version=app.version, routes=list(routes))
    paths = document.setdefault("paths", {})
    for path, item in extra.get("paths", {}).items():
        paths.setdefault(path, {}).update(item)
    document["paths"] = dict(sorted(paths.items()))
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in extra.get("components", {}).get("schemas", {}).items():
        schemas.setdefault(name, schema)


def _validation_as_400(document: dict[str, Any]) -> None:
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    bad_request = {
        "description": ERROR_DESCRIPTIONS[400],
        "content": {"application/json": {"schema": {"$ref": _SCHEMAS + _error_schema(schemas)}}},
    }
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            responses: dict[str, Any] = operation.setdefault("responses", {})
            if _is_fastapi_validation(responses.get("422")):
                del responses["422"]
            if operation.get("parameters") or operation.get("requestBody"):
                responses.setdefault("400", bad_request)
            operation["responses"] = dict(sorted(responses.items()))
    if f'"{_SCHEMAS}HTTPValidationError"' not in json.dumps(document["paths"]):
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)  # referenced by HTTPValidationError only


def _access_errors(document: dict[str, Any]) -> None:
    """Document 401 and 403 on every operation that needs a token once a server has one:
    all of them but the health check (see :func:`headwater.server.access.required_scope`).

    Which of them a server answers depends on its tokens, which change while it
    runs (``headwater token create``); the document is built once, so it lists
    them whatever the tokens are now.
    """
    name = _error_schema(document.setdefault("components", {}).setdefault("schemas", {}))
    for path, path_item in document.get("paths", {}).items():
        if path == "/api/v1/health":
            continue
        for method, operation in path_item.items():
            if method.upper() not in _METHODS:
                continue
            responses: dict[str, Any] = operation.setdefault("responses", {})
            for code in (401, 403):
                responses.setdefault(str(code), {
                    "description": ERROR_DESCRIPTIONS[code],
                    "content": {"application/json": {"schema": {"$ref": _SCHEMAS + name}}},
                })
            operation["responses"] = dict(sorted(responses.items()))


def _is_fastapi_validation(response: dict[str, Any] | None) -> bool:
    """Whether ``response`` is the 422 FastAPI adds (a route may declare its own 422)."""
    if response is None:
        return False
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return bool(schema.get("$ref") == _SCHEMAS + "HTTPValidationError")


def _error_schema(schemas: dict[str, Any]) -> str:
    """The component name of :class:`ErrorResponse`, added if no route named it yet."""
    name = ErrorResponse.__name__
    if name not in schemas:
        schemas[name] = ErrorResponse.model_json_schema(ref_template=_SCHEMAS + "{model}")
    return name
