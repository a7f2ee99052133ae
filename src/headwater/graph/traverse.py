"""The directed lineage walk: breadth-first, one batched neighbour query per depth level.

Why directed: Marquez answers ``GET /api/v1/lineage`` with an undirected walk, so a
dataset's "lineage" also contains its siblings (other outputs of the jobs that read
it, and everything upstream of those). headwater's walk follows edges only in the
asked direction: upstream of X is what X was derived from, downstream of X is what
was derived from X, and ``both`` is the union of the two walks — never a sideways
step. A node can be both upstream and downstream of the root (a cycle); it is then
expanded in both walks, and appears once.

The walk asks its :class:`NeighbourSource` for the edges of a whole frontier at
once, so a depth-``d`` walk costs at most ``d`` round trips per direction. It keeps
a visited set per direction (cycles terminate) and stops admitting new nodes at
``max_nodes``; the returned graph then says ``truncated=True``, names in ``cut``
the admitted nodes with a neighbour left out, and contains only edges between
admitted nodes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from headwater.graph.model import Direction, Edge, Graph, Node

__all__ = ["EdgeIndex", "NeighbourSource", "walk"]


class NeighbourSource(Protocol):
    """Where a walk gets its edges: the store, or an :class:`EdgeIndex` in tests."""

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        """Edges adjacent to ``node_ids`` in ``direction``.

        ``UPSTREAM``: edges whose ``downstream`` is one of ``node_ids``;
        ``DOWNSTREAM``: edges whose ``upstream`` is one of ``node_ids``.
        ``BOTH`` is never asked for.
        """
        ...


class EdgeIndex:
    """An in-memory :class:`NeighbourSource` over a fixed list of edges.

    ``calls`` counts :meth:`edges_from` calls, so tests can check that a walk is
    batched per depth level.
    """

    def __init__(self, edges: Iterable[Edge]) -> None:
        self._into: dict[str, list[Edge]] = defaultdict(list)
        self._out_of: dict[str, list[Edge]] = defaultdict(list)
        for edge in edges:
            self._into[edge.downstream].append(edge)
            self._out_of[edge.upstream].append(edge)
        self.calls = 0

    def edges_from(self, node_ids: Collection[str], direction: Direction) -> list[Edge]:
        if direction is Direction.BOTH:
            raise ValueError("edges_from is asked one direction at a time")
        self.calls += 1
        index = self._into if direction is Direction.UPSTREAM else self._out_of
        return [edge for node_id in node_ids for edge in index.get(node_id, ())]


class _Walker:
    """The state of one directed walk; :func:`walk` interleaves two of them for ``both``."""

    def __init__(self, roots: Sequence[str], direction: Direction) -> None:
        self.direction = direction
        self.visited: set[str] = set(roots)
        self.frontier: list[str] = list(roots)

    def step(
        self,
        source: NeighbourSource,
        admitted: dict[str, None],
        edges: dict[tuple[str, str, str | None], Edge],
        max_nodes: int,
        cut: set[str],
    ) -> bool:
        """Expand the frontier by one level; return True if ``max_nodes`` cut something.

        A node whose neighbour is refused goes into ``cut``.
        """
        found = source.edges_from(self.frontier, self.direction)
        truncated = False
        next_frontier: list[str] = []
        for edge in found:
            near, far = (
                (edge.downstream, edge.upstream)
                if self.direction is Direction.UPSTREAM
                else (edge.upstream, edge.downstream)
            )
            if near not in self.visited:
                continue  # the source returned an edge we did not ask about
            if far not in admitted:
                if len(admitted) >= max_nodes:
                    truncated = True
                    cut.add(near)
                    continue
                admitted[far] = None
            if far not in self.visited:
                self.visited.add(far)
                next_frontier.append(far)
            edges.setdefault((edge.upstream, edge.downstream, edge.via), edge)
        self.frontier = next_frontier
        return truncated


def walk(
    source: NeighbourSource,
    roots: str | Sequence[str],
    direction: Direction,
    depth: int,
    max_nodes: int = 10_000,
) -> Graph:
    """Walk ``depth`` edges from ``roots`` in ``direction``; admit at most ``max_nodes`` nodes.

    Roots are always in the answer (they count toward ``max_nodes``). With
    ``Direction.BOTH`` the upstream and downstream walks alternate level by level
    so that a ``max_nodes`` cut is shared fairly between the two sides.
    """
    if depth < 0:
        raise ValueError("depth must be >= 0")
    if max_nodes < 1:
        raise ValueError("max_nodes must be >= 1")
    root_ids = (roots,) if isinstance(roots, str) else tuple(dict.fromkeys(roots))
    directions = (
        (Direction.UPSTREAM, Direction.DOWNSTREAM) if direction is Direction.BOTH else (direction,)
    )
    walkers = [_Walker(root_ids, d) for d in directions]
    admitted: dict[str, None] = dict.fromkeys(root_ids)
    edges: dict[tuple[str, str, str | None], Edge] = {}
    truncated = False
    cut: set[str] = set()
    for _level in range(depth):
        active = [w for w in walkers if w.frontier]
        if not active:
            break
        for walker in active:
            truncated |= walker.step(source, admitted, edges, max_nodes, cut)
    nodes = tuple(Node.of(node_id) for node_id in admitted)
    return Graph(
        root_ids, direction, depth, nodes, tuple(edges.values()), truncated, frozenset(cut)
    )
