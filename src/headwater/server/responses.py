"""Response models of the read API, in Marquez's JSON shapes.

Field names are Marquez's, camelCase as it spells them, so the ``marquez-python``
client and other Marquez-speaking tools read headwater unchanged. Timestamps
serialise as ISO-8601 in UTC. Facets are free-form JSON, returned as stored.

headwater's own shapes (``/api/v2/...``) are at the end of this module.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChildRun",
    "ChildRunList",
    "ColumnLineageEntry",
    "ColumnLineageInputField",
    "DatasetField",
    "DatasetId",
    "DatasetList",
    "DatasetResponse",
    "DatasetVersionId",
    "DatasetVersionList",
    "DatasetVersionResponse",
    "ErrorResponse",
    "EventList",
    "FacetsResponse",
    "GraphEdge",
    "GraphNode",
    "InputDatasetVersion",
    "JobId",
    "JobList",
    "JobResponse",
    "JobVersionId",
    "JobVersionList",
    "JobVersionResponse",
    "LineageGraph",
    "NamespaceList",
    "NamespaceResponse",
    "OutputDatasetVersion",
    "RunList",
    "RunResponse",
    "SearchResult",
    "SearchResultList",
    "SourceList",
    "SourceResponse",
    "TagList",
    "TagResponse",
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


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


#: A list's ``nextCursor`` (a headwater addition Marquez clients ignore).
_NEXT_CURSOR: Any = Field(
    None,
    description="Pass as `cursor` for the page after this one; null on the last page.",
)


class ErrorResponse(_Model):
    """The body of every 4xx answer: what went wrong, and which parameter if one did."""

    error: str
    field: str | None = None


# --- namespaces, sources, tags -----------------------------------------------------------


class NamespaceResponse(_Model):
    name: str
    createdAt: datetime
    updatedAt: datetime
    ownerName: str | None = None
    description: str | None = None
    isHidden: bool = False


class NamespaceList(_Model):
    namespaces: list[NamespaceResponse]
    totalCount: int


class SourceResponse(_Model):
    type: str
    name: str
    createdAt: datetime
    updatedAt: datetime
    connectionUrl: str | None = None
    description: str | None = None


class SourceList(_Model):
    sources: list[SourceResponse]
    totalCount: int


class TagResponse(_Model):
    name: str
    description: str | None = None


class TagList(_Model):
    tags: list[TagResponse]


# --- datasets ------------------------------------------------------------------------------


class DatasetId(_Model):
    namespace: str
    name: str


class DatasetVersionId(_Model):
    namespace: str
    name: str
    version: str


class DatasetField(_Model):
    name: str
    type: str | None = None
    tags: list[str] = Field(default_factory=list)
    description: str | None = None


class ColumnLineageInputField(_Model):
    namespace: str
    dataset: str
    field: str
    transformationDescription: str | None = None
    transformationType: str | None = None


class ColumnLineageEntry(_Model):
    name: str
    inputFields: list[ColumnLineageInputField]
    transformationDescription: str | None = None
    transformationType: str | None = None


class DatasetResponse(_Model):
    id: DatasetId
    type: str
    name: str
    physicalName: str
    createdAt: datetime
    updatedAt: datetime
    namespace: str
    sourceName: str
    fields: list[DatasetField]
    tags: list[str]
    lastModifiedAt: datetime | None = None
    lastLifecycleState: str | None = None
    description: str | None = None
    currentVersion: str | None = None
    columnLineage: list[ColumnLineageEntry] | None = None
    facets: dict[str, Any] = Field(default_factory=dict)
    deleted: bool = False


class DatasetList(_Model):
    datasets: list[DatasetResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


# --- runs and jobs -------------------------------------------------------------------------


class JobId(_Model):
    namespace: str
    name: str


class JobVersionId(_Model):
    namespace: str
    name: str
    version: str


class InputDatasetVersion(_Model):
    datasetVersionId: DatasetVersionId
    facets: dict[str, Any] = Field(default_factory=dict)


class OutputDatasetVersion(_Model):
    datasetVersionId: DatasetVersionId
    facets: dict[str, Any] = Field(default_factory=dict)


RunState = Literal["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]


class RunResponse(_Model):
    id: str
    createdAt: datetime
    updatedAt: datetime
    nominalStartTime: datetime | None = None
    nominalEndTime: datetime | None = None
    state: RunState
    startedAt: datetime | None = None
    endedAt: datetime | None = None
    durationMs: int | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    jobVersion: JobVersionId | None = None
    inputDatasetVersions: list[InputDatasetVersion] = Field(default_factory=list)
    outputDatasetVersions: list[OutputDatasetVersion] = Field(default_factory=list)
    context: dict[str, Any] = Field(default_factory=dict)
    facets: dict[str, Any] = Field(default_factory=dict)


class RunList(_Model):
    runs: list[RunResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class ChildRun(RunResponse):
    """A run in the child-runs list: the run plus the job it belongs to."""

    job: JobId


class ChildRunList(_Model):
    runs: list[ChildRun]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class FacetsResponse(_Model):
    runId: str
    facets: dict[str, Any]


class DatasetVersionResponse(_Model):
    id: DatasetVersionId
    type: str
    name: str
    physicalName: str
    createdAt: datetime
    version: str
    namespace: str
    sourceName: str
    fields: list[DatasetField]
    tags: list[str]
    lifecycleState: str | None = None
    description: str | None = None
    createdByRun: RunResponse | None = None
    facets: dict[str, Any] = Field(default_factory=dict)


class DatasetVersionList(_Model):
    versions: list[DatasetVersionResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class JobResponse(_Model):
    id: JobId
    type: str
    name: str
    simpleName: str
    parentJobName: str | None = None
    parentJobUuid: str | None = None
    createdAt: datetime
    updatedAt: datetime
    namespace: str
    inputs: list[DatasetId]
    outputs: list[DatasetId]
    location: str | None = None
    description: str | None = None
    latestRun: RunResponse | None = None
    latestRuns: list[RunResponse] = Field(default_factory=list)
    facets: dict[str, Any] = Field(default_factory=dict)
    currentVersion: str | None = None
    tags: list[str] = Field(default_factory=list)


class JobList(_Model):
    jobs: list[JobResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class JobVersionResponse(_Model):
    id: JobVersionId
    name: str
    version: str
    createdAt: datetime
    namespace: str
    inputs: list[DatasetId]
    outputs: list[DatasetId]
    location: str | None = None
    latestRun: RunResponse | None = None
    facets: dict[str, Any] = Field(default_factory=dict)


class JobVersionList(_Model):
    versions: list[JobVersionResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


# --- lineage (Marquez v1), search, events --------------------------------------------------


class GraphEdge(_Model):
    origin: str
    destination: str


class GraphNode(_Model):
    id: str
    type: str
    data: dict[str, Any] | None = None
    inEdges: list[GraphEdge]
    outEdges: list[GraphEdge]


class LineageGraph(_Model):
    graph: list[GraphNode]


class UpstreamRunJob(_Model):
    namespace: str
    name: str
    version: str | None = None


class UpstreamRunSummary(_Model):
    id: str
    start: datetime | None = None
    end: datetime | None = None
    status: RunState


class UpstreamRunInput(_Model):
    namespace: str
    name: str
    version: str
    producedByRunId: str | None = None


class UpstreamRun(_Model):
    job: UpstreamRunJob
    run: UpstreamRunSummary
    inputs: list[UpstreamRunInput]


class UpstreamRunLineage(_Model):
    """``GET /api/v1/runlineage/upstream``: runs in hop order, each with what it read."""

    runs: list[UpstreamRun]


class SearchResult(_Model):
    type: Literal["DATASET", "JOB"]
    name: str
    updatedAt: datetime
    namespace: str
    nodeId: str


class SearchResultList(_Model):
    totalCount: int
    results: list[SearchResult]
    nextCursor: str | None = _NEXT_CURSOR


class EventList(_Model):
    events: list[dict[str, Any]]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


# --- headwater's directed graph (v2) -------------------------------------------------------


class V2Transformation(_Model):
    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool = False


class V2Edge(_Model):
    upstream: str
    downstream: str
    via: str | None = None
    transformations: list[V2Transformation] = Field(default_factory=list)


class V2Node(_Model):
    id: str
    type: str
    data: dict[str, Any] | None = None


class V2Graph(_Model):
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
