"""Pure lineage-graph algorithms: no SQL, no HTTP.

The graph code sees the store only through :class:`~headwater.graph.traverse.NeighbourSource`
(``edges_from(node_ids, direction)``), so every walk is tested on a hand-built graph
and runs unchanged against SQLite or PostgreSQL.

- :mod:`headwater.graph.model` — node ids, :class:`Node`, :class:`Edge`, :class:`Graph`.
- :mod:`headwater.graph.traverse` — the directed, depth- and size-bounded walk.
- :mod:`headwater.graph.columns` — column-level lineage on top of the walk.
- :mod:`headwater.graph.impact` — what a change to a dataset or a column reaches
  downstream, directly or only through join/filter columns (its terms in
  :mod:`~headwater.graph.impact_model`, its walks in :mod:`~headwater.graph.impact_walk`,
  its CSV form in :mod:`~headwater.graph.impact_csv`).
- :mod:`headwater.graph.drift` — schema diff of two dataset versions, each change
  classified breaking or compatible.
- :mod:`headwater.graph.tags` — propagating tags along column lineage, with
  provenance, stopped by masking edges and users' blocks.
"""

from __future__ import annotations

from headwater.graph.model import Direction, Edge, Graph, Node, NodeId, NodeType
from headwater.graph.traverse import EdgeIndex, NeighbourSource, walk

__all__ = [
    "Direction",
    "Edge",
    "EdgeIndex",
    "Graph",
    "NeighbourSource",
    "Node",
    "NodeId",
    "NodeType",
    "walk",
]
