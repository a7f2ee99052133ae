"""``GET /api/v2/datasets/{nodeId}/readers``: which jobs, runs and Spark users read a
dataset in a time window -- the data-access question lineage alone does not answer.

The runs come from the inputs their events list (:mod:`headwater.store.reads.readers`
says how the user and read-only actions are told).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field

from headwater.server.deps import StoreDep
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    page,
    parse_dataset_path,
    parse_window,
    read_router,
    time_query,
)
from headwater.store.reads.common import dataset_ids
from headwater.store.reads.nodes import require_node
from headwater.store.reads.readers import readers
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["ReaderList", "readers_answer", "router"]

router = read_router()


class Reader(BaseModel):
    runId: str
    job: str = Field(description="The run's job node id (`job:NS:NAME`).")
    readAt: datetime = Field(
        description="The first event of the run listing the dataset as an input (UTC)."
    )
    state: str | None = Field(description="The run's state (COMPLETE, FAIL, RUNNING, ...).")
    startedAt: datetime | None
    endedAt: datetime | None
    parentRunId: str | None = Field(description="The Spark application's run, for an action's run.")
    sparkUser: str | None = Field(
        description="`userName` of the run's (or its parent's) `spark_applicationDetails` facet."
    )
    readOnly: bool = Field(
        description="The run wrote nothing: a read-only action such "
        "as collect or toPandas (captured when the agent is configured "
        "to), or a job that only reads."
    )


class ReaderList(BaseModel):
    datasetId: str
    totalCount: int = Field(description="How many runs read it in the window.")
    users: list[str] = Field(description="The distinct Spark users of this page's runs.")
    jobs: list[str] = Field(description="The distinct jobs of this page's runs.")
    readers: list[Reader] = Field(description="Newest read first.")


@router.get(
    "/api/v2/datasets/{nodeId}/readers",
    response_model=ReaderList,
    responses=error_responses(400, 404),
    tags=["access"],
)
def get_readers(
    nodeId: str,  # noqa: N803 -- the API's own spelling
    store: StoreDep,
    scope: ScopeDep,
    since: Annotated[str | None, time_query("Reads at or after this time.")] = None,
    until: Annotated[str | None, time_query("Reads before this time.")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """The runs that read a dataset in a time window, newest first, with their jobs and
    Spark users. `nodeId` is `dataset:NAMESPACE:NAME`, percent-encoded as one segment."""
    with connection(store) as conn:
        return readers_answer(conn, nodeId, since, until, limit, offset, scope)


def readers_answer(
    conn: Any,
    node_id: str,
    since: str | None,
    until: str | None,
    limit: int,
    offset: int,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    """The readers answer on an open connection (also used by the CLI)."""
    node = parse_dataset_path(node_id)
    start, end = parse_window(since, until)
    require_node(conn, node, HiddenNodes(conn, scope))
    dataset_id = next(iter(dataset_ids(conn, [(node.namespace, node.name)]).values()))
    rows, total = readers(conn, dataset_id, start, end, page(limit, offset), scope)
    return {
        "datasetId": str(node),
        "totalCount": total,
        "users": sorted({r["sparkUser"] for r in rows if r["sparkUser"]}),
        "jobs": sorted({r["job"] for r in rows}),
        "readers": rows,
    }
