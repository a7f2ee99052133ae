"""The terms of impact analysis (:mod:`headwater.graph.impact`): how a change reaches
a node, what the walk reads, where it starts, what it may follow, and the answer.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Protocol

from headwater.graph.model import Edge, NodeId, NodeType
from headwater.graph.traverse import NeighbourSource

__all__ = [
    "Hop",
    "Impact",
    "ImpactAnswer",
    "ImpactFilter",
    "ImpactSource",
    "ImpactedNode",
    "Start",
    "edge_impact",
]


class Impact(enum.Enum):
    """How a change reaches a node (or how an edge carries it)."""

    DIRECT = "direct"
    INDIRECT = "indirect"

    # Members are singletons compared by identity; hashed by identity too, the walk's
    # (node, impact) keys hash in C (Enum's own hash is a Python call per lookup).
    __hash__ = object.__hash__


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
    #: The ids this hop adds to a path: the job it crosses (if any), then ``downstream``.
    steps: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        key = (self.impact, self.subtypes)
        label = _LABELS.get(key)
        if label is None:
            label = self.impact.value
            if self.subtypes:
                label += ":" + ",".join(self.subtypes)
            if len(_LABELS) < 1_024:
                _LABELS[key] = label
        object.__setattr__(self, "label", label)
        steps = (self.downstream,) if self.via is None else (self.via, self.downstream)
        object.__setattr__(self, "steps", steps)


# (impact, subtypes) -> Hop.label: an answer's hops share a few labels.
_LABELS: dict[tuple[Impact, tuple[str, ...]], str] = {}


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
        # Joined in C: an answer builds the path of each of up to maxNodes nodes.
        ids = [self.hops[0].upstream, *chain.from_iterable(map(_STEPS, self.hops))]
        if ids[-1] != self.id:
            ids.append(self.id)  # a dataset after its column, a job after its input
        return ids

    @property
    def path_edges(self) -> list[str]:
        """The :attr:`Hop.label` of each edge on the path, one per job crossed."""
        return list(map(_LABEL, self.hops))


_STEPS = attrgetter("steps")
_LABEL = attrgetter("label")


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
