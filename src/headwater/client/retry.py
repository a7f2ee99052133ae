"""When the client sends a request again, and how long it waits first.

Retried: a connection that could not be made (nothing reached the server),
and the answers that say "later" -- 429, 502, 503, 504 -- for operations that
are safe to repeat; a non-idempotent write (creating a token or a block) is
repeated only after 429 and 503, which say the server did not act on it.
Never retried: any other 4xx, which would fail again. The wait grows
exponentially with full jitter, so clients that failed together do not return
together; a ``Retry-After`` header sets it instead (seconds or an HTTP date),
up to ``max_retry_after``, past which the client gives up at once rather than
block.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["RETRIABLE_STATUSES", "Retry"]

RETRIABLE_STATUSES = frozenset({429, 502, 503, 504})
# Statuses whose request the server did not act on: safe to repeat even for a POST
# that creates something.
_NOT_ACTED_ON = frozenset({429, 503})


@dataclass(frozen=True)
class Retry:
    """How often and how patiently to send a request again.

    ``retries`` more tries after the first; the n-th waits a random time up to
    ``min(max_backoff, backoff * 2**n)`` seconds, or what ``Retry-After`` says.
    ``Retry(retries=0)`` turns retrying off.
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 60.0
    random: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def status_is_retriable(self, status: int, idempotent: bool) -> bool:
        return status in (RETRIABLE_STATUSES if idempotent else _NOT_ACTED_ON)

    def delay(self, retry: int, retry_after: str | None = None) -> float | None:
        """Seconds to wait before retry number ``retry`` (1-based); None: give up."""
        if retry > self.retries:
            return None
        asked = _seconds(retry_after)
        if asked is not None:
            return asked if asked <= self.max_retry_after else None
        ceiling = min(self.max_backoff, self.backoff * 2 ** (retry - 1))
        return self.random.uniform(0, ceiling)


def _seconds(retry_after: str | None) -> float | None:
    """A ``Retry-After`` value in seconds: a number, or an HTTP date from now."""
    if not retry_after:
        return None
    text = retry_after.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
