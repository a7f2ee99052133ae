"""``GET /api/v1/namespaces[/{namespace}]`` and ``GET /api/v1/sources[/{source}]`` (Marquez)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from headwater.server.access import principal_of
from headwater.server.deps import StoreDep
from headwater.server.openapi import error_responses
from headwater.server.responses import NamespaceList, NamespaceResponse, SourceList, SourceResponse
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    page,
    read_router,
)
from headwater.store.reads import datasets as reads

__all__ = ["router"]

router = read_router()
_NOT_FOUND = error_responses(404)


@router.get("/api/v1/namespaces", response_model=NamespaceList, tags=["namespaces"])
def list_namespaces(
    request: Request, store: StoreDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """Every namespace a job or dataset was seen in, by name (those the token may see)."""
    allowed = principal_of(request.scope).namespaces
    with connection(store) as conn:
        items, total = reads.list_namespaces(conn, page(limit, offset), allowed)
    return {"namespaces": items, "totalCount": total}


@router.get(
    "/api/v1/namespaces/{namespace}",
    response_model=NamespaceResponse,
    responses=_NOT_FOUND,
    tags=["namespaces"],
)
def get_namespace(namespace: str, store: StoreDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_namespace(conn, namespace)


@router.get("/api/v1/sources", response_model=SourceList, tags=["sources"])
def list_sources(
    store: StoreDep, scope: ScopeDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """Sources from ``dataSource`` facets (else one per dataset namespace)."""
    with connection(store) as conn:
        items, total = reads.list_sources(conn, page(limit, offset), scope)
    return {"sources": items, "totalCount": total}


@router.get(
    "/api/v1/sources/{source}", response_model=SourceResponse, responses=_NOT_FOUND,
    tags=["sources"],
)
def get_source(source: str, store: StoreDep, scope: ScopeDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_source(conn, source, scope)
