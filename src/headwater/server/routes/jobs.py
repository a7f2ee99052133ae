"""Marquez's job reads: list, get, job versions and a job's runs."""

from __future__ import annotations

from typing import Any

from headwater.server.deps import StoreDep
from headwater.server.openapi import error_responses
from headwater.server.responses import (
    JobList,
    JobResponse,
    JobVersionList,
    JobVersionResponse,
    RunList,
)
from headwater.server.routes.reading import Limit, Offset, connection, page, read_router
from headwater.store.reads import jobs as reads
from headwater.store.reads.runs import list_runs

__all__ = ["router"]

router = read_router()
# Each route names a namespace (and a job) that may not exist.
_READ: dict[str, Any] = {"tags": ["jobs"], "responses": error_responses(404)}
_BASE = "/api/v1/namespaces/{namespace}/jobs"


@router.get(_BASE, response_model=JobList, **_READ)
def list_jobs(
    namespace: str, store: StoreDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """The namespace's jobs by name, each with its current version's inputs and outputs."""
    with connection(store) as conn:
        items, total = reads.list_jobs(conn, namespace, page(limit, offset))
    return {"jobs": items, "totalCount": total}


@router.get(_BASE + "/{job}", response_model=JobResponse, **_READ)
def get_job(namespace: str, job: str, store: StoreDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_job(conn, namespace, job)


@router.get(_BASE + "/{job}/versions", response_model=JobVersionList, **_READ)
def list_job_versions(
    namespace: str, job: str, store: StoreDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """The job's versions, newest first."""
    with connection(store) as conn:
        items, total = reads.list_job_versions(conn, namespace, job, page(limit, offset))
    return {"versions": items, "totalCount": total}


@router.get(_BASE + "/{job}/versions/{version}", response_model=JobVersionResponse, **_READ)
def get_job_version(namespace: str, job: str, version: str, store: StoreDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_job_version(conn, namespace, job, version)


@router.get(_BASE + "/{job}/runs", response_model=RunList, **_READ)
def list_job_runs(
    namespace: str, job: str, store: StoreDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    """The job's runs, newest first."""
    with connection(store) as conn:
        items, total = list_runs(conn, reads.job_id(conn, namespace, job), page(limit, offset))
    return {"runs": items, "totalCount": total}
