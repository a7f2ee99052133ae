"""The transport contract: how one or many OpenLineage events leave the process.

A transport delivers plain event dicts (already in the OpenLineage wire shape)
and reports failure by raising :class:`DeliveryError`, whose ``retriable`` flag
tells the emitter whether trying again could help. Retrying, batching, spooling
and the circuit breaker live in :mod:`headwater.agent.emitter`, not here, so a
transport stays a thin adapter around one destination.

::

    TransportError            (headwater.errors)
    └── DeliveryError         one attempt failed; .retriable says whether to try again
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from headwater.errors import TransportError

__all__ = [
    "BatchFailure",
    "DeliveryError",
    "Transport",
    "TransportBase",
]

Event = Mapping[str, Any]


class DeliveryError(TransportError):
    """One delivery attempt failed.

    ``retriable`` is True for failures that may pass later (network down, timeout,
    5xx, 429) and False when the destination refused the content (other 4xx).
    """

    def __init__(self, message: str, *, retriable: bool) -> None:
        super().__init__(message)
        self.retriable = retriable


@dataclass(frozen=True)
class BatchFailure:
    """One event of a batch that the destination did not accept."""

    index: int
    reason: str
    retriable: bool


@runtime_checkable
class Transport(Protocol):
    """What the emitter needs from a destination."""

    def emit(self, event: Event) -> None:
        """Deliver one event or raise :class:`DeliveryError`."""

    def emit_batch(self, events: Sequence[Event]) -> list[BatchFailure]:
        """Deliver events; return the ones refused, or raise if none could be sent."""

    def close(self, timeout: float) -> None:
        """Release resources, waiting at most ``timeout`` seconds."""


class TransportBase:
    """Shared behaviour: a batch is a loop of single emits unless a subclass knows better."""

    def emit(self, event: Event) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def emit_batch(self, events: Sequence[Event]) -> list[BatchFailure]:
        failures: list[BatchFailure] = []
        for index, event in enumerate(events):
            try:
                self.emit(event)
            except DeliveryError as exc:
                if exc.retriable and not failures and index == 0:
                    # Nothing got through: let the caller treat it as a whole-batch failure
                    # (retry with backoff, count towards the circuit breaker).
                    raise
                failures.append(BatchFailure(index, str(exc), exc.retriable))
        return failures

    def close(self, timeout: float) -> None:
        """Nothing to release by default."""
