"""Marquez's (deprecated) run writes: create a run, and mark it started, completed,
failed or aborted.

Each becomes a RunEvent recorded through the store's own write path (see
:mod:`~headwater.server.routes.legacy_events`). Run state stays a function of all
of a run's events: a terminal state wins over a start whatever the order, so
``start`` after ``complete`` leaves the run completed (Marquez would reopen it).
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from fastapi import Body

from headwater.errors import NotFoundError
from headwater.server.deps import StoreDep, WriteAccess
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.responses import RunResponse
from headwater.server.routes import legacy_events as legacy
from headwater.server.routes.legacy_writes import record
from headwater.server.routes.reading import connection, parse_time, read_router, time_query
from headwater.server.routes.runs import RunIdPath, run_id_parameter
from headwater.store.reads import jobs as job_reads
from headwater.store.reads import runs as run_reads

__all__ = ["router"]

router = read_router()
# Each needs the API key (401), names a job or run that may not exist (404) and writes
# an event the database may refuse (422).
_WRITE: dict[str, Any] = {
    "tags": ["runs"], "dependencies": [WriteAccess], "responses": error_responses(401, 404, 422)
}

_At = Annotated[str | None, time_query("When the run changed state (default: now).")]


@router.post(
    "/api/v1/namespaces/{namespace}/jobs/{job}/runs",
    response_model=RunResponse,
    status_code=201,
    tags=["runs"],
    dependencies=[WriteAccess],
    responses=error_responses(401, 404, 409, 422),
)
def create_run(
    namespace: str,
    job: str,
    store: StoreDep,
    body: legacy.RunBody | None = Body(None),
) -> dict[str, Any]:
    """Create a run (state ``NEW``) of the job's current version; 409 if the id exists.

    The run lists the current version's inputs, outputs and source location, so it is
    a run of that version (headwater derives versions from runs). ``args`` are not kept.
    """
    body = body or legacy.RunBody()
    run_id = str(body.id or uuid.uuid4())
    with connection(store) as conn:
        current = job_reads.get_job(conn, namespace, job)
        if run_reads.run_rows(conn, [run_id]):
            raise RequestError(f"run '{run_id}' already exists", status_code=409,
                               field="body.id")
    event = legacy.run_event(
        run_id,
        (namespace, job),
        "OTHER",
        legacy.now(),
        nominal=(body.nominalStartTime, body.nominalEndTime),
        inputs=[f"dataset:{d['namespace']}:{d['name']}" for d in current["inputs"]],
        outputs=[f"dataset:{d['namespace']}:{d['name']}" for d in current["outputs"]],
        location=current["location"],
    )
    record(store, event)
    with connection(store) as conn:
        return run_reads.get_run(conn, run_id)


def _transition(
    store: Any, run_id: str, event_type: Literal["START", "COMPLETE", "FAIL", "ABORT"],
    at: str | None,
) -> dict[str, Any]:
    when = parse_time(at, "at") or legacy.now()
    with connection(store) as conn:
        rows = run_reads.run_rows(conn, [run_id_parameter(run_id)])
        if not rows:
            raise NotFoundError(f"run '{run_id}' not found")
        job = (rows[0].namespace, rows[0].job_name)
    record(store, legacy.run_event(run_id, job, event_type, when))
    with connection(store) as conn:
        return run_reads.get_run(conn, run_id)


@router.post("/api/v1/jobs/runs/{id}/start", response_model=RunResponse, **_WRITE)
def start_run(
    id: RunIdPath, store: StoreDep, at: _At = None  # noqa: A002 - Marquez's name
) -> dict[str, Any]:
    """Mark the run started at ``at`` (ISO-8601; default now): a START event."""
    return _transition(store, id, "START", at)


@router.post("/api/v1/jobs/runs/{id}/complete", response_model=RunResponse, **_WRITE)
def complete_run(
    id: RunIdPath, store: StoreDep, at: _At = None  # noqa: A002 - Marquez's name
) -> dict[str, Any]:
    """Mark the run completed at ``at``: a COMPLETE event."""
    return _transition(store, id, "COMPLETE", at)


@router.post("/api/v1/jobs/runs/{id}/fail", response_model=RunResponse, **_WRITE)
def fail_run(
    id: RunIdPath, store: StoreDep, at: _At = None  # noqa: A002 - Marquez's name
) -> dict[str, Any]:
    """Mark the run failed at ``at``: a FAIL event."""
    return _transition(store, id, "FAIL", at)


@router.post("/api/v1/jobs/runs/{id}/abort", response_model=RunResponse, **_WRITE)
def abort_run(
    id: RunIdPath, store: StoreDep, at: _At = None  # noqa: A002 - Marquez's name
) -> dict[str, Any]:
    """Mark the run aborted at ``at``: an ABORT event."""
    return _transition(store, id, "ABORT", at)
