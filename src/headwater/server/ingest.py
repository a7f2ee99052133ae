"""Validate, normalise and record OpenLineage events: the write path behind the API.

Used by the HTTP routes and by ``headwater ingest``/``demo`` alike, so the
rules are the same whichever way events arrive. The store receives the events
as the producer sent them (any extra keys kept verbatim), except for the
normalisations the OpenLineage naming spec asks for:

- ``s3a://`` and ``s3n://`` dataset namespaces become ``s3://`` (in
  ``inputs``, ``outputs``, a DatasetEvent's ``dataset``, and the
  ``columnLineage`` facet's input fields, so column edges join their datasets).

A batch is recorded in one store call (one transaction): the valid events of a
partly bad batch are stored, the invalid ones are reported with their index.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headwater.errors import EventError
from headwater.server.validation import validate_event

if TYPE_CHECKING:
    from headwater.store import RecordResult, Store

__all__ = [
    "BatchOutcome",
    "FailedEvent",
    "check_event",
    "ingest_batch",
    "normalise_event",
    "normalise_namespace",
]

logger = logging.getLogger(__name__)

# OpenLineage naming: Hadoop's s3a/s3n connectors address the same objects as s3.
_S3_ALIASES = ("s3a://", "s3n://")


@dataclass(frozen=True)
class FailedEvent:
    """One rejected event of a batch, in the OpenLineage batch response's terms."""

    index: int
    reason: str
    field: str | None
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


def normalise_namespace(namespace: str) -> str:
    """``s3a://bucket`` and ``s3n://bucket`` -> ``s3://bucket``; others unchanged."""
    if namespace.startswith(_S3_ALIASES):
        return "s3://" + namespace[len("s3a://") :]
    return namespace


def normalise_event(event: dict[str, Any]) -> dict[str, Any]:
    """Apply the naming normalisations in place and return ``event``.

    Call only on a validated event (shapes are assumed, not re-checked).
    """
    for key in ("inputs", "outputs"):
        for dataset in event.get(key) or ():
            _normalise_dataset(dataset)
    dataset = event.get("dataset")
    if isinstance(dataset, dict) and "run" not in event:
        _normalise_dataset(dataset)
    return event


def _normalise_dataset(dataset: dict[str, Any]) -> None:
    dataset["namespace"] = normalise_namespace(dataset["namespace"])
    facets = dataset.get("facets")
    lineage = facets.get("columnLineage") if isinstance(facets, dict) else None
    if not isinstance(lineage, dict):
        return
    # The facet is free-form; normalise only where it has the spec's shape.
    fields = lineage.get("fields")
    if isinstance(fields, dict):
        for spec in fields.values():
            if isinstance(spec, dict):
                _normalise_refs(spec.get("inputFields"))
    _normalise_refs(lineage.get("dataset"))


def _normalise_refs(refs: Any) -> None:
    if not isinstance(refs, list):
        return
    # This runs for every column-lineage reference and almost none needs changing:
    # the alias test comes first, normalise_namespace only for those that do.
    for ref in refs:
        if type(ref) is dict:
            namespace = ref.get("namespace")
            if type(namespace) is str and namespace.startswith(_S3_ALIASES):
                ref["namespace"] = normalise_namespace(namespace)


def check_event(event: Any) -> dict[str, Any]:
    """Validate then normalise one decoded event; raises :class:`EventError`."""
    validate_event(event)
    return normalise_event(event)


def ingest_batch(store: Store, events: Iterable[Any]) -> BatchOutcome:
    """Record the valid events of ``events`` in one store call; report the others.

    Raises :class:`~headwater.errors.StoreError` if the database fails, in which
    case nothing of the batch was written.
    """
    good: list[tuple[int, dict[str, Any]]] = []
    failed: list[FailedEvent] = []
    received = 0
    for index, event in enumerate(events):
        received += 1
        try:
            good.append((index, check_event(event)))
        except EventError as exc:
            failed.append(FailedEvent(index, str(exc), exc.field))
    outcome = BatchOutcome(received=received, failed=failed)
    if good:
        try:
            outcome.results = store.record_events([event for _, event in good])
        except EventError:
            # The store refused an event our checks passed (it indexes more than
            # we check). Rare: find which by recording them one at a time.
            outcome.results = _record_one_by_one(store, good, failed)
            failed.sort(key=lambda f: f.index)
    if failed:
        logger.info("batch of %d: %d event(s) rejected", received, len(failed))
    return outcome


def _record_one_by_one(
    store: Store, good: list[tuple[int, dict[str, Any]]], failed: list[FailedEvent]
) -> list[RecordResult]:
    results: list[RecordResult] = []
    for index, event in good:
        try:
            results.extend(store.record_events([event]))
        except EventError as exc:
            failed.append(FailedEvent(index, str(exc), exc.field))
    return results

