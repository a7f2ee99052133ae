"""Marquez's dataset reads: list, get, and dataset versions."""

from __future__ import annotations

from typing import Any

from headwater.server.deps import StoreDep
from headwater.server.openapi import error_responses
from headwater.server.responses import (
    DatasetList,
    DatasetResponse,
    DatasetVersionList,
    DatasetVersionResponse,
)
from headwater.server.routes.reading import Limit, Offset, connection, page, read_router
from headwater.store.reads import datasets as reads

__all__ = ["router"]

router = read_router()
# Each route names a namespace (and a dataset) that may not exist.
_READ: dict[str, Any] = {"tags": ["datasets"], "responses": error_responses(404)}
_BASE = "/api/v1/namespaces/{namespace}/datasets"


@router.get(_BASE, response_model=DatasetList, **_READ)
def list_datasets(
    namespace: str, store: StoreDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """The namespace's datasets by name; 404 if the namespace does not exist."""
    with connection(store) as conn:
        items, total = reads.list_datasets(conn, namespace, page(limit, offset))
    return {"datasets": items, "totalCount": total}


@router.get(_BASE + "/{dataset}", response_model=DatasetResponse, **_READ)
def get_dataset(namespace: str, dataset: str, store: StoreDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_dataset(conn, namespace, dataset)


@router.get(_BASE + "/{dataset}/versions", response_model=DatasetVersionList, **_READ)
def list_dataset_versions(
    namespace: str, dataset: str, store: StoreDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """The dataset's versions, newest first (one per producing run)."""
    with connection(store) as conn:
        items, total = reads.list_dataset_versions(conn, namespace, dataset, page(limit, offset))
    return {"versions": items, "totalCount": total}


@router.get(
    _BASE + "/{dataset}/versions/{version}",
    response_model=DatasetVersionResponse,
    **_READ,
)
def get_dataset_version(
    namespace: str, dataset: str, version: str, store: StoreDep
) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_dataset_version(conn, namespace, dataset, version)
