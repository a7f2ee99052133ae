"""``GET /api/v2/datasets/{nodeId}/root-cause``: what changed upstream of a dataset.

The upstream drifts (version and contract), failed runs and quality failures in a
time window, oldest first, each with its path to the dataset
(:mod:`headwater.graph.root_cause` walks and orders; :mod:`headwater.store.reads.root_cause`
reads the findings).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, Field

from headwater.graph.root_cause import CauseKind, Finding, root_causes, upstream
from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    Limit,
    ScopeDep,
    connection,
    parse_dataset_path,
    parse_window,
    read_router,
    time_query,
)
from headwater.store.reads.nodes import require_node
from headwater.store.reads.root_cause import WindowLineage, upstream_findings
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["DEFAULT_WINDOW", "RootCause", "root_cause_answer", "router"]

router = read_router()

#: The window when ``since`` is left out: this long before ``until``.
DEFAULT_WINDOW = timedelta(days=7)


class Cause(BaseModel):
    kind: Literal["versionDrift", "contractDrift", "failedRun", "qualityFailure"] = Field(
        description="versionDrift: an upstream dataset's schema changed between versions; "
        "contractDrift: a consumer job on the way declares a schema its input is not written "
        "with; failedRun: a run of an upstream job failed; qualityFailure: a run reported "
        "failed assertions about an upstream dataset."
    )
    time: datetime = Field(
        description="When it happened (UTC): the newer version's time, "
        "the run's failure, the assertions' event."
    )
    subject: str = Field(description="The dataset or job node id it happened to.")
    consumer: str | None = Field(description="A contract drift's consumer job node id.")
    depth: int = Field(
        description="Jobs between the subject and the dataset (0: the dataset itself)."
    )
    path: list[str] = Field(
        description="Node ids from the subject down to the dataset: "
        "datasets and the jobs between them."
    )
    detail: dict[str, Any] = Field(
        description="versionDrift/contractDrift: version, "
        "previousVersion, breaking, changes (as in /api/v2/drift), "
        "consumerRun; failedRun: runId, startedAt, endedAt; "
        "qualityFailure: runId, job, failed (assertion, column)."
    )


class RootCause(BaseModel):
    datasetId: str
    since: datetime
    until: datetime
    depth: int
    upstreamDatasets: int = Field(description="Datasets walked, the dataset included.")
    upstreamJobs: int = Field(description="Jobs walked.")
    truncated: bool = Field(
        description="maxNodes cut the walk, or a kind had more findings than are read."
    )
    totalCount: int = Field(
        description="How many causes there are; `causes` holds the first `limit`."
    )
    causes: list[Cause] = Field(description="Oldest first.")


@router.get(
    "/api/v2/datasets/{nodeId}/root-cause",
    response_model=RootCause,
    responses=error_responses(400, 404),
    tags=["drift"],
)
def get_root_cause(
    nodeId: str,  # noqa: N803 -- the API's own spelling
    store: StoreDep,
    scope: ScopeDep,
    since: Annotated[
        str | None, time_query("From this time (default: 7 days before until).")
    ] = None,
    until: Annotated[str | None, time_query("Before this time (default: now).")] = None,
    depth: Annotated[int, Query(ge=0, le=100, description="Jobs to cross upstream, 0-100.")] = 10,
    maxNodes: Annotated[int, Query(ge=1, le=100_000)] = 1_000,  # noqa: N803
    limit: Limit = 100,
) -> dict[str, Any]:
    """What changed upstream of a dataset in a window: drifts, failed runs and quality
    failures, oldest first, each with its path. `nodeId` is `dataset:NAMESPACE:NAME`,
    percent-encoded as one segment."""
    with connection(store) as conn:
        return root_cause_answer(conn, nodeId, since, until, depth, maxNodes, limit, scope)


def root_cause_answer(
    conn: Any,
    node_id: str,
    since: str | None,
    until: str | None,
    depth: int,
    max_nodes: int,
    limit: int,
    scope: NamespaceScope = EVERYTHING,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The root-cause answer on an open connection (also used by the CLI)."""
    node = parse_dataset_path(node_id)
    start_at, end_at = parse_window(since, until)
    end = end_at or (now or datetime.now(UTC))
    start = start_at or end - DEFAULT_WINDOW
    if start > end:
        raise RequestError("since must not be after until", field="query.since")
    hidden = HiddenNodes(conn, scope)
    require_node(conn, node, hidden)
    walk = upstream(WindowLineage(conn, start, end, hidden), str(node), depth, max_nodes)
    rows, cut = upstream_findings(conn, walk.datasets(), walk.jobs(), start, end, scope)
    findings = [Finding(CauseKind(kind), *rest) for kind, *rest in rows]
    causes = root_causes(walk, findings)
    return {
        "datasetId": str(node),
        "since": start,
        "until": end,
        "depth": depth,
        "upstreamDatasets": len(walk.datasets()),
        "upstreamJobs": len(walk.jobs()),
        "truncated": walk.truncated or cut,
        "totalCount": len(causes),
        "causes": [
            {
                "kind": c.finding.kind.value,
                "time": c.finding.time,
                "subject": c.finding.subject,
                "consumer": c.finding.via,
                "depth": c.depth,
                "path": list(c.path),
                "detail": dict(c.finding.detail),
            }
            for c in causes[:limit]
        ],
    }
