"""Answers about the server itself: ingestion results, health, tokens, audit, quarantine."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "AgentFigures",
    "AuditEntry",
    "AuditList",
    "BatchResult",
    "BatchSummary",
    "CreatedToken",
    "FailedEvent",
    "Health",
    "IngestResult",
    "NamespaceCheck",
    "NamespaceSuspect",
    "NamespaceSuspectDataset",
    "Producer",
    "ProducerList",
    "QuarantineList",
    "QuarantinedEvent",
    "Token",
    "TokenList",
]


@dataclass(frozen=True, kw_only=True)
class Health:
    version: str
    status: str = "ok"


@dataclass(frozen=True, kw_only=True)
class IngestResult:
    """One stored event: its content hash, and whether it had been received before."""

    eventHash: str
    duplicate: bool
    status: str = "success"


@dataclass(frozen=True, kw_only=True)
class FailedEvent:
    """An event of a batch the server refused; ``index`` is its position in the batch."""

    index: int
    reason: str
    retriable: bool
    field: str | None = None


@dataclass(frozen=True, kw_only=True)
class BatchSummary:
    received: int
    successful: int
    failed: int
    retriable: int
    non_retriable: int
    duplicates: int


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    """``status`` is ``success`` or ``partial_success`` (some events in ``failed_events``)."""

    status: str
    summary: BatchSummary
    failed_events: tuple[FailedEvent, ...]


@dataclass(frozen=True, kw_only=True)
class Token:
    """An access token's description (never its secret); ``namespaces`` None means all."""

    name: str
    scopes: tuple[str, ...]
    namespaces: tuple[str, ...] | None
    createdAt: str
    revokedAt: str | None


@dataclass(frozen=True, kw_only=True)
class CreatedToken(Token):
    """A new token; ``secret`` is shown this once and stored only hashed."""

    secret: str


@dataclass(frozen=True, kw_only=True)
class TokenList:
    tokens: tuple[Token, ...]


@dataclass(frozen=True, kw_only=True)
class AuditEntry:
    at: str
    operation: str
    outcome: str
    count: int
    tokenName: str | None = None
    client: str | None = None
    target: str | None = None
    status: int | None = None


@dataclass(frozen=True, kw_only=True)
class AuditList:
    entries: tuple[AuditEntry, ...]

    @property
    def items(self) -> tuple[AuditEntry, ...]:
        return self.entries


@dataclass(frozen=True, kw_only=True)
class QuarantinedEvent:
    """A refused event kept for inspection, with why it was refused."""

    id: int
    receivedAt: datetime
    firstReceivedAt: datetime
    timesSeen: int
    reason: str
    status: int
    payload: Any
    field: str | None = None


@dataclass(frozen=True, kw_only=True)
class QuarantineList:
    totalCount: int
    events: tuple[QuarantinedEvent, ...]

    @property
    def items(self) -> tuple[QuarantinedEvent, ...]:
        return self.events


@dataclass(frozen=True, kw_only=True)
class AgentFigures:
    """The latest ``headwater_emission`` facet a headwater agent sent, and with which run."""

    runId: str
    eventTime: datetime
    figures: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Producer:
    """Arrivals and refusals of one producer URI in one job namespace."""

    producer: str
    namespace: str
    firstSeen: datetime
    lastSeen: datetime
    events: int
    rejected: int
    eventsLastHour: int
    eventsLast24h: int
    eventsPerHour: float
    rejectedLast24h: int
    agent: AgentFigures | None = None


@dataclass(frozen=True, kw_only=True)
class ProducerList:
    producers: tuple[Producer, ...]


@dataclass(frozen=True, kw_only=True)
class NamespaceSuspectDataset:
    namespace: str
    name: str
    nodeId: str


@dataclass(frozen=True, kw_only=True)
class NamespaceSuspect:
    """Datasets that look like one under several names, and the rule that would merge them."""

    kind: str  # kafka, s3, trailing-slash or symlink
    certain: bool
    reason: str
    rule: str  # a TOML snippet for the namespace rules file
    datasets: tuple[NamespaceSuspectDataset, ...]


@dataclass(frozen=True, kw_only=True)
class NamespaceCheck:
    suspects: tuple[NamespaceSuspect, ...]
    rulesInForce: str | None = None
    rulesConfigured: str | None = None
    rulesChanged: str | None = None  # set when the configured rules are not the store's
