"""``GET /api/v2/impact``: what a change to a dataset or a column reaches downstream.

The walk is :func:`headwater.graph.impact.impact` over the store's column edges
(dataset-level ``columnLineage`` entries included) and, from a dataset, its table
lineage too. Every impacted node says whether it is reached directly (some path of
DIRECT edges) or only indirectly (through a JOIN, FILTER, GROUP_BY, SORT, WINDOW or
CONDITIONAL column), and carries one shortest path from the start. ``format=csv``
answers one row per impacted node, its path joined.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Query
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from headwater.graph.impact import CSV_COLUMNS, Impact, ImpactFilter, impact, to_csv
from headwater.graph.model import NodeType
from headwater.server.deps import StoreDep
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    ScopeDep,
    connection,
    node_id_query,
    parse_node_id,
    parse_time,
    read_router,
    time_query,
)
from headwater.store.reads.column_lineage import ColumnLineage
from headwater.store.reads.nodes import pinned_version, require_node
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.table_lineage import TableLineage
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["ImpactResponse", "impact_answer", "impact_filter", "router"]

router = read_router()

_STARTS = (NodeType.DATASET, NodeType.DATASET_FIELD)
_KINDS = {
    "direct": frozenset({Impact.DIRECT}),
    "indirect": frozenset({Impact.INDIRECT}),
    "all": frozenset(Impact),
}


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class ImpactNode(_Model):
    id: str
    type: Literal["DATASET", "DATASET_FIELD", "JOB"]
    depth: int
    impact: Literal["direct", "indirect"]
    path: list[str]
    pathEdges: list[str]


class ImpactSummary(_Model):
    datasets: int
    columns: int
    jobs: int
    direct: int
    indirect: int


class ImpactResponse(_Model):
    """``GET /api/v2/impact``: what ``start`` reaches; ``truncated`` says ``maxNodes`` cut it."""

    start: str
    depth: int
    asOf: datetime | None = None
    edges: Literal["direct", "indirect", "all"]
    maxNodes: int
    truncated: bool
    nodes: list[ImpactNode]
    summary: ImpactSummary


_CSV_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The impacted nodes: JSON, or with `format=csv` one CSV row each "
        f"({', '.join(CSV_COLUMNS)}).",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}


@router.get(
    "/api/v2/impact",
    response_model=ImpactResponse,
    responses={**_CSV_RESPONSE, **error_responses(404)},
    tags=["lineage v2"],
)
def get_impact(
    nodeId: Annotated[str, node_id_query(*_STARTS)],  # noqa: N803 - the API's camelCase names
    store: StoreDep,
    scope: ScopeDep,
    depth: Annotated[int, Query(ge=0, le=100, description="Jobs to cross, 0-100.")] = 10,
    asOf: Annotated[  # noqa: N803
        str | None, time_query("Answer with the column and job lineage known at this time.")
    ] = None,
    edges: Annotated[
        Literal["direct", "indirect", "all"],
        Query(description="Which column edges to follow: DIRECT, INDIRECT or both."),
    ] = "all",
    namespace: Annotated[
        list[str] | None,
        Query(description="Follow edges into these namespaces only (repeatable)."),
    ] = None,
    job: Annotated[
        list[str] | None,
        Query(description="Follow edges through these jobs only (`job:...` ids, repeatable)."),
    ] = None,
    maxNodes: Annotated[int, Query(ge=1, le=100_000)] = 1_000,  # noqa: N803
    format: Annotated[Literal["json", "csv"], Query()] = "json",  # noqa: A002
) -> Any:
    """What a change to ``nodeId`` (a dataset or a column) breaks downstream."""
    as_of = parse_time(asOf, "asOf")
    filters = impact_filter(edges, namespace or (), job or ())
    with connection(store) as conn:
        answer = impact_answer(conn, nodeId, depth, as_of, filters, maxNodes, scope)
    if format == "csv":
        return Response(to_csv(answer), media_type="text/csv")
    return answer


def impact_filter(
    edges: str, namespaces: Sequence[str], jobs: Sequence[str], job_field: str = "job"
) -> ImpactFilter:
    """The walk's filter from the request's ``edges``, ``namespace`` and ``job`` values
    (a malformed job id is a 400 naming ``job_field``)."""
    only_jobs = frozenset(str(parse_node_id(j, job_field, (NodeType.JOB,))) for j in jobs)
    return ImpactFilter(frozenset(namespaces) or None, only_jobs or None, _KINDS[edges])


def impact_answer(
    conn: Any,
    node_id: str,
    depth: int,
    as_of: datetime | None,
    filters: ImpactFilter,
    max_nodes: int,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    """The ``/api/v2/impact`` answer, computed on an open database connection (also
    used by the CLI); the connection is handed to the store's readers untouched. The
    walk stays inside ``scope`` (a start outside it is 404 like a missing one)."""
    node = parse_node_id(node_id, allowed=_STARTS)
    hidden = HiddenNodes(conn, scope)
    require_node(conn, node, hidden)
    if node.version:
        # A pinned version answers as of that version's time.
        as_of, _ = pinned_version(conn, node)
    columns = ColumnLineage(conn, as_of, hidden, dataset_level=True)
    tables = TableLineage(conn, as_of, hidden)
    try:
        result = impact(columns, str(node), depth, max_nodes, filters, tables)
    except ValueError as exc:
        raise RequestError(str(exc), field="query.nodeId") from exc
    kinds = sorted(k.value for k in filters.kinds)
    return {
        "start": result.start,
        "depth": depth,
        "asOf": as_of,
        "edges": kinds[0] if len(kinds) == 1 else "all",
        "maxNodes": max_nodes,
        "truncated": result.truncated,
        "nodes": [
            {
                "id": n.id,
                "type": n.type.value,
                "depth": n.depth,
                "impact": n.impact.value,
                "path": n.path,
                "pathEdges": n.path_edges,
            }
            for n in result.nodes
        ],
        "summary": result.summary(),
    }
