"""The write path behind the API, ``headwater ingest`` and the demo, in one place.

Each event is parsed once (:func:`headwater.events.parse_event`: the one
check, which also normalises names as the OpenLineage naming spec asks);
the good ones go to the store in one :meth:`~headwater.store.Store.record`
call (group commit, bounded lots, isolation of what the database refuses);
everything refused goes to the quarantine (:mod:`headwater.store.quarantine`)
with its reason. An event is refused with 400 when it is not valid
OpenLineage and 422 when the database refused it; neither is retriable.
Only an unavailable database raises (:class:`~headwater.errors.StoreError`,
503, retriable).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headwater.errors import EventError, WriteRefused
from headwater.events.parse import ParsedEvent, parse_event

if TYPE_CHECKING:
    from headwater.store import RecordResult, Store
    from headwater.store.quarantine import Refused

__all__ = ["BatchOutcome", "FailedEvent", "ingest_batch", "ingest_one"]

logger = logging.getLogger(__name__)

#: The status a producer gets for an event that is not valid OpenLineage.
INVALID = 400
#: The status for an event that parsed but that the database refused.
REFUSED = 422


@dataclass(frozen=True)
class FailedEvent:
    """One rejected event of a batch, in the OpenLineage batch response's terms."""

    index: int
    reason: str
    field: str | None
    status: int = INVALID
    retriable: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "reason": self.reason,
            "field": self.field,
            "retriable": self.retriable,
        }


@dataclass
class BatchOutcome:
    """What happened to each event of a batch."""

    received: int
    results: list[RecordResult] = field(default_factory=list)
    failed: list[FailedEvent] = field(default_factory=list)

    @property
    def successful(self) -> int:
        return len(self.results)

    @property
    def duplicates(self) -> int:
        return sum(1 for r in self.results if r.duplicate)

    def as_json(self) -> dict[str, Any]:
        """The OpenLineage 2-0-2 batch response body (plus ``summary.duplicates``)."""
        retriable = sum(1 for f in self.failed if f.retriable)
        return {
            "status": "partial_success" if self.failed else "success",
            "summary": {
                "received": self.received,
                "successful": self.successful,
                "failed": len(self.failed),
                "retriable": retriable,
                "non_retriable": len(self.failed) - retriable,
                "duplicates": self.duplicates,
            },
            "failed_events": [f.as_json() for f in self.failed],
        }


def ingest_batch(store: Store, events: Iterable[Any]) -> BatchOutcome:
    """Parse each of ``events``, record the good ones, quarantine the refused ones."""
    from headwater.store.quarantine import Refused

    parsed: list[tuple[int, ParsedEvent]] = []
    failed: list[FailedEvent] = []
    refused: list[Refused] = []
    received = 0
    for index, raw in enumerate(events):
        received += 1
        try:
            parsed.append((index, parse_event(raw)))
        except EventError as exc:
            failed.append(FailedEvent(index, str(exc), exc.field, INVALID))
            refused.append(Refused(raw, str(exc), exc.field, INVALID))
    outcome = BatchOutcome(received=received, failed=failed)
    if parsed:
        results = store.record([ev for _, ev in parsed])
        for (index, ev), result in zip(parsed, results, strict=True):
            if result.refused is None:
                outcome.results.append(result)
                continue
            failed.append(FailedEvent(index, result.refused, result.field, REFUSED))
            refused.append(Refused(ev.event, result.refused, result.field, REFUSED))
        failed.sort(key=lambda f: f.index)
    if refused:
        _quarantine(store, refused)
        logger.info("batch of %d: %d event(s) refused", received, len(failed))
    return outcome


def ingest_one(store: Store, raw: Any) -> RecordResult:
    """Parse and record one event; raise :class:`EventError` / :class:`WriteRefused` if refused."""
    from headwater.store.quarantine import Refused

    try:
        parsed = parse_event(raw)
    except EventError as exc:
        _quarantine(store, [Refused(raw, str(exc), exc.field, INVALID)])
        raise
    [result] = store.record([parsed])
    if result.refused is not None:
        _quarantine(store, [Refused(parsed.event, result.refused, result.field, REFUSED)])
        raise WriteRefused(result.refused, result.field)
    return result


def _quarantine(store: Store, refused: list[Refused]) -> None:
    from headwater.store import quarantine

    try:
        quarantine.keep(store.engine, refused)
    except WriteRefused:
        # The producer's answer stands whether or not the copy was kept.
        logger.exception("could not quarantine %d refused event(s)", len(refused))
