"""Column-level lineage: walks over ``datasetField`` nodes, across jobs.

A column edge ``upstream field -> downstream field`` comes from the ``columnLineage``
facet of a job's output; the next job's output names the first job's output columns
as its inputs, so a plain directed walk over field nodes crosses job boundaries —
from ``gold.revenue.total`` back through every job to the raw columns. Each edge
carries the job it came through (``via``) and its transformations.

A dataset (or job) asked for as a whole starts the walk from all of its fields at
once; the caller resolves those roots with :func:`column_roots`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from headwater.graph.model import Direction, Edge, Graph, NodeId, NodeType
from headwater.graph.traverse import NeighbourSource, walk

__all__ = ["ColumnPath", "ColumnSource", "column_lineage", "column_roots", "paths_to_sources"]


class ColumnSource(NeighbourSource, Protocol):
    """A :class:`NeighbourSource` over field nodes that also knows datasets' fields."""

    def fields_of(self, dataset_ids: Collection[str]) -> list[str]:
        """The ``datasetField`` node ids of the given ``dataset`` node ids."""
        ...


@dataclass(frozen=True, slots=True)
class ColumnPath:
    """One chain of column edges, ordered from the raw column to the asked one."""

    edges: tuple[Edge, ...]

    @property
    def source(self) -> str:
        return self.edges[0].upstream

    @property
    def target(self) -> str:
        return self.edges[-1].downstream

    def fields(self) -> list[str]:
        return [self.edges[0].upstream, *(edge.downstream for edge in self.edges)]


def column_roots(source: ColumnSource, node_id: str) -> list[str]:
    """The field ids a column walk starts from: a field itself, or all fields of a dataset."""
    parsed = NodeId.parse(node_id)
    if parsed.type is NodeType.DATASET_FIELD:
        return [str(parsed)]
    if parsed.type is NodeType.DATASET:
        return sorted(source.fields_of([str(parsed)]))
    raise ValueError(f"column lineage starts at a dataset or a dataset field, not {node_id!r}")


def column_lineage(
    source: ColumnSource,
    node_id: str,
    direction: Direction,
    depth: int,
    max_nodes: int = 10_000,
) -> Graph:
    """The column graph around ``node_id`` (a dataset or a field), ``depth`` edges deep."""
    roots = column_roots(source, node_id)
    return walk(source, roots, direction, depth, max_nodes)


def paths_to_sources(graph: Graph, field_id: str, max_paths: int = 1_000) -> list[ColumnPath]:
    """Every chain of edges in ``graph`` from a source column to ``field_id``.

    Iterative depth-first search upstream; a field already on the current chain is not
    re-entered (cycles), and at most ``max_paths`` chains are returned.
    """
    into: dict[str, list[Edge]] = {}
    for edge in graph.edges:
        into.setdefault(edge.downstream, []).append(edge)
    paths: list[ColumnPath] = []
    # Each stack entry: the chain so far (nearest edge last) and the fields on it.
    stack: list[tuple[tuple[Edge, ...], frozenset[str]]] = [((), frozenset({field_id}))]
    while stack and len(paths) < max_paths:
        chain, on_chain = stack.pop()
        head = chain[-1].upstream if chain else field_id
        incoming = [e for e in into.get(head, ()) if e.upstream not in on_chain]
        if not incoming:
            if chain:
                paths.append(ColumnPath(tuple(reversed(chain))))
            continue
        for edge in _sorted(incoming):
            stack.append(((*chain, edge), on_chain | {edge.upstream}))
    return sorted(paths, key=lambda p: [e.upstream for e in p.edges])


def _sorted(edges: Sequence[Edge]) -> list[Edge]:
    return sorted(edges, key=lambda e: (e.upstream, e.via or ""), reverse=True)
