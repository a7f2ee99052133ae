"""Marquez's job reads: list, get, job versions and a job's runs."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from headwater.server.cursors import Cursor, CursorKey
from headwater.server.deps import FragmentsDep, StoreDep
from headwater.server.json_answers import list_parts, stitched_answer
from headwater.server.openapi import error_responses
from headwater.server.responses import (
    JobList,
    JobResponse,
    JobVersionList,
    JobVersionResponse,
    RunList,
)
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    read_router,
)
from headwater.store.reads import jobs as reads
from headwater.store.reads.runs import list_runs

__all__ = ["router"]

router = read_router()
# Each route names a namespace (and a job) that may not exist.
_READ: dict[str, Any] = {"tags": ["jobs"], "responses": error_responses(404)}
_BASE = "/api/v1/namespaces/{namespace}/jobs"
# Each list's order, as its cursor records it (see headwater.server.cursors).
_JOBS = CursorKey("jobs", ("text",), lambda item: (item["name"],))
_VERSIONS = CursorKey(
    "job-versions", ("time", "text"), lambda item: (item["createdAt"], item["version"])
)
_RUNS = CursorKey("job-runs", ("time", "text"), lambda item: (item["createdAt"], item["id"]))


@router.get(_BASE, response_model=JobList, **_READ)
def list_jobs(
    namespace: str,
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    fragments: FragmentsDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> Response:
    """The namespace's jobs by name, each with its current version's inputs and outputs."""
    with connection(store) as conn:
        epoch = fragments.epoch(conn)  # before the rows (server/record_fragments.py)
        rows, total = reads.job_rows_page(conn, namespace, _JOBS.page(limit, offset, cursor))
        items = fragments.jobs(conn, epoch, rows, scope)
    names = [{"name": row.name} for row in rows]  # what the cursor is made of
    return stitched_answer(
        list_parts(
            "jobs",
            items,
            {"totalCount": total, "nextCursor": _JOBS.next_cursor(names, limit)},
        ),
        request,
    )


@router.get(_BASE + "/{job}", response_model=JobResponse, **_READ)
def get_job(namespace: str, job: str, store: StoreDep, scope: ScopeDep) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_job(conn, namespace, job, scope)


@router.get(_BASE + "/{job}/versions", response_model=JobVersionList, **_READ)
def list_job_versions(
    namespace: str,
    job: str,
    store: StoreDep,
    scope: ScopeDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """The job's versions, newest first."""
    with connection(store) as conn:
        items, total = reads.list_job_versions(
            conn, namespace, job, _VERSIONS.page(limit, offset, cursor), scope
        )
    return {
        "versions": items,
        "totalCount": total,
        "nextCursor": _VERSIONS.next_cursor(items, limit),
    }


@router.get(_BASE + "/{job}/versions/{version}", response_model=JobVersionResponse, **_READ)
def get_job_version(
    namespace: str, job: str, version: str, store: StoreDep, scope: ScopeDep
) -> dict[str, Any]:
    with connection(store) as conn:
        return reads.get_job_version(conn, namespace, job, version, scope)


@router.get(_BASE + "/{job}/runs", response_model=RunList, **_READ)
def list_job_runs(
    namespace: str,
    job: str,
    store: StoreDep,
    scope: ScopeDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """The job's runs, newest first."""
    with connection(store) as conn:
        found = reads.job_id(conn, namespace, job)
        items, total = list_runs(conn, found, _RUNS.page(limit, offset, cursor), scope)
    return {"runs": items, "totalCount": total, "nextCursor": _RUNS.next_cursor(items, limit)}
