"""Answers of ``/api/v2`` that look across the graph: what changed upstream of a
dataset (root cause) and which jobs compute the same columns (duplicate work)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "ColumnMatch",
    "Duplicate",
    "DuplicateList",
    "RootCause",
    "RootCauseItem",
    "SharedOutput",
]


@dataclass(frozen=True, kw_only=True)
class RootCauseItem:
    """A drift, failed run or quality failure upstream, with its path to the dataset."""

    kind: str
    time: datetime
    subject: str
    consumer: str | None
    depth: int
    path: tuple[str, ...]
    detail: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class RootCause:
    """``GET /api/v2/datasets/{nodeId}/root-cause``: oldest first."""

    datasetId: str
    since: datetime
    until: datetime
    depth: int
    upstreamDatasets: int
    upstreamJobs: int
    truncated: bool
    totalCount: int
    causes: tuple[RootCauseItem, ...]

    @property
    def items(self) -> tuple[RootCauseItem, ...]:
        return self.causes


@dataclass(frozen=True, kw_only=True)
class ColumnMatch:
    """A column of one job and the other job's column computed the same way."""

    column: str
    other: str
    match: str


@dataclass(frozen=True, kw_only=True)
class SharedOutput:
    """One job of a pair: how many of its output columns the other computes too."""

    job: str
    columns: int
    sameColumns: int
    sameValues: int
    share: float
    valueShare: float
    matches: tuple[ColumnMatch, ...]


@dataclass(frozen=True, kw_only=True)
class Duplicate:
    """Two jobs whose outputs are ``equal``, one ``contains`` the other, or ``partial``."""

    relation: str
    contained: str | None
    score: float
    jobs: tuple[SharedOutput, ...]


@dataclass(frozen=True, kw_only=True)
class DuplicateList:
    """``GET /api/v2/duplicates``: highest score first."""

    minShare: float
    totalCount: int
    duplicates: tuple[Duplicate, ...]

    @property
    def items(self) -> tuple[Duplicate, ...]:
        return self.duplicates
