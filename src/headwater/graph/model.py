"""The lineage graph's vocabulary: node ids, nodes, directed edges, and a graph.

Node ids are the contract shared by the API, the CLI and the web UI (ARCHITECTURE.md,
contract 4)::

    dataset:{namespace}:{name}
    datasetField:{namespace}:{name}:{field}
    job:{namespace}:{name}
    run:{uuid}

Namespaces are often URIs that contain colons themselves (``postgres://db:5432``,
``kafka://broker:9092``), so :meth:`NodeId.parse` reads a ``scheme://authority``
namespace (authority with an optional numeric port) before the separating colon.

Every :class:`Edge` names its ends ``upstream`` (where data comes from) and
``downstream`` (where it goes) — never "source/target" or "parent/child", whose
meaning flips between tools.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "Direction",
    "Edge",
    "Graph",
    "Node",
    "NodeId",
    "NodeType",
    "Transformation",
]

# scheme://authority[:port] — the port must be digits so "kafka://h:9092:topic" splits
# after the port, while "s3://bucket:key" splits after the bucket.
_URI_NAMESPACE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://[^/:]*(?::\d+)?):(.+)$", re.DOTALL)


class NodeType(enum.Enum):
    """What a node stands for; the values are Marquez's node type names."""

    DATASET = "DATASET"
    DATASET_FIELD = "DATASET_FIELD"
    JOB = "JOB"
    RUN = "RUN"

    @property
    def prefix(self) -> str:
        """The node-id prefix of this type (``dataset``, ``datasetField``, ``job``, ``run``)."""
        return _PREFIXES[self]


_PREFIXES = {
    NodeType.DATASET: "dataset",
    NodeType.DATASET_FIELD: "datasetField",
    NodeType.JOB: "job",
    NodeType.RUN: "run",
}
_TYPES_BY_PREFIX = {prefix: node_type for node_type, prefix in _PREFIXES.items()}


class Direction(enum.Enum):
    """Which way a walk goes. ``BOTH`` means "upstream and downstream", never sideways."""

    UPSTREAM = "upstream"
    DOWNSTREAM = "downstream"
    BOTH = "both"


@dataclass(frozen=True, slots=True)
class NodeId:
    """A parsed node id. ``name`` is empty for runs; ``field`` is set only for dataset fields."""

    type: NodeType
    namespace: str = ""
    name: str = ""
    field: str = ""
    version: str | None = None

    @classmethod
    def dataset(cls, namespace: str, name: str) -> NodeId:
        return cls(NodeType.DATASET, namespace, name)

    @classmethod
    def job(cls, namespace: str, name: str) -> NodeId:
        return cls(NodeType.JOB, namespace, name)

    @classmethod
    def dataset_field(cls, namespace: str, name: str, field: str) -> NodeId:
        return cls(NodeType.DATASET_FIELD, namespace, name, field)

    @classmethod
    def run(cls, run_id: str) -> NodeId:
        return cls(NodeType.RUN, name=run_id)

    @classmethod
    def parse(cls, text: str) -> NodeId:
        """Parse a node id; raise :class:`ValueError` naming what is wrong.

        A ``#version`` suffix (Marquez's column-lineage spelling of a pinned
        version) is split off into :attr:`version`.
        """
        # Walks parse the same ids several times (frontier, answer, node data).
        return _parse_cached(text)

    @classmethod
    def _parse(cls, text: str) -> NodeId:
        prefix, sep, rest = text.partition(":")
        node_type = _TYPES_BY_PREFIX.get(prefix)
        if not sep or node_type is None:
            expected = ", ".join(f"'{p}:'" for p in _TYPES_BY_PREFIX)
            raise ValueError(f"node id {text!r} must start with one of {expected}")
        version: str | None = None
        if "#" in rest and node_type is not NodeType.RUN:
            rest, _, version = rest.rpartition("#")
        if node_type is NodeType.RUN:
            if not rest:
                raise ValueError(f"node id {text!r} has no run id")
            return cls(NodeType.RUN, name=rest)
        namespace, name = _split_namespace(rest, text)
        if node_type is NodeType.DATASET_FIELD:
            name, sep, field = name.rpartition(":")
            if not sep or not name or not field:
                raise ValueError(
                    f"node id {text!r} must look like 'datasetField:namespace:dataset:field'"
                )
            return cls(node_type, namespace, name, field, version)
        return cls(node_type, namespace, name, version=version)

    @property
    def dataset_id(self) -> NodeId:
        """The dataset a field belongs to (the node itself for a dataset)."""
        return NodeId(NodeType.DATASET, self.namespace, self.name)

    def __str__(self) -> str:
        if self.type is NodeType.RUN:
            return f"run:{self.name}"
        text = f"{self.type.prefix}:{self.namespace}:{self.name}"
        if self.type is NodeType.DATASET_FIELD:
            text += f":{self.field}"
        return text


@functools.lru_cache(maxsize=65_536)
def _parse_cached(text: str) -> NodeId:
    return NodeId._parse(text)


def _split_namespace(rest: str, text: str) -> tuple[str, str]:
    match = _URI_NAMESPACE.match(rest)
    if match:
        namespace, name = match.group(1), match.group(2)
    else:
        namespace, _, name = rest.partition(":")
    if not namespace or not name:
        raise ValueError(f"node id {text!r} needs both a namespace and a name")
    return namespace, name


@dataclass(frozen=True, slots=True)
class Node:
    """A node of a lineage graph; ``data`` carries the API's payload (not compared)."""

    id: str
    type: NodeType
    data: Mapping[str, object] | None = field(default=None, compare=False, hash=False)

    @classmethod
    def of(cls, node_id: str) -> Node:
        return cls(node_id, NodeId.parse(node_id).type)


@dataclass(frozen=True, slots=True)
class Transformation:
    """How a downstream column derives from an upstream one (OpenLineage columnLineage)."""

    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool = False


@dataclass(frozen=True, slots=True)
class Edge:
    """Data flows from ``upstream`` to ``downstream``.

    ``via`` names the job whose runs carry a column edge (``job:ns:name``);
    ``transformations`` lists how the downstream column was derived.
    """

    upstream: str
    downstream: str
    via: str | None = None
    transformations: tuple[Transformation, ...] = ()


@dataclass(frozen=True, slots=True)
class Graph:
    """The answer of a walk: its nodes and edges, and whether ``max_nodes`` cut it."""

    roots: tuple[str, ...]
    direction: Direction
    depth: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    truncated: bool = False
    #: Nodes in the answer with a neighbour ``max_nodes`` left out (a walk from one of
    #: them reaches what the cut hid).
    cut: frozenset[str] = frozenset()

    def node_ids(self) -> set[str]:
        return {node.id for node in self.nodes}

    def in_edges(self, node_id: str) -> list[Edge]:
        """Edges whose downstream end is ``node_id`` (data flowing in)."""
        return [edge for edge in self.edges if edge.downstream == node_id]

    def out_edges(self, node_id: str) -> list[Edge]:
        """Edges whose upstream end is ``node_id`` (data flowing out)."""
        return [edge for edge in self.edges if edge.upstream == node_id]

    def sources(self) -> list[str]:
        """Nodes with no incoming edge inside this graph (the raw ends of an upstream walk)."""
        has_input = {edge.downstream for edge in self.edges}
        return sorted(node.id for node in self.nodes if node.id not in has_input)
