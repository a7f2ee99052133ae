"""Tag propagation along column lineage (pure: no SQL, no HTTP).

A tag put on a column (or on a whole dataset, which puts it on every column of
the dataset that lineage reads) *propagates* when its definition says so
(:func:`propagates`): it travels along column-lineage edges to every
downstream column it reaches, and each column it reaches records how
(:class:`Propagated`: the origin and the hops, each with its job and
transformation).

Which edges carry a tag:

=============================================  =========  ==============================
edge                                            carries?   recorded
=============================================  =========  ==============================
DIRECT (IDENTITY, TRANSFORMATION, AGGREGATION)  yes        the hop, in the provenance
or no transformation given
``masking: true`` (a hash, a count)             no         a :class:`Stop`, ``masking``
a user's block on the edge or its job           no         a :class:`Stop`, ``blocked``
INDIRECT (join keys, filters, group by, sort)   no         nothing: no value is copied
=============================================  =========  ==============================

A column that several edges of one job feed keeps the tag when any one of
them carries it: a masked copy next to an unmasked one is still a copy.

The walk is a breadth-first search per (tag, origin) over edges sorted by
(source, target, job, transformation), so each column reached keeps the
shortest path, the first in that order among equally short ones: the answer
is a function of the *sets* of seeds, edges and blocks, never of their order.
A ``max_nodes`` bound on the number of (column, tag, origin) answers stops a
runaway walk and says so (``truncated``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "DEFAULT_PROPAGATING",
    "Block",
    "ColumnEdge",
    "Propagated",
    "Propagation",
    "Seed",
    "Stop",
    "carries",
    "propagate",
    "propagates",
]

#: Tags that propagate unless a tag definition says otherwise (compared case-insensitively).
DEFAULT_PROPAGATING = frozenset({"pii", "gdpr", "confidential", "sensitive", "phi", "pci"})

#: Transformation types whose edges copy no value of the source into the target.
_NOT_DATA = frozenset({"INDIRECT"})


def propagates(tag: str, definitions: Mapping[str, bool]) -> bool:
    """Whether ``tag`` propagates: its definition's flag, else the default list."""
    if tag in definitions:
        return definitions[tag]
    return tag.casefold() in DEFAULT_PROPAGATING


@dataclass(frozen=True, slots=True, order=True)
class ColumnEdge:
    """One column-lineage edge as a job's current version reports it."""

    source: str  # datasetField node id (upstream)
    target: str  # datasetField node id (downstream)
    job: str  # job node id
    transformation_type: str = ""  # '' when the producer gave none
    transformation_subtype: str = ""
    masking: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"source": self.source, "target": self.target, "job": self.job,
                "transformationType": self.transformation_type,
                "transformationSubtype": self.transformation_subtype,
                "masking": self.masking}


@dataclass(frozen=True, slots=True)
class Block:
    """A user's stop: every edge of ``job`` (``source``/``target`` None), or one
    edge (both set); for one tag, or every tag (``tag`` None)."""

    id: int
    job: str
    source: str | None = None
    target: str | None = None
    tag: str | None = None

    def matches(self, edge: ColumnEdge, tag: str) -> bool:
        return (self.job == edge.job
                and (self.tag is None or self.tag == tag)
                and (self.source is None or self.source == edge.source)
                and (self.target is None or self.target == edge.target))


@dataclass(frozen=True, slots=True, order=True)
class Seed:
    """A propagating ``tag`` on column ``column``, put on ``origin`` (the column
    itself, or its dataset)."""

    column: str
    tag: str
    origin: str


@dataclass(frozen=True, slots=True)
class Propagated:
    """``tag`` reached ``column`` from ``origin`` along ``path`` (upstream first)."""

    column: str
    tag: str
    origin: str
    path: tuple[ColumnEdge, ...]

    def as_dict(self) -> dict[str, object]:
        return {"column": self.column, "tag": self.tag, "origin": self.origin,
                "path": [edge.as_dict() for edge in self.path]}


@dataclass(frozen=True, slots=True)
class Stop:
    """``tag`` from ``origin`` reached ``edge.source`` and did not cross ``edge``:
    ``reason`` is ``masking`` or ``blocked`` (then ``block`` is the block's id)."""

    tag: str
    origin: str
    edge: ColumnEdge
    reason: str
    block: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {"tag": self.tag, "origin": self.origin, "edge": self.edge.as_dict(),
                "reason": self.reason, "block": self.block}


@dataclass(frozen=True, slots=True)
class Propagation:
    """Every column each seed's tag reached, and every edge where it stopped."""

    tags: tuple[Propagated, ...] = ()
    stops: tuple[Stop, ...] = ()
    truncated: bool = False

    def of(self, column: str) -> list[Propagated]:
        """The propagated tags of ``column``."""
        return [item for item in self.tags if item.column == column]


def carries(edge: ColumnEdge) -> bool:
    """Whether an edge copies values (a DIRECT edge or one of unknown kind)."""
    return edge.transformation_type.upper() not in _NOT_DATA


def propagate(seeds: Iterable[Seed], edges: Iterable[ColumnEdge],
              blocks: Iterable[Block] = (), *, max_nodes: int = 100_000) -> Propagation:
    """Walk each seed's tag downstream along ``edges`` (see the module doc)."""
    downstream: dict[str, list[ColumnEdge]] = {}
    for edge in sorted(set(edges)):
        if carries(edge) and edge.source != edge.target:
            downstream.setdefault(edge.source, []).append(edge)
    block_list = sorted(set(blocks), key=lambda b: b.id)
    # One walk per (tag, origin), from all of the origin's columns at once.
    starts: dict[tuple[str, str], set[str]] = {}
    for seed in set(seeds):
        starts.setdefault((seed.tag, seed.origin), set()).add(seed.column)
    found: list[Propagated] = []
    stops: set[Stop] = set()
    truncated = False
    for (tag, origin), columns in sorted(starts.items()):
        paths: dict[str, tuple[ColumnEdge, ...]] = {column: () for column in columns}
        queue = deque(sorted(columns))
        while queue and not truncated:
            column = queue.popleft()
            for edge in downstream.get(column, ()):
                stop = _stop(edge, tag, origin, block_list)
                if stop is not None:
                    stops.add(stop)
                    continue
                if edge.target in paths:
                    continue
                if len(found) >= max_nodes:
                    truncated = True
                    break
                path = (*paths[column], edge)
                paths[edge.target] = path
                found.append(Propagated(edge.target, tag, origin, path))
                queue.append(edge.target)
    ordered = sorted(found, key=lambda p: (p.column, p.tag, p.origin))
    return Propagation(tuple(ordered), tuple(sorted(stops, key=_stop_key)), truncated)


def _stop(edge: ColumnEdge, tag: str, origin: str, blocks: list[Block]) -> Stop | None:
    if edge.masking:
        return Stop(tag, origin, edge, "masking")
    for block in blocks:
        if block.matches(edge, tag):
            return Stop(tag, origin, edge, "blocked", block.id)
    return None


def _stop_key(stop: Stop) -> tuple[object, ...]:
    return (stop.tag, stop.origin, stop.edge, stop.reason, stop.block or 0)
