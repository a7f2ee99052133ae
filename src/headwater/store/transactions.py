"""Write transactions outside the event write path, and the SQLite lock they share.

The event write path (:class:`~headwater.store.Store`) and the API's few other
writes (tags, namespace/source metadata, soft deletes) take the same
cross-process write lock, so that on SQLite with ``headwater serve --workers
N`` a writer waiting for another process wakes the moment that one commits
(SQLite alone would make it poll with sleeps of up to 100 ms).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from headwater.errors import StoreError, WriteRefused
from headwater.store import dialects, failures, revisions

__all__ = [
    "WriteConflict", "cross_process_lock", "now_utc", "translate", "write_lock_path",
    "write_transaction",
]


def now_utc() -> datetime:
    """Now as the store keeps times: naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def write_lock_path(engine: sa.Engine) -> str | None:
    """The lock file of a SQLite database file; None for memory or other databases."""
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return f"{database}-writelock"


@contextmanager
def cross_process_lock(path: str | None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (nothing when ``path`` is None).

    The kernel wakes the next process waiting for it as soon as this one
    releases it. (PostgreSQL needs nothing: its writers do not block each
    other here.)
    """
    if path is None:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def write_transaction(engine: sa.Engine, *, records: bool = True) -> Iterator[sa.Connection]:
    """One write transaction (SQLite: BEGIN IMMEDIATE under the write lock).

    ``records``: whether what it writes may change a dataset's or a job's record;
    if so it counts the records epoch (``revisions``), so no record's JSON kept
    from before it is reused. The event write path counts the revisions of the
    rows it writes itself, and passes False, as do writes no record shows.

    Database errors are translated (see :mod:`headwater.store.failures`): the
    database unavailable, or a conflict with another writer, becomes
    :class:`~headwater.errors.StoreError` (retriable); a refusal of what was
    written becomes :class:`~headwater.errors.WriteRefused`. Other exceptions
    pass through unchanged.
    """
    try:
        with cross_process_lock(write_lock_path(engine)), engine.connect() as conn:
            conn = conn.execution_options(**{dialects.WRITER_OPTION: True})
            with conn.begin():
                yield conn
                if records:
                    revisions.bump_epoch(conn)
    except SQLAlchemyError as exc:
        raise translate(exc) from exc


class WriteConflict(StoreError):
    """A deadlock or serialization failure with another writer: the same transaction may pass."""


def translate(exc: SQLAlchemyError) -> StoreError | WriteRefused:
    """The headwater error for a database error, by :mod:`~headwater.store.failures`' rules."""
    first_line = (str(exc).splitlines() or [""])[0]
    if failures.is_conflict(exc):
        return WriteConflict(f"database write conflict: {first_line}")
    if failures.is_unavailable(exc):
        return StoreError(f"database write failed: {exc.__class__.__name__}: {first_line}")
    return WriteRefused(f"the database refused the write: {first_line}")
