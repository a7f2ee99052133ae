"""Marquez's dataset reads: list, get, and dataset versions."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from headwater.server.cursors import Cursor, CursorKey
from headwater.server.deps import FragmentsDep, StoreDep
from headwater.server.json_answers import list_parts, stitched_answer
from headwater.server.openapi import error_responses
from headwater.server.responses import (
    DatasetList,
    DatasetResponse,
    DatasetVersionList,
    DatasetVersionResponse,
)
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    read_router,
)
from headwater.store.reads import datasets as reads

__all__ = ["router"]

router = read_router()
# Each route names a namespace (and a dataset) that may not exist.
_READ: dict[str, Any] = {"tags": ["datasets"], "responses": error_responses(404)}
_BASE = "/api/v1/namespaces/{namespace}/datasets"
# Each list's order, as its cursor records it (see headwater.server.cursors).
_DATASETS = CursorKey("datasets", ("text",), lambda item: (item["name"],))
_VERSIONS = CursorKey(
    "dataset-versions", ("time", "text"), lambda item: (item["createdAt"], item["version"])
)


@router.get(_BASE, response_model=DatasetList, **_READ)
def list_datasets(
    namespace: str,
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    fragments: FragmentsDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> Response:
    """The namespace's datasets by name; 404 if the namespace does not exist."""
    with connection(store) as conn:
        epoch = fragments.epoch(conn)  # before the rows (server/record_fragments.py)
        page = _DATASETS.page(limit, offset, cursor)
        rows, total = reads.dataset_rows_page(conn, namespace, page)
        items = fragments.datasets(conn, epoch, rows, scope)
    names = [{"name": row.name} for row in rows]  # what the cursor is made of
    return stitched_answer(
        list_parts(
            "datasets",
            items,
            {"totalCount": total, "nextCursor": _DATASETS.next_cursor(names, limit)},
        ),
        request,
    )


@router.get(_BASE + "/{dataset}", response_model=DatasetResponse, **_READ)
def get_dataset(namespace: str, dataset: str, store: StoreDep, scope: ScopeDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_dataset(conn, namespace, dataset, scope)


@router.get(_BASE + "/{dataset}/versions", response_model=DatasetVersionList, **_READ)
def list_dataset_versions(
    namespace: str,
    dataset: str,
    store: StoreDep,
    scope: ScopeDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """The dataset's versions, newest first (one per producing run)."""
    with connection(store) as conn:
        items, total = reads.list_dataset_versions(
            conn, namespace, dataset, _VERSIONS.page(limit, offset, cursor), scope
        )
    return {
        "versions": items,
        "totalCount": total,
        "nextCursor": _VERSIONS.next_cursor(items, limit),
    }


@router.get(
    _BASE + "/{dataset}/versions/{version}",
    response_model=DatasetVersionResponse,
    **_READ,
)
def get_dataset_version(
    namespace: str, dataset: str, version: str, store: StoreDep, scope: ScopeDep
) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_dataset_version(conn, namespace, dataset, version, scope)
