"""Response models of the lineage reads: Marquez's graph and upstream run lineage
(``/api/v1/lineage``, ``/api/v1/runlineage/upstream``) and headwater's directed graph
(``/api/v2/lineage``).

Like the other read models (:mod:`headwater.server.responses`), field names are camelCase
as the API spells them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from headwater.server.responses import ResponseModel, RunState

__all__ = [
    "GraphEdge",
    "GraphNode",
    "LineageGraph",
    "UpstreamRun",
    "UpstreamRunInput",
    "UpstreamRunJob",
    "UpstreamRunLineage",
    "UpstreamRunSummary",
    "V2Edge",
    "V2Graph",
    "V2Node",
    "V2Transformation",
]


# --- lineage (Marquez v1) ------------------------------------------------------------------


class GraphEdge(ResponseModel):
    origin: str
    destination: str


class GraphNode(ResponseModel):
    id: str
    type: str
    data: dict[str, Any] | None = None
    inEdges: list[GraphEdge]
    outEdges: list[GraphEdge]


class LineageGraph(ResponseModel):
    graph: list[GraphNode]


class UpstreamRunJob(ResponseModel):
    namespace: str
    name: str
    version: str | None = None


class UpstreamRunSummary(ResponseModel):
    id: str
    start: datetime | None = None
    end: datetime | None = None
    status: RunState


class UpstreamRunInput(ResponseModel):
    namespace: str
    name: str
    version: str
    producedByRunId: str | None = None


class UpstreamRun(ResponseModel):
    job: UpstreamRunJob
    run: UpstreamRunSummary
    inputs: list[UpstreamRunInput]


class UpstreamRunLineage(ResponseModel):
    """``GET /api/v1/runlineage/upstream``: runs in hop order, each with what it read."""

    runs: list[UpstreamRun]


# --- headwater's directed graph (v2) -------------------------------------------------------


class V2Transformation(ResponseModel):
    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool = False


class V2Edge(ResponseModel):
    upstream: str
    downstream: str
    via: str | None = None
    transformations: list[V2Transformation] = Field(default_factory=list)


class V2Node(ResponseModel):
    id: str
    type: str
    data: dict[str, Any] | None = None


class V2Graph(ResponseModel):
    """``GET /api/v2/lineage``: a directed graph; ``truncated`` says ``maxNodes`` cut it."""

    nodeId: str
    direction: Literal["upstream", "downstream", "both"]
    depth: int
    asOf: datetime | None = None
    maxNodes: int
    truncated: bool
    #: Nodes of the answer with a neighbour ``maxNodes`` left out: ask for one of them to
    #: reach the rest.
    truncatedNodes: list[str] = []
    nodes: list[V2Node]
    edges: list[V2Edge]
