"""Impact analysis: what is downstream of a dataset or a column, and how it is reached.

A column edge is **direct** when the downstream value is computed from the upstream
one (an OpenLineage ``DIRECT`` transformation, or an edge that names none), and
**indirect** when the upstream column only decides which rows or groups there are
(every transformation ``INDIRECT``: ``JOIN``, ``FILTER``, ``GROUP_BY``, ``SORT``,
``WINDOW``, ``CONDITIONAL``). A column edge can end at a dataset node instead of a
field: the ``columnLineage`` facet's dataset-level entries affect every field of
their target, so the walk fans such an edge out to all of the target's fields (or
stops at the dataset when its fields are unknown).

A node is **directly** impacted when some path from the start to it is all direct
edges, **indirectly** when every path within ``depth`` has an indirect edge. The
walk is breadth-first over (node, impact) states: a node is expanded at most twice,
once as reached directly and once as reached only indirectly, and an indirect state
is dropped when the node is reached directly as early. So a node reached indirectly
at depth 1 and directly at depth 4 is reported direct at depth 4, while what lies
beyond it is still found within ``depth`` through the shorter path.

``depth`` counts column edges, one per job crossed. Datasets and jobs are impacted
through their columns: a dataset takes its best-reached column's depth, impact and
path; a job the step across it. A walk from a dataset starts at all of its fields
and also walks table lineage (dataset -> job -> dataset), so outputs of jobs that
report no column lineage are found too; what only table lineage reaches counts as
direct, since nothing says less.

Every impacted node carries one shortest path from the start (columns and jobs,
with the kind of each column edge on it). ``max_nodes`` bounds the impacted nodes
of every type; the answer says ``truncated=True`` when it cut anything.

The terms live in :mod:`headwater.graph.impact_model`, the walks in
:mod:`headwater.graph.impact_walk` and the CSV form in :mod:`headwater.graph.impact_csv`;
this module holds the entry points and answers for all of their public names.
"""

from __future__ import annotations

from headwater.graph.impact_csv import CSV_COLUMNS, to_csv
from headwater.graph.impact_model import (
    Hop,
    Impact,
    ImpactAnswer,
    ImpactedNode,
    ImpactFilter,
    ImpactSource,
    Start,
    edge_impact,
)
from headwater.graph.impact_walk import Walk, column_walk, table_walk
from headwater.graph.model import NodeId, NodeType
from headwater.graph.traverse import NeighbourSource

__all__ = [
    "CSV_COLUMNS",
    "Hop",
    "Impact",
    "ImpactAnswer",
    "ImpactFilter",
    "ImpactSource",
    "ImpactedNode",
    "Start",
    "edge_impact",
    "impact",
    "impact_from",
    "to_csv",
]


def impact(
    source: ImpactSource,
    start: str,
    depth: int,
    max_nodes: int = 1_000,
    filters: ImpactFilter | None = None,
    tables: NeighbourSource | None = None,
) -> ImpactAnswer:
    """What a change to ``start`` (a dataset or a column) reaches within ``depth`` jobs.

    ``tables`` (the table-lineage source) is walked too when ``start`` is a dataset.
    """
    node = NodeId.parse(start)
    if node.type is NodeType.DATASET_FIELD:
        roots = [str(node)]
    elif node.type is NodeType.DATASET:
        roots = sorted(source.fields_of([str(node)]))
    else:
        raise ValueError(f"impact starts at a dataset or a dataset field, not {start!r}")
    return impact_from(source, Start(str(node), tuple(roots)), depth, max_nodes, filters, tables)


def impact_from(
    source: ImpactSource,
    start: Start,
    depth: int,
    max_nodes: int = 1_000,
    filters: ImpactFilter | None = None,
    tables: NeighbourSource | None = None,
) -> ImpactAnswer:
    """What a change to ``start.columns`` reaches within ``depth`` jobs (see :class:`Start`).

    ``tables`` is walked too when ``start.node`` is a dataset.
    """
    if depth < 0:
        raise ValueError("depth must be >= 0")
    if max_nodes < 1:
        raise ValueError("max_nodes must be >= 1")
    node = NodeId.parse(start.node)
    roots = sorted(set(start.columns))
    state = Walk(filters or ImpactFilter(), max_nodes)
    state.excluded = {str(node), str(node.dataset_id), *roots}
    column_walk(source, state, roots, depth, start.through)
    if node.type is NodeType.DATASET and tables is not None:
        if Impact.DIRECT in state.filters.kinds:
            table_walk(tables, state, str(node), depth, start)
    # Sorted by (depth, type, id) before the nodes are made: the sort key is then a
    # plain tuple, not attribute and enum-value look-ups per comparison.
    keyed = []
    for node_id, arrival in state.best.items():
        node_type, type_name = _type_of(node_id)
        keyed.append((arrival.depth, type_name, node_id, node_type, arrival))
    keyed.sort(key=lambda item: item[:3])
    nodes = tuple(
        ImpactedNode(
            node_id, node_type, reached_at, arrival.impact, state.hops(arrival.state) + arrival.tail
        )
        for reached_at, _, node_id, node_type, arrival in keyed
    )
    return ImpactAnswer(str(node), depth, nodes, state.truncated)


def _type_of(node_id: str) -> tuple[NodeType, str]:
    """The type of an impacted node's id, with its value (the answer's sort key)."""
    if node_id.startswith("datasetField:"):
        return NodeType.DATASET_FIELD, "DATASET_FIELD"
    if node_id.startswith("job:"):
        return NodeType.JOB, "JOB"
    return NodeType.DATASET, "DATASET"
