"""Answers of ``/api/v2`` about runs as they happen: which runs read a dataset, and
whether a run is still alive (its producer's heartbeat).

Like the ``/api/v1`` models (:mod:`headwater.client.models.marquez`), fields are named
as the API spells them (camelCase) and times are ``datetime``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from headwater.client.models.marquez import JobId

__all__ = ["Reader", "ReaderList", "RunHeartbeat", "RunLiveness"]


@dataclass(frozen=True, kw_only=True)
class Reader:
    """A run that read a dataset: its job, state, Spark user, and whether it wrote nothing."""

    runId: str
    job: str
    readAt: datetime
    state: str | None
    startedAt: datetime | None
    endedAt: datetime | None
    parentRunId: str | None
    sparkUser: str | None
    readOnly: bool


@dataclass(frozen=True, kw_only=True)
class ReaderList:
    """``GET /api/v2/datasets/{nodeId}/readers``: who read a dataset, newest read first."""

    datasetId: str
    totalCount: int
    users: tuple[str, ...]
    jobs: tuple[str, ...]
    readers: tuple[Reader, ...]

    @property
    def items(self) -> tuple[Reader, ...]:
        return self.readers


@dataclass(frozen=True, kw_only=True)
class RunHeartbeat:
    """What makes a run heartbeat-tracked: its producer, its RUNNING events and cadence."""

    producer: str | None
    runningEvents: int
    cadenceSeconds: float | None
    staleAfterSeconds: float


@dataclass(frozen=True, kw_only=True)
class RunLiveness:
    """``GET /api/v2/runs/{id}``: the run's state and whether its producer went silent."""

    id: str
    job: JobId
    state: str
    stale: bool
    startedAt: datetime | None
    endedAt: datetime | None
    lastEventAt: datetime | None
    heartbeat: RunHeartbeat | None
