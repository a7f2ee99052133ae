"""The breadth-first walks behind :func:`headwater.graph.impact.impact_from`: over
column edges, and over table lineage for what columns do not reach, with the
bookkeeping they share (the best arrival at each node, the paths, the node bound).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from headwater.graph.impact_model import Hop, Impact, ImpactFilter, ImpactSource, Start, edge_impact
from headwater.graph.model import Direction, Edge
from headwater.graph.traverse import NeighbourSource

__all__ = ["Walk", "column_walk", "table_walk"]


def _dataset_of(node_id: str) -> str:
    """The dataset node id of a ``datasetField`` id (a field name holds no colon), or the
    id itself. A string cut: the walk asks this for every node it admits."""
    if node_id.startswith("datasetField:"):
        return "dataset:" + node_id[len("datasetField:") :].rpartition(":")[0]
    return node_id


_State = tuple[str, Impact]


@dataclass(slots=True)
class _Arrival:
    """The best way found so far to one impacted node: the path to a column state,
    then ``tail`` (a job's step into it, or a whole table-lineage path)."""

    depth: int
    impact: Impact
    state: _State | None
    tail: tuple[Hop, ...] = ()


@dataclass
class Walk:
    """The bookkeeping of one impact walk, shared by its column and table walks."""

    filters: ImpactFilter
    max_nodes: int
    # state -> the hops from a root to it (roots: none). Built as each state is
    # admitted, from its predecessor's, so reading an answer's paths walks nothing.
    paths: dict[_State, tuple[Hop, ...]] = field(default_factory=dict)
    best: dict[str, _Arrival] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)
    truncated: bool = False

    def offer(self, node_id: str, arrival: _Arrival) -> None:
        """Keep ``arrival`` at ``node_id`` if it is the first, or the first direct one.

        Arrivals come in breadth-first order, so the first of a kind is the shallowest.
        """
        if node_id in self.excluded:
            return
        known = self.best.get(node_id)
        if known is None or (known.impact is Impact.INDIRECT and arrival.impact is Impact.DIRECT):
            self.best[node_id] = arrival

    def room_for(self, node_ids: list[str]) -> bool:
        new = {n for n in node_ids if n not in self.best and n not in self.excluded}
        if len(self.best) + len(new) > self.max_nodes:
            self.truncated = True
            return False
        return True

    def hops(self, state: _State | None) -> tuple[Hop, ...]:
        return () if state is None else self.paths[state]


def column_walk(
    source: ImpactSource,
    walk: Walk,
    roots: list[str],
    depth: int,
    through: frozenset[str] | None = None,
) -> None:
    frontier: list[_State] = []
    for root in roots:
        walk.paths[(root, Impact.DIRECT)] = ()
        frontier.append((root, Impact.DIRECT))
    for level in range(1, depth + 1):
        if not frontier:
            break
        out_of: dict[str, list[Edge]] = defaultdict(list)
        for edge in _fanned_out(source, sorted({n for n, _ in frontier})):
            out_of[edge.upstream].append(edge)
        arrivals: dict[_State, tuple[_State, Hop]] = {}
        for near in frontier:
            for edge in out_of.get(near[0], ()):
                if level == 1 and through is not None and edge.via not in through:
                    continue
                kind = edge_impact(edge)
                if not walk.filters.admits(edge.downstream, edge.via, kind):
                    continue
                both_direct = near[1] is Impact.DIRECT and kind is Impact.DIRECT
                reached = Impact.DIRECT if both_direct else Impact.INDIRECT
                far = edge.downstream
                if (far, Impact.DIRECT) in walk.paths or (far, reached) in walk.paths:
                    continue  # reached as well or better at a shallower depth
                if (far, reached) in arrivals:
                    continue
                subtypes = tuple(sorted({tr.subtype for tr in edge.transformations if tr.subtype}))
                hop = Hop(near[0], far, edge.via, kind, subtypes)
                arrivals[(far, reached)] = (near, hop)
        next_frontier: list[_State] = []
        for far_state, (near, hop) in sorted(arrivals.items(), key=_arrival_order):
            far, reached = far_state
            if reached is Impact.INDIRECT and (far, Impact.DIRECT) in arrivals:
                continue  # reached directly at the same depth: the indirect state adds nothing
            dataset = _dataset_of(far)
            members = [far, dataset] + ([hop.via] if hop.via else [])
            if not walk.room_for(members):
                continue
            walk.paths[far_state] = walk.paths[near] + (hop,)
            arrival = _Arrival(level, reached, far_state)
            walk.offer(far, arrival)
            if dataset != far:
                walk.offer(dataset, arrival)
                next_frontier.append(far_state)
            if hop.via is not None:
                walk.offer(hop.via, _Arrival(level, reached, near, (_job_step(hop),)))
        frontier = next_frontier


