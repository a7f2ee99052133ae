"""Governance answers of ``/api/v2``: schema drift, classification and its
propagation, compliance reports, owners, tag definitions and propagation blocks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from headwater.client.models.lineage import ImpactNode, ImpactSummary

__all__ = [
    "Block",
    "BlockList",
    "BlockRemoved",
    "Classification",
    "ColumnBadges",
    "ColumnClassification",
    "Compliance",
    "ComplianceFlow",
    "DatasetBadges",
    "DatasetBadgesList",
    "Drift",
    "DriftChange",
    "DriftConsumer",
    "DriftImpact",
    "DriftList",
    "Owner",
    "Owners",
    "PropagatedTag",
    "PropagationEdge",
    "StoppedTag",
    "TagDefinition",
    "TagDefinitionList",
]


@dataclass(frozen=True, kw_only=True)
class DriftChange:
    """One change between two versions' schemas; ``kind`` says what (added, removed, ...)."""

    kind: str
    path: str
    breaking: bool
    newPath: str | None = None
    old: str | None = None
    new: str | None = None


@dataclass(frozen=True, kw_only=True)
class DriftConsumer:
    """The consumer job of a contract drift and the run whose declaration counts."""

    jobId: str
    namespace: str
    name: str
    run: str


@dataclass(frozen=True, kw_only=True)
class DriftImpact:
    """What a drift's changes reach downstream, over the lineage known at ``asOf``."""

    asOf: datetime
    depth: int
    maxNodes: int
    truncated: bool
    nodes: tuple[ImpactNode, ...]
    summary: ImpactSummary


@dataclass(frozen=True, kw_only=True)
class Drift:
    """A version drift (``kind`` ``version``) or a contract drift (``contract``, its consumer)."""

    id: str
    kind: str
    datasetId: str
    namespace: str
    name: str
    version: str
    changedAt: datetime
    breaking: bool
    changes: tuple[DriftChange, ...]
    previousVersion: str | None = None
    consumer: DriftConsumer | None = None
    impact: DriftImpact | None = None


@dataclass(frozen=True, kw_only=True)
class DriftList:
    totalCount: int
    drifts: tuple[Drift, ...]

    @property
    def items(self) -> tuple[Drift, ...]:
        return self.drifts


@dataclass(frozen=True, kw_only=True)
class PropagationEdge:
    """A column edge a tag travels along (or is stopped at)."""

    source: str
    target: str
    job: str
    transformationType: str | None = None
    transformationSubtype: str | None = None
    masking: bool = False


@dataclass(frozen=True, kw_only=True)
class PropagatedTag:
    """A tag ``column`` carries because it comes from ``origin`` along ``path``."""

    column: str
    tag: str
    origin: str
    path: tuple[PropagationEdge, ...]
    explanation: str


@dataclass(frozen=True, kw_only=True)
class Block:
    """A propagation block: tags stop at ``job`` (optionally one edge, one tag)."""

    id: int
    job: str
    createdAt: datetime
    source: str | None = None
    target: str | None = None
    tag: str | None = None
    reason: str | None = None
    removedAt: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class BlockList:
    blocks: tuple[Block, ...]


@dataclass(frozen=True, kw_only=True)
class BlockRemoved:
    id: int
    removedAt: datetime


@dataclass(frozen=True, kw_only=True)
class StoppedTag:
    """A tag that did not travel along ``edge``: ``reason`` is masking or a block."""

    tag: str
    origin: str
    edge: PropagationEdge
    reason: str
    block: Block | None = None


@dataclass(frozen=True, kw_only=True)
class ColumnClassification:
    nodeId: str
    field: str
    tags: tuple[str, ...]
    propagated: tuple[PropagatedTag, ...]
    stopped: tuple[StoppedTag, ...]


@dataclass(frozen=True, kw_only=True)
class Classification:
    """``GET /api/v2/classification``: a dataset's or column's own and propagated tags."""

    nodeId: str
    tags: tuple[str, ...]
    propagatedTags: tuple[str, ...]
    columns: tuple[ColumnClassification, ...]
    truncated: bool
    asOf: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class ColumnBadges:
    nodeId: str
    tags: tuple[str, ...]
    propagatedTags: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class DatasetBadges:
    nodeId: str
    tags: tuple[str, ...]
    propagatedTags: tuple[str, ...]
    columns: tuple[ColumnBadges, ...]


@dataclass(frozen=True, kw_only=True)
class DatasetBadgesList:
    """``GET /api/v2/classification/datasets``: every tagged dataset and column."""

    truncated: bool
    datasets: tuple[DatasetBadges, ...]
    asOf: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class Owner:
    """``source`` is ``facet`` (an ownership facet) or ``api``; ``current`` (in a
    compliance report) is false for the owners in force at the time of a report as of
    a time."""

    name: str
    type: str
    source: str
    current: bool = True


@dataclass(frozen=True, kw_only=True)
class Owners:
    nodeId: str
    owners: tuple[Owner, ...]


@dataclass(frozen=True, kw_only=True)
class ComplianceFlow(PropagatedTag):
    dataset: str
    jobs: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Compliance:
    """``GET /api/v2/compliance``: where tagged data flows, where it stops, who owns it."""

    flows: tuple[ComplianceFlow, ...]
    stops: tuple[StoppedTag, ...]
    datasets: tuple[Owners, ...]
    jobs: tuple[Owners, ...]
    truncated: bool
    tag: str | None = None
    nodeId: str | None = None
    asOf: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class TagDefinition:
    """Whether a tag propagates; ``default`` marks the built-in definitions."""

    name: str
    propagates: bool
    description: str | None = None
    default: bool = False
    updatedAt: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class TagDefinitionList:
    definitions: tuple[TagDefinition, ...]
