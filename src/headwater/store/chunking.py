"""The one bound on how many values a statement's list carries, for reads and writes.

SQLite allows 32,766 bound parameters per statement; lists are cut well
below that, and PostgreSQL's plans stay the same size whatever a list holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["CHUNK", "chunks"]

CHUNK = 500


def chunks(items: Iterable[Any], size: int = CHUNK) -> Iterator[list[Any]]:
    """``items`` in lists of at most ``size``, in order."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
