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
"""

from __future__ import annotations

import csv
import enum
import io
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from headwater.graph.model import Direction, Edge, NodeId, NodeType
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

#: The columns of the CSV form of an answer, one row per impacted node.
CSV_COLUMNS = ("id", "type", "depth", "impact", "path", "pathEdges")


class Impact(enum.Enum):
    """How a change reaches a node (or how an edge carries it)."""

    DIRECT = "direct"
    INDIRECT = "indirect"


class ImpactSource(NeighbourSource, Protocol):
    """Downstream column edges (ending at a field, or at a dataset for dataset-level
    entries) and the fields of datasets."""

    def fields_of(self, dataset_ids: Collection[str]) -> list[str]:
        """The ``datasetField`` node ids of the given ``dataset`` node ids."""
        ...


@dataclass(frozen=True, slots=True)
class ImpactFilter:
    """What the walk may follow; ``None`` means no restriction.

    ``namespaces``: the namespaces a downstream node may be in; ``jobs``: the job node
    ids an edge may come through; ``kinds``: the kinds of edge followed.
    """

    namespaces: frozenset[str] | None = None
    jobs: frozenset[str] | None = None
    kinds: frozenset[Impact] = frozenset(Impact)

    def admits(self, node_id: str, via: str | None, kind: Impact) -> bool:
        if kind not in self.kinds:
            return False
        if self.jobs is not None and via not in self.jobs:
            return False
        if self.namespaces is not None:
            if NodeId.parse(node_id).namespace not in self.namespaces:
                return False
            if via is not None and NodeId.parse(via).namespace not in self.namespaces:
                return False
        return True


@dataclass(frozen=True, slots=True)
class Hop:
    """One edge of a path: ``upstream`` to ``downstream`` through the job ``via``."""

    upstream: str
    downstream: str
    via: str | None
    impact: Impact
    subtypes: tuple[str, ...] = ()
    #: ``direct`` or ``indirect``, then the subtypes: ``indirect:FILTER``. Set once: a
    #: hop is on the path of every node beyond it.
    label: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        label = self.impact.value
        if self.subtypes:
            label += ":" + ",".join(self.subtypes)
        object.__setattr__(self, "label", label)


@dataclass(frozen=True, slots=True)
class ImpactedNode:
    """A node the change reaches, ``depth`` jobs away, with one shortest path to it."""

    id: str
    type: NodeType
    depth: int
    impact: Impact
    hops: tuple[Hop, ...]

    @property
    def path(self) -> list[str]:
        """The node ids from the start to this node: columns (or datasets) and jobs."""
        if not self.hops:
            return [self.id]
        ids = [self.hops[0].upstream]
        for hop in self.hops:
            if hop.via is not None:
                ids.append(hop.via)
            ids.append(hop.downstream)
        if ids[-1] != self.id:
            ids.append(self.id)  # a dataset after its column, a job after its input
        return ids

    @property
    def path_edges(self) -> list[str]:
        """The :attr:`Hop.label` of each edge on the path, one per job crossed."""
        return [hop.label for hop in self.hops]


@dataclass(frozen=True, slots=True)
class ImpactAnswer:
    start: str
    depth: int
    nodes: tuple[ImpactedNode, ...]
    truncated: bool

    def summary(self) -> dict[str, int]:
        types = [n.type for n in self.nodes]
        return {
            "datasets": types.count(NodeType.DATASET),
            "columns": types.count(NodeType.DATASET_FIELD),
            "jobs": types.count(NodeType.JOB),
            "direct": sum(1 for n in self.nodes if n.impact is Impact.DIRECT),
            "indirect": sum(1 for n in self.nodes if n.impact is Impact.INDIRECT),
        }


def edge_impact(edge: Edge) -> Impact:
    """Indirect when every transformation of ``edge`` is ``INDIRECT``; else direct."""
    if not edge.transformations:
        return Impact.DIRECT
    for tr in edge.transformations:
        if tr.type != "INDIRECT":
            return Impact.DIRECT
    return Impact.INDIRECT


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
class _Walk:
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


@dataclass(frozen=True, slots=True)
class Start:
    """Where a walk begins: the changed ``node`` (a dataset or a column) and ``columns``,
    the fields the change is in (the column walk's roots).

    ``through`` limits the first column step to these jobs (a change only one consumer
    sees, as a contract drift's), in the table walk too. The table walk out of a
    dataset ``node`` never leaves through a job in ``covered`` (readers whose column
    lineage says which columns they use).
    """

    node: str
    columns: tuple[str, ...]
    through: frozenset[str] | None = None
    covered: frozenset[str] = frozenset()


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
    state = _Walk(filters or ImpactFilter(), max_nodes)
    state.excluded = {str(node), str(node.dataset_id), *roots}
    _column_walk(source, state, roots, depth, start.through)
    if node.type is NodeType.DATASET and tables is not None:
        if Impact.DIRECT in state.filters.kinds:
            _table_walk(tables, state, str(node), depth, start)
    nodes = []
    for node_id, arrival in state.best.items():
        hops = state.hops(arrival.state) + arrival.tail
        nodes.append(ImpactedNode(node_id, _type_of(node_id), arrival.depth, arrival.impact, hops))
    nodes.sort(key=lambda n: (n.depth, n.type.value, n.id))
    return ImpactAnswer(str(node), depth, tuple(nodes), state.truncated)


def _column_walk(
    source: ImpactSource,
    walk: _Walk,
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


def _type_of(node_id: str) -> NodeType:
    if node_id.startswith("datasetField:"):
        return NodeType.DATASET_FIELD
    return NodeType.JOB if node_id.startswith("job:") else NodeType.DATASET


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


def _table_walk(
    tables: NeighbourSource,
    walk: _Walk,
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


def to_csv(answer: Mapping[str, Any]) -> str:
    """The CSV form of an ``/api/v2/impact`` JSON answer: one row per impacted node, its
    path's ids joined by ``" > "`` and the kind of each edge on it joined likewise.

    It reads the JSON form so that the server and a CLI talking to it write the same rows.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for node in answer["nodes"]:
        path, kinds = " > ".join(node["path"]), " > ".join(node["pathEdges"])
        writer.writerow([node["id"], node["type"], node["depth"], node["impact"], path, kinds])
    return out.getvalue()
