"""A circuit breaker for a delivery destination.

Closed: deliveries go ahead. After ``failure_threshold`` failures in a row it
opens: deliveries are skipped (the emitter spools instead) for ``reset_seconds``;
then it is half-open and lets one trial through, which closes it on success or
opens it again for a full period on failure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["CircuitBreaker"]

logger = logging.getLogger(__name__)


class CircuitBreaker:
    """Closed -> open after ``failure_threshold`` failures in a row; one trial after ``reset_seconds``."""

    def __init__(
        self,
        failure_threshold: int,
        reset_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failure_threshold = failure_threshold
        self.reset_seconds = reset_seconds
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half-open`` (the next call is a trial)."""
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self.reset_seconds:
            return "half-open"
        return "open"

    def allow(self) -> bool:
        """Whether a delivery may be attempted now."""
        return self.state != "open"

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None

    def record_failure(self) -> None:
        self._failures += 1
        if self.state == "half-open" or self._failures >= self.failure_threshold:
            if self._opened_at is None or self.state == "half-open":
                logger.warning(
                    "headwater agent: destination failing; pausing delivery for %.0f s "
                    "(events are spooled meanwhile)",
                    self.reset_seconds,
                )
            self._opened_at = self._clock()
