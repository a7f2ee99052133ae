"""Lineage answers: Marquez's undirected graph (``/api/v1``) and headwater's directed
lineage, run lineage and impact (``/api/v2``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "DirectedLineage",
    "GraphEdge",
    "GraphNode",
    "Impact",
    "ImpactNode",
    "ImpactSummary",
    "LineageEdge",
    "LineageGraph",
    "LineageNode",
    "Transformation",
    "UpstreamRun",
    "UpstreamRunInput",
    "UpstreamRunJob",
    "UpstreamRunLineage",
    "UpstreamRunSummary",
]


@dataclass(frozen=True, kw_only=True)
class GraphEdge:
    origin: str
    destination: str


@dataclass(frozen=True, kw_only=True)
class GraphNode:
    """A node of Marquez's graph; ``data`` is the dataset, job or column it stands for."""

    id: str
    type: str
    inEdges: tuple[GraphEdge, ...]
    outEdges: tuple[GraphEdge, ...]
    data: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class LineageGraph:
    """``GET /api/v1/lineage`` and ``/api/v1/column-lineage``: Marquez's graph shape."""

    graph: tuple[GraphNode, ...]


@dataclass(frozen=True, kw_only=True)
class Transformation:
    """How a column edge transforms its input (OpenLineage's columnLineage types)."""

    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool = False


@dataclass(frozen=True, kw_only=True)
class LineageNode:
    id: str
    type: str
    data: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class LineageEdge:
    """Data flows from ``upstream`` to ``downstream`` (``via`` the job of a column edge)."""

    upstream: str
    downstream: str
    via: str | None = None
    transformations: tuple[Transformation, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DirectedLineage:
    """``GET /api/v2/lineage``: what ``nodeId`` comes from and/or feeds, as of a time."""

    nodeId: str
    direction: str
    depth: int
    maxNodes: int
    truncated: bool
    nodes: tuple[LineageNode, ...]
    edges: tuple[LineageEdge, ...]
    asOf: datetime | None = None
    #: Nodes kept in the answer that have neighbours ``maxNodes`` left out: ask for one
    #: of them to reach past the cut.
    truncatedNodes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class UpstreamRunJob:
    namespace: str
    name: str
    version: str | None = None


@dataclass(frozen=True, kw_only=True)
class UpstreamRunSummary:
    id: str
    status: str
    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class UpstreamRunInput:
    namespace: str
    name: str
    version: str
    producedByRunId: str | None = None


@dataclass(frozen=True, kw_only=True)
class UpstreamRun:
    job: UpstreamRunJob
    run: UpstreamRunSummary
    inputs: tuple[UpstreamRunInput, ...]


@dataclass(frozen=True, kw_only=True)
class UpstreamRunLineage:
    """``GET /api/v1/runlineage/upstream``: the runs that produced what a run read."""

    runs: tuple[UpstreamRun, ...]


@dataclass(frozen=True, kw_only=True)
class ImpactNode:
    """A node a change reaches; ``impact`` is ``direct`` or ``indirect``."""

    id: str
    type: str
    depth: int
    impact: str
    path: tuple[str, ...]
    pathEdges: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ImpactSummary:
    datasets: int
    columns: int
    jobs: int
    direct: int
    indirect: int


@dataclass(frozen=True, kw_only=True)
class Impact:
    """``GET /api/v2/impact``: everything downstream a change to ``start`` reaches."""

    start: str
    depth: int
    edges: str
    maxNodes: int
    truncated: bool
    nodes: tuple[ImpactNode, ...]
    summary: ImpactSummary
    asOf: datetime | None = None
