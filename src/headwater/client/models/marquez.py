"""The Marquez-compatible ``/api/v1`` answers: namespaces, sources, datasets, jobs, runs.

Fields are named as the API spells them (camelCase), so a model reads like the
JSON documented at ``/openapi.json``; times are ``datetime``, free-form facets
``dict[str, Any]``. Every list answer has an ``items`` property, which the
clients' ``iter_*`` methods page through, and most a ``totalCount``; the
keyset-paged ones a ``nextCursor`` too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "ChildRun",
    "ChildRunList",
    "ColumnLineageEntry",
    "ColumnLineageInputField",
    "Dataset",
    "DatasetField",
    "DatasetId",
    "DatasetList",
    "DatasetVersion",
    "DatasetVersionId",
    "DatasetVersionList",
    "EventList",
    "InputDatasetVersion",
    "Job",
    "JobId",
    "JobList",
    "JobVersion",
    "JobVersionId",
    "JobVersionList",
    "Namespace",
    "NamespaceList",
    "OutputDatasetVersion",
    "Run",
    "RunFacets",
    "RunList",
    "SearchResult",
    "SearchResultList",
    "Source",
    "SourceList",
    "Tag",
    "TagList",
]

Facets = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Namespace:
    name: str
    createdAt: datetime
    updatedAt: datetime
    ownerName: str | None = None
    description: str | None = None
    isHidden: bool = False


@dataclass(frozen=True, kw_only=True)
class NamespaceList:
    namespaces: tuple[Namespace, ...]
    totalCount: int

    @property
    def items(self) -> tuple[Namespace, ...]:
        return self.namespaces


@dataclass(frozen=True, kw_only=True)
class Source:
    type: str
    name: str
    createdAt: datetime
    updatedAt: datetime
    connectionUrl: str | None = None
    description: str | None = None


@dataclass(frozen=True, kw_only=True)
class SourceList:
    sources: tuple[Source, ...]
    totalCount: int

    @property
    def items(self) -> tuple[Source, ...]:
        return self.sources


@dataclass(frozen=True, kw_only=True)
class DatasetId:
    namespace: str
    name: str


@dataclass(frozen=True, kw_only=True)
class DatasetField:
    name: str
    type: str | None = None
    tags: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True, kw_only=True)
class ColumnLineageInputField:
    namespace: str
    dataset: str
    field: str
    transformationDescription: str | None = None
    transformationType: str | None = None


@dataclass(frozen=True, kw_only=True)
class ColumnLineageEntry:
    name: str
    inputFields: tuple[ColumnLineageInputField, ...]
    transformationDescription: str | None = None
    transformationType: str | None = None


@dataclass(frozen=True, kw_only=True)
class Dataset:
    id: DatasetId
    type: str
    name: str
    physicalName: str
    createdAt: datetime
    updatedAt: datetime
    namespace: str
    sourceName: str
    fields: tuple[DatasetField, ...]
    tags: tuple[str, ...]
    lastModifiedAt: datetime | None = None
    lastLifecycleState: str | None = None
    description: str | None = None
    currentVersion: str | None = None
    columnLineage: tuple[ColumnLineageEntry, ...] | None = None
    facets: Facets = field(default_factory=dict)
    deleted: bool = False


@dataclass(frozen=True, kw_only=True)
class DatasetList:
    datasets: tuple[Dataset, ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[Dataset, ...]:
        return self.datasets


@dataclass(frozen=True, kw_only=True)
class DatasetVersionId:
    namespace: str
    name: str
    version: str


@dataclass(frozen=True, kw_only=True)
class JobId:
    namespace: str
    name: str


@dataclass(frozen=True, kw_only=True)
class JobVersionId:
    namespace: str
    name: str
    version: str


@dataclass(frozen=True, kw_only=True)
class InputDatasetVersion:
    datasetVersionId: DatasetVersionId
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class OutputDatasetVersion:
    datasetVersionId: DatasetVersionId
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Run:
    """A run; ``state`` is one of NEW, RUNNING, COMPLETED, FAILED, ABORTED."""

    id: str
    createdAt: datetime
    updatedAt: datetime
    state: str
    nominalStartTime: datetime | None = None
    nominalEndTime: datetime | None = None
    startedAt: datetime | None = None
    endedAt: datetime | None = None
    durationMs: int | None = None
    args: Facets = field(default_factory=dict)
    jobVersion: JobVersionId | None = None
    inputDatasetVersions: tuple[InputDatasetVersion, ...] = ()
    outputDatasetVersions: tuple[OutputDatasetVersion, ...] = ()
    context: Facets = field(default_factory=dict)
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ChildRun(Run):
    """A child run of an orchestrator (parent) run, with the job it belongs to."""

    job: JobId


@dataclass(frozen=True, kw_only=True)
class RunList:
    runs: tuple[Run, ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[Run, ...]:
        return self.runs


@dataclass(frozen=True, kw_only=True)
class ChildRunList:
    runs: tuple[ChildRun, ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[ChildRun, ...]:
        return self.runs


@dataclass(frozen=True, kw_only=True)
class RunFacets:
    runId: str
    facets: Facets


@dataclass(frozen=True, kw_only=True)
class DatasetVersion:
    id: DatasetVersionId
    type: str
    name: str
    physicalName: str
    createdAt: datetime
    version: str
    namespace: str
    sourceName: str
    fields: tuple[DatasetField, ...]
    tags: tuple[str, ...]
    lifecycleState: str | None = None
    description: str | None = None
    createdByRun: Run | None = None
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class DatasetVersionList:
    versions: tuple[DatasetVersion, ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[DatasetVersion, ...]:
        return self.versions


@dataclass(frozen=True, kw_only=True)
class Job:
    id: JobId
    type: str
    name: str
    simpleName: str
    createdAt: datetime
    updatedAt: datetime
    namespace: str
    inputs: tuple[DatasetId, ...]
    outputs: tuple[DatasetId, ...]
    parentJobName: str | None = None
    parentJobUuid: str | None = None
    location: str | None = None
    description: str | None = None
    latestRun: Run | None = None
    latestRuns: tuple[Run, ...] = ()
    facets: Facets = field(default_factory=dict)
    currentVersion: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class JobList:
    jobs: tuple[Job, ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[Job, ...]:
        return self.jobs


@dataclass(frozen=True, kw_only=True)
class JobVersion:
    id: JobVersionId
    name: str
    version: str
    createdAt: datetime
    namespace: str
    inputs: tuple[DatasetId, ...]
    outputs: tuple[DatasetId, ...]
    location: str | None = None
    latestRun: Run | None = None
    facets: Facets = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class JobVersionList:
    versions: tuple[JobVersion, ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[JobVersion, ...]:
        return self.versions


@dataclass(frozen=True, kw_only=True)
class Tag:
    name: str
    description: str | None = None


@dataclass(frozen=True, kw_only=True)
class TagList:
    tags: tuple[Tag, ...]

    @property
    def items(self) -> tuple[Tag, ...]:
        return self.tags


@dataclass(frozen=True, kw_only=True)
class EventList:
    """Stored OpenLineage events, each as it was received."""

    events: tuple[dict[str, Any], ...]
    totalCount: int
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[dict[str, Any], ...]:
        return self.events


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """A dataset or job whose name matched; ``nodeId`` addresses it in the lineage calls."""

    type: str
    name: str
    updatedAt: datetime
    namespace: str
    nodeId: str


@dataclass(frozen=True, kw_only=True)
class SearchResultList:
    totalCount: int
    results: tuple[SearchResult, ...]
    nextCursor: str | None = None

    @property
    def items(self) -> tuple[SearchResult, ...]:
        return self.results
