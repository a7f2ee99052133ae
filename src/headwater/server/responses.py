"""Response models of the read API, in Marquez's JSON shapes.

Field names are Marquez's, camelCase as it spells them, so the ``marquez-python``
client and other Marquez-speaking tools read headwater unchanged. Timestamps
serialise as ISO-8601 in UTC. Facets are free-form JSON, returned as stored.

The lineage answers, Marquez's and headwater's own (``/api/v2/lineage``), are in
:mod:`headwater.server.lineage_responses`.
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
    "InputDatasetVersion",
    "JobId",
    "JobList",
    "JobResponse",
    "JobVersionId",
    "JobVersionList",
    "JobVersionResponse",
    "NamespaceList",
    "NamespaceResponse",
    "OutputDatasetVersion",
    "ResponseModel",
    "RunList",
    "RunResponse",
    "SearchResult",
    "SearchResultList",
    "SourceList",
    "SourceResponse",
    "TagList",
    "TagResponse",
]


class ResponseModel(BaseModel):
    """The base of every response model: fields filled by name or alias."""

    model_config = ConfigDict(populate_by_name=True)


#: A list's ``nextCursor`` (a headwater addition Marquez clients ignore).
_NEXT_CURSOR: Any = Field(
    None,
    description="Pass as `cursor` for the page after this one; null on the last page.",
)


class ErrorResponse(ResponseModel):
    """The body of every 4xx answer: what went wrong, and which parameter if one did."""

    error: str
    field: str | None = None


# --- namespaces, sources, tags -----------------------------------------------------------


class NamespaceResponse(ResponseModel):
    name: str
    createdAt: datetime
    updatedAt: datetime
    ownerName: str | None = None
    description: str | None = None
    isHidden: bool = False


class NamespaceList(ResponseModel):
    namespaces: list[NamespaceResponse]
    totalCount: int


class SourceResponse(ResponseModel):
    type: str
    name: str
    createdAt: datetime
    updatedAt: datetime
    connectionUrl: str | None = None
    description: str | None = None


class SourceList(ResponseModel):
    sources: list[SourceResponse]
    totalCount: int


class TagResponse(ResponseModel):
    name: str
    description: str | None = None


class TagList(ResponseModel):
    tags: list[TagResponse]


# --- datasets ------------------------------------------------------------------------------


class DatasetId(ResponseModel):
    namespace: str
    name: str


class DatasetVersionId(ResponseModel):
    namespace: str
    name: str
    version: str


class DatasetField(ResponseModel):
    name: str
    type: str | None = None
    tags: list[str] = Field(default_factory=list)
    description: str | None = None


class ColumnLineageInputField(ResponseModel):
    namespace: str
    dataset: str
    field: str
    transformationDescription: str | None = None
    transformationType: str | None = None


class ColumnLineageEntry(ResponseModel):
    name: str
    inputFields: list[ColumnLineageInputField]
    transformationDescription: str | None = None
    transformationType: str | None = None


class DatasetResponse(ResponseModel):
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


class DatasetList(ResponseModel):
    datasets: list[DatasetResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


# --- runs and jobs -------------------------------------------------------------------------


class JobId(ResponseModel):
    namespace: str
    name: str


class JobVersionId(ResponseModel):
    namespace: str
    name: str
    version: str


class InputDatasetVersion(ResponseModel):
    datasetVersionId: DatasetVersionId
    facets: dict[str, Any] = Field(default_factory=dict)


class OutputDatasetVersion(ResponseModel):
    datasetVersionId: DatasetVersionId
    facets: dict[str, Any] = Field(default_factory=dict)


RunState = Literal["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]


class RunResponse(ResponseModel):
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


class RunList(ResponseModel):
    runs: list[RunResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class ChildRun(RunResponse):
    """A run in the child-runs list: the run plus the job it belongs to."""

    job: JobId


class ChildRunList(ResponseModel):
    runs: list[ChildRun]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class FacetsResponse(ResponseModel):
    runId: str
    facets: dict[str, Any]


class DatasetVersionResponse(ResponseModel):
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


class DatasetVersionList(ResponseModel):
    versions: list[DatasetVersionResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class JobResponse(ResponseModel):
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


class JobList(ResponseModel):
    jobs: list[JobResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


class JobVersionResponse(ResponseModel):
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


class JobVersionList(ResponseModel):
    versions: list[JobVersionResponse]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR


# --- search, events ------------------------------------------------------------------------


class SearchResult(ResponseModel):
    type: Literal["DATASET", "JOB"]
    name: str
    updatedAt: datetime
    namespace: str
    nodeId: str


class SearchResultList(ResponseModel):
    totalCount: int
    results: list[SearchResult]
    nextCursor: str | None = _NEXT_CURSOR


class EventList(ResponseModel):
    events: list[dict[str, Any]]
    totalCount: int
    nextCursor: str | None = _NEXT_CURSOR
