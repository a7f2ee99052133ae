"""Data quality answers of ``/api/v2``: a dataset's latest metrics and assertions, a
series per metric, and what each run reported (from its producers' quality facets)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "Assertion",
    "LatestAssertion",
    "LatestColumnMetric",
    "LatestMetric",
    "LatestQuality",
    "Quality",
    "QualityObservation",
    "QualityPoint",
    "QualitySeries",
]


@dataclass(frozen=True, kw_only=True)
class LatestMetric:
    """The newest value of ``metric`` (rowCount, bytes, fileCount) and who sent it."""

    metric: str
    value: int | float
    time: datetime
    runId: str | None
    job: str | None


@dataclass(frozen=True, kw_only=True)
class LatestColumnMetric:
    column: str
    metric: str
    value: int | float
    time: datetime
    runId: str | None
    job: str | None


@dataclass(frozen=True, kw_only=True)
class Assertion:
    """A test's result as the producer reported it (``not_null`` on ``email``)."""

    assertion: str
    column: str | None
    name: str | None
    success: bool
    severity: str | None
    expected: str | None
    actual: str | None


@dataclass(frozen=True, kw_only=True)
class LatestAssertion(Assertion):
    time: datetime
    runId: str | None
    job: str | None


@dataclass(frozen=True, kw_only=True)
class LatestQuality:
    time: datetime | None
    metrics: tuple[LatestMetric, ...]
    columnMetrics: tuple[LatestColumnMetric, ...]
    assertions: tuple[LatestAssertion, ...]
    failedAssertions: int


@dataclass(frozen=True, kw_only=True)
class QualityPoint:
    """One point of a series: a metric's ``value`` or an assertion's ``success``."""

    time: datetime
    runId: str | None
    value: int | float | None
    success: bool | None


@dataclass(frozen=True, kw_only=True)
class QualitySeries:
    metric: str
    column: str | None
    assertion: str | None
    name: str | None
    points: tuple[QualityPoint, ...]


@dataclass(frozen=True, kw_only=True)
class QualityObservation:
    """What one run (or dataset event) reported; ``version`` set when the run wrote it."""

    time: datetime
    runId: str | None
    job: str | None
    version: str | None
    metrics: dict[str, int | float]
    columnMetrics: dict[str, dict[str, int | float]]
    assertions: tuple[Assertion, ...]


@dataclass(frozen=True, kw_only=True)
class Quality:
    """``GET /api/v2/datasets/{nodeId}/quality``."""

    datasetId: str
    latest: LatestQuality
    series: tuple[QualitySeries, ...]
    observations: tuple[QualityObservation, ...]
