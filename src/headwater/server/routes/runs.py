"""Run reads: ``GET /api/v1/jobs/runs/{id}``, its facets (Marquez) and its child runs;
``GET /api/v2/runs/{id}``, the run's state with whether its producer has gone silent."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import BaseModel, Field

from headwater.server.cursors import Cursor, CursorKey
from headwater.server.deps import SettingsDep, StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.responses import ChildRunList, FacetsResponse, JobId, RunResponse, RunState
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    read_router,
)
from headwater.store.reads import runs as reads
from headwater.store.reads.staleness import heartbeat_rules, run_liveness

__all__ = ["RunIdPath", "RunLiveness", "router", "run_id_parameter", "run_id_query"]

router = read_router()
_READ: dict[str, Any] = {"tags": ["runs"], "responses": error_responses(404)}
# The child runs' order, as their cursor records it (see headwater.server.cursors).
_CHILDREN = CursorKey("child-runs", ("time", "text"), lambda item: (item["createdAt"], item["id"]))


def run_id_query() -> Any:
    """A run id query parameter; the document says it is a UUID, :func:`run_id_parameter` checks."""
    return Query(description="The run's id, a UUID.", json_schema_extra={"format": "uuid"})


#: The ``{id}`` of a run's path; checked with :func:`run_id_parameter`.
RunIdPath = Annotated[
    str, Path(description="The run's id, a UUID.", json_schema_extra={"format": "uuid"})
]


def run_id_parameter(value: str, field: str = "path.id") -> str:
    """A run id parameter, checked to be a UUID (400 naming ``field``)."""
    try:
        uuid.UUID(value)
    except ValueError as exc:
        raise RequestError(f"run id must be a UUID, not {value!r}", field=field) from exc
    return value


@router.get("/api/v1/jobs/runs/{id}", response_model=RunResponse, **_READ)
def get_run(id: RunIdPath, store: StoreDep, scope: ScopeDep) -> dict[str, Any]:  # noqa: A002
    """The run: state, times, job version, and the dataset versions it read and wrote."""
    with connection(store) as conn:
        return reads.get_run(conn, run_id_parameter(id), scope)


@router.get("/api/v1/jobs/runs/{id}/facets", response_model=FacetsResponse, **_READ)
def get_run_facets(
    id: RunIdPath,  # noqa: A002 - Marquez's name
    store: StoreDep,
    scope: ScopeDep,
    type: Literal["run", "job"] = Query("run"),  # noqa: A002
) -> dict[str, Any]:
    """The run's facets (``type=run``) or its job's facets as of this run (``type=job``)."""
    with connection(store) as conn:
        facets = reads.run_facets(conn, run_id_parameter(id), type, scope)
    return {"runId": id, "facets": facets}


@router.get("/api/v1/jobs/runs/{id}/children", response_model=ChildRunList, **_READ)
def get_child_runs(
    id: RunIdPath,  # noqa: A002 - Marquez's name
    store: StoreDep,
    scope: ScopeDep,
    limit: Limit = 100,
    offset: Offset = 0,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """The runs whose ``parent`` facet names this run, oldest first, each with its ``job``.

    A headwater addition: a Spark application run's children are its per-action runs.
    """
    wanted = _CHILDREN.page(limit, offset, cursor)
    with connection(store) as conn:
        items, total = reads.child_runs(conn, run_id_parameter(id), wanted, scope)
    return {"runs": items, "totalCount": total, "nextCursor": _CHILDREN.next_cursor(items, limit)}


class RunHeartbeat(BaseModel):
    producer: str | None = Field(description="The `producer` of the run's newest event.")
    runningEvents: int = Field(description="RUNNING events the run has sent.")
    cadenceSeconds: float | None = Field(
        description="Mean seconds between the run's RUNNING events (their event times)."
    )
    staleAfterSeconds: float = Field(
        description="Silence after which the run is stale: the producer's setting, or three "
        "of the run's own intervals when longer."
    )


class RunLiveness(BaseModel):
    id: str
    job: JobId
    state: RunState = Field(description="The state the run's events made (Marquez's names).")
    stale: bool = Field(
        description="Not terminal, its producer known to send periodic RUNNING events, and "
        "nothing received for it for longer than `heartbeat.staleAfterSeconds`, now. Never "
        "a terminal state: a late COMPLETE, FAIL or ABORT still ends the run."
    )
    startedAt: datetime | None
    endedAt: datetime | None
    lastEventAt: datetime | None = Field(
        description="When the server received the run's newest event (UTC)."
    )
    heartbeat: RunHeartbeat | None = Field(
        description="Set when the run is heartbeat-tracked: its producer matches a "
        "`--stale-producer` pattern and it has sent at least two RUNNING events."
    )


@router.get("/api/v2/runs/{id}", response_model=RunLiveness, **_READ)
def get_run_liveness(
    id: RunIdPath,  # noqa: A002 - the v1 run paths' name
    store: StoreDep,
    settings: SettingsDep,
    scope: ScopeDep,
) -> dict[str, Any]:
    """The run's state as its events made it, and whether it is stale: a run whose
    producer beats a heartbeat (the OpenLineage Flink integration, headwater's agent for
    streaming queries) and has gone silent. Derived at each read, never stored."""
    rules = heartbeat_rules(settings.stale_producers)
    with connection(store) as conn:
        return run_liveness(conn, run_id_parameter(id), rules, scope)
