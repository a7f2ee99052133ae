"""``GET /api/v2/lineage``: headwater's directed lineage graph.

Strictly directed (``upstream``, ``downstream`` or ``both`` = the union of the two
walks, never a sibling), for any node type:

- ``dataset`` / ``job``: table-level lineage through jobs' versions; with ``asOf``
  each job contributes the version current at that time;
- ``datasetField``: column lineage across jobs, each edge with the job it came
  through and its transformations; ``datasetField:ns:name:field#<version>`` answers
  as of that dataset version's time;
- ``run`` or a versioned dataset ``dataset:ns:name#<version>``: run-level lineage,
  upstream of a run being the versions it read and the runs that wrote them.

``maxNodes`` bounds the answer; ``truncated`` says whether it cut anything and
``truncatedNodes`` which nodes of the answer have a neighbour it left out (asking
for one of them reaches the rest, a bounded answer at a time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import sqlalchemy as sa
from fastapi import Query

from headwater.graph.model import Direction, NodeType
from headwater.graph.traverse import NeighbourSource, walk
from headwater.server.deps import StoreDep
from headwater.server.lineage_responses import V2Graph
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
from headwater.store.reads.nodes import node_summaries, pinned_version, require_node
from headwater.store.reads.run_lineage import RunLineage
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.table_lineage import TableLineage
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["directed_lineage", "router"]

router = read_router()


@router.get(
    "/api/v2/lineage",
    response_model=V2Graph,
    responses=error_responses(404),
    tags=["lineage v2"],
)
def get_directed_lineage(
    nodeId: Annotated[str, node_id_query()],  # noqa: N803 - the API's camelCase names
    store: StoreDep,
    scope: ScopeDep,
    direction: Literal["upstream", "downstream", "both"] = "both",
    depth: Annotated[int, Query(ge=0, le=100)] = 10,
    asOf: Annotated[  # noqa: N803
        str | None, time_query("Answer with the versions current at this time.")
    ] = None,
    maxNodes: Annotated[int, Query(ge=1, le=100_000)] = 1_000,  # noqa: N803
) -> dict[str, Any]:
    """The directed graph around ``nodeId``."""
    as_of = parse_time(asOf, "asOf")
    with connection(store) as conn:
        return directed_lineage(conn, nodeId, direction, depth, as_of, maxNodes, scope)


def directed_lineage(
    conn: sa.Connection,
    node_id: str,
    direction: Literal["upstream", "downstream", "both"],
    depth: int,
    as_of: datetime | None,
    max_nodes: int,
    scope: NamespaceScope = EVERYTHING,
) -> dict[str, Any]:
    """The ``/api/v2/lineage`` answer, computed on an open connection (also used by the CLI).

    Only nodes inside ``scope`` are met: a node outside it is 404 like a missing one,
    and the walk stops at the scope's boundary.
    """
    node = parse_node_id(node_id)
    # One "was anything deleted?" probe for the whole answer, and the scope's boundary.
    hidden = HiddenNodes(conn, scope)
    require_node(conn, node, hidden)
    source: NeighbourSource
    root = str(node)
    if node.type is NodeType.RUN or (node.type is NodeType.DATASET and node.version):
        source = RunLineage(conn, hidden)
        root = node_id
    elif node.type is NodeType.DATASET_FIELD:
        if node.version:
            # A pinned version answers as of that version's time.
            as_of, _ = pinned_version(conn, node)
        source = ColumnLineage(conn, as_of, hidden)
    else:
        source = TableLineage(conn, as_of, hidden)
    graph = walk(source, root, Direction(direction), depth, max_nodes)
    data = node_summaries(conn, [n.id for n in graph.nodes], as_of, scope)
    return {
        "nodeId": root,
        "direction": direction,
        "depth": depth,
        "asOf": as_of,
        "maxNodes": max_nodes,
        "truncated": graph.truncated,
        "truncatedNodes": sorted(graph.cut),
        "nodes": [
            {"id": n.id, "type": n.type.value, "data": data.get(n.id)}
            for n in sorted(graph.nodes, key=lambda n: n.id)
        ],
        "edges": [
            {
                "upstream": e.upstream,
                "downstream": e.downstream,
                "via": e.via,
                "transformations": [
                    {
                        "type": tr.type,
                        "subtype": tr.subtype,
                        "description": tr.description,
                        "masking": tr.masking,
                    }
                    for tr in e.transformations
                ],
            }
            for e in sorted(graph.edges, key=lambda e: (e.upstream, e.downstream, e.via or ""))
        ],
    }
