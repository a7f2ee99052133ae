"""Marquez's run reads: ``GET /api/v1/jobs/runs/{id}`` and its facets."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import Query

from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.responses import FacetsResponse, RunResponse
from headwater.server.routes.reading import connection, read_router
from headwater.store.reads import runs as reads

__all__ = ["router"]

router = read_router()


def _run_id(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError as exc:
        raise RequestError(f"run id must be a UUID, not {value!r}", field="path.id") from exc
    return value


@router.get("/api/v1/jobs/runs/{id}", response_model=RunResponse, tags=["runs"])
def get_run(id: str, store: StoreDep) -> dict[str, Any]:  # noqa: A002 - Marquez's name
    """The run: state, times, job version, and the dataset versions it read and wrote."""
    with connection(store) as conn:
        return reads.get_run(conn, _run_id(id))


@router.get("/api/v1/jobs/runs/{id}/facets", response_model=FacetsResponse, tags=["runs"])
def get_run_facets(
    id: str,  # noqa: A002 - Marquez's name
    store: StoreDep,
    type: Literal["run", "job"] = Query("run"),  # noqa: A002
) -> dict[str, Any]:
    """The run's facets (``type=run``) or its job's facets as of this run (``type=job``)."""
    with connection(store) as conn:
        return {"runId": id, "facets": reads.run_facets(conn, _run_id(id), type)}
