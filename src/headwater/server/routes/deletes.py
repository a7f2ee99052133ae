"""Marquez's soft deletes: ``DELETE`` a dataset, a job, or a namespace with everything in it.

Nothing is removed. The object is hidden from lists, search and lineage (and is 404
to reads) until an event about it arrives with a later time; see
:mod:`headwater.store.admin`. Each answer is the object as it was before the delete,
as Marquez answers.
"""

from __future__ import annotations

from typing import Any

from headwater.server.deps import StoreDep, WriteAccess
from headwater.server.openapi import error_responses
from headwater.server.responses import DatasetResponse, JobResponse, NamespaceResponse
from headwater.server.routes.reading import connection, read_router
from headwater.store import admin
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads

__all__ = ["router"]

router = read_router()
# A delete needs the API key (401), names what may not exist (404) and writes (422 if
# the database refuses it).
_WRITE: dict[str, Any] = {
    "dependencies": [WriteAccess], "responses": error_responses(401, 404, 422)
}


@router.delete(
    "/api/v1/namespaces/{namespace}/datasets/{dataset}",
    response_model=DatasetResponse,
    tags=["datasets"],
    **_WRITE,
)
def delete_dataset(namespace: str, dataset: str, store: StoreDep) -> dict[str, Any]:
    """Hide the dataset until an event mentions it again."""
    with connection(store) as conn:
        before = dataset_reads.get_dataset(conn, namespace, dataset)
    admin.hide_dataset(store.engine, namespace, dataset)
    return before


@router.delete(
    "/api/v1/namespaces/{namespace}/jobs/{job}", response_model=JobResponse, tags=["jobs"],
    **_WRITE,
)
def delete_job(namespace: str, job: str, store: StoreDep) -> dict[str, Any]:
    """Hide the job until an event mentions it again."""
    with connection(store) as conn:
        before = job_reads.get_job(conn, namespace, job)
    admin.hide_job(store.engine, namespace, job)
    return before


@router.delete(
    "/api/v1/namespaces/{namespace}", response_model=NamespaceResponse, tags=["namespaces"],
    **_WRITE,
)
def delete_namespace(namespace: str, store: StoreDep) -> dict[str, Any]:
    """Hide the namespace and every dataset and job in it, in one transaction."""
    with connection(store) as conn:
        before = dataset_reads.get_namespace(conn, namespace)
    admin.hide_namespace(store.engine, namespace)
    return before