def _arrival_order(item: tuple[_State, tuple[_State, Hop]]) -> tuple[int, str]:
    # Direct states first, so a node reached both ways at one depth keeps the direct one.
    (far, reached), _ = item
    return (0 if reached is Impact.DIRECT else 1, far)


def _job_step(hop: Hop) -> Hop:
    """The step from a column into the job that reads it (the path to a job ends there)."""
    assert hop.via is not None
    return Hop(hop.upstream, hop.via, None, hop.impact, hop.subtypes)


def _fanned_out(source: ImpactSource, fields: list[str]) -> list[Edge]:
    """Downstream column edges of ``fields``, dataset-level ones fanned out to every field
    of their target (kept as an edge to the dataset when its fields are unknown)."""
    edges = source.edges_from(fields, Direction.DOWNSTREAM)
    to_datasets = [e for e in edges if e.downstream.startswith("dataset:")]
    if not to_datasets:
        return edges
    fields_by_dataset: dict[str, list[str]] = defaultdict(list)
    for field_id in source.fields_of(sorted({e.downstream for e in to_datasets})):
        fields_by_dataset[_dataset_of(field_id)].append(field_id)
    result = [e for e in edges if not e.downstream.startswith("dataset:")]
    for edge in to_datasets:
        targets = sorted(fields_by_dataset.get(edge.downstream, ())) or [edge.downstream]
        result += [Edge(edge.upstream, t, edge.via, edge.transformations) for t in targets]
    return result


def table_walk(
    tables: NeighbourSource,
    walk: Walk,
    start: str,
    depth: int,
    first: Start | None = None,
) -> None:
    """Dataset -> job -> dataset, ``2 * depth`` edges; adds only what columns did not reach.

    ``first`` says which readers of ``start`` the walk may leave it through.
    """
    came_from: dict[str, str | None] = {start: None}
    frontier = [start]
    for distance in range(1, 2 * depth + 1):
        if not frontier:
            break
        next_frontier = []
        for edge in tables.edges_from(frontier, Direction.DOWNSTREAM):
            far = edge.downstream
            if edge.upstream not in came_from or far in came_from:
                continue
            job = far if far.startswith("job:") else edge.upstream
            if distance == 1 and first is not None and not _may_leave(first, far):
                continue
            if not walk.filters.admits(far, job, Impact.DIRECT):
                continue
            if not walk.room_for([far]):
                continue
            came_from[far] = edge.upstream
            next_frontier.append(far)
            if far not in walk.best:
                hops = _table_hops(came_from, far)
                walk.offer(far, _Arrival((distance + 1) // 2, Impact.DIRECT, None, hops))
        frontier = next_frontier


def _may_leave(start: Start, job: str) -> bool:
    return job not in start.covered and (start.through is None or job in start.through)


def _table_hops(came_from: dict[str, str | None], node_id: str) -> tuple[Hop, ...]:
    """The table path to ``node_id``: one hop per job between datasets, and a last step
    into a job when the path ends at one."""
    ids = [node_id]
    while (previous := came_from[ids[-1]]) is not None:
        ids.append(previous)
    ids.reverse()
    hops = [Hop(ids[i], ids[i + 2], ids[i + 1], Impact.DIRECT) for i in range(0, len(ids) - 2, 2)]
    if len(ids) % 2 == 0:
        hops.append(Hop(ids[-2], ids[-1], None, Impact.DIRECT))
    return tuple(hops)
