"""The breadth-first walks behind :func:`headwater.graph.impact.impact_from`: over
column edges, and over table lineage for what columns do not reach, with the
bookkeeping they share (the best arrival at each node, the paths, the node bound).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from headwater.graph.impact_model import Hop, Impact, ImpactFilter, ImpactSource, Start, edge_impact
from headwater.graph.model import Direction, Edge, Transformation
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
    # A large answer admits thousands of states per level: the admission below works
    # on local names, and Walk.offer and Walk.room_for are written out for a column
    # state (_offer, _room_for), their calls and lists costing more than the rest.
    paths, best, excluded = walk.paths, walk.best, walk.excluded
    direct, indirect = Impact.DIRECT, Impact.INDIRECT
    filters = walk.filters
    unfiltered = filters.namespaces is None and filters.jobs is None
    kinds = filters.kinds
    for level in range(1, depth + 1):
        if not frontier:
            break
        out_of: dict[str, list[tuple[Edge, Impact, tuple[str, ...]]]] = defaultdict(list)
        for edge in _fanned_out(source, sorted({n for n, _ in frontier})):
            if level == 1 and through is not None and edge.via not in through:
                continue
            kind = edge_impact(edge)
            if kind not in kinds:
                continue
            if not unfiltered and not filters.admits(edge.downstream, edge.via, kind):
                continue
            out_of[edge.upstream].append((edge, kind, _subtypes(edge.transformations)))
        # far state -> (near state, job, edge kind, subtypes): its Hop is made on admission.
        arrivals: dict[_State, tuple[_State, str | None, Impact, tuple[str, ...]]] = {}
        for near in frontier:
            near_direct = near[1] is direct
            for edge, kind, subtypes in out_of.get(near[0], ()):
                far = edge.downstream
                reached = direct if near_direct and kind is direct else indirect
                far_state = (far, reached)
                if (far, direct) in paths or far_state in paths:
                    continue  # reached as well or better at a shallower depth
                if far_state in arrivals:
                    continue
                arrivals[far_state] = (near, edge.via, kind, subtypes)
        next_frontier: list[_State] = []
        for far_state in sorted(arrivals, key=_arrival_order):
            far, reached = far_state
            if reached is indirect and (far, direct) in arrivals:
                continue  # reached directly at the same depth: the indirect state adds nothing
            near, via, kind, subtypes = arrivals[far_state]
            dataset = _dataset_of(far)
            if not _room_for(walk, far, dataset, via):
                continue
            hop = Hop(near[0], far, via, kind, subtypes)
            paths[far_state] = paths[near] + (hop,)
            arrival = _Arrival(level, reached, far_state)
            _offer(best, excluded, far, arrival)
            if dataset != far:
                _offer(best, excluded, dataset, arrival)
                next_frontier.append(far_state)
            if via is not None and via not in excluded:
                known = best.get(via)
                if known is None or (known.impact is indirect and reached is direct):
                    best[via] = _Arrival(level, reached, near, (_job_step(hop),))
        frontier = next_frontier


def _offer(best: dict[str, _Arrival], excluded: set[str], node_id: str, arrival: _Arrival) -> None:
    """:meth:`Walk.offer` over the walk's own dictionaries."""
    if node_id in excluded:
        return
    known = best.get(node_id)
    if known is None or (known.impact is Impact.INDIRECT and arrival.impact is Impact.DIRECT):
        best[node_id] = arrival


def _room_for(walk: Walk, far: str, dataset: str, via: str | None) -> bool:
    """:meth:`Walk.room_for` of a column state's nodes: the column, its dataset (the
    same node when the edge ends at a dataset) and the job it came through."""
    best, excluded = walk.best, walk.excluded
    new = 0
    if far not in best and far not in excluded:
        new += 1
    if dataset != far and dataset not in best and dataset not in excluded:
        new += 1
    if via and via not in best and via not in excluded:
        new += 1
    if len(best) + new > walk.max_nodes:
        walk.truncated = True
        return False
    return True


# One shared tuple per subtype of a single-transformation edge (most edges): a walk
# meets the same few subtypes on thousands of edges. Bounded: subtypes are free text.
_SINGLE_SUBTYPES: dict[str, tuple[str, ...]] = {}


def _subtypes(transformations: tuple[Transformation, ...]) -> tuple[str, ...]:
    """The sorted distinct subtypes of an edge's transformations."""
    if len(transformations) == 1:
        subtype = transformations[0].subtype
        if not subtype:
            return ()
        found = _SINGLE_SUBTYPES.get(subtype)
        if found is None:
            found = (subtype,)
            if len(_SINGLE_SUBTYPES) < 1_024:
                _SINGLE_SUBTYPES[subtype] = found
        return found
    return tuple(sorted({tr.subtype for tr in transformations if tr.subtype}))


def _arrival_order(state: _State) -> tuple[int, str]:
    # Direct states first, so a node reached both ways at one depth keeps the direct one.
    far, reached = state
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
