"""The :class:`Store`: headwater's write path into SQLite or PostgreSQL.

Concurrency: any number of threads may call :meth:`Store.record_events`.
Callers parse their events and gather their facts, then queue them. A caller
that finds nobody writing becomes the leader: in its own thread it writes
everything queued so far in *one* transaction (group commit), while callers
arriving meanwhile queue for the next leader. So 16 single-event callers cost
about one commit, not 16, one transaction at a time is what SQLite wants,
and no thread hand-off is paid when calls come one at a time. If a combined
transaction fails, each queued call is retried alone so one bad call cannot
fail its neighbours, and every call stays all-or-nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from headwater.errors import HeadwaterError, StoreError
from headwater.store import dialects
from headwater.store import tables as t
from headwater.store.checkpoint import WalCheckpointer
from headwater.store.extract import Facts
from headwater.store.parsing import ParsedEvent, parse_event
from headwater.store.transactions import write_lock_path, write_transaction
from headwater.store.writer import Writer

__all__ = ["RecordResult", "Store"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class RecordResult:
    """The outcome of recording one event."""

    event_hash: str  # sha256 of the event's canonical JSON (sorted keys, no spaces)
    duplicate: bool  # True if this exact event was already stored (or earlier in the call)


@dataclass(eq=False)
class _Pending:
    """One caller's batch waiting for the writer."""

    parsed: list[ParsedEvent]
    facts: Facts
    done: bool = False
    results: list[RecordResult] | None = None
    error: BaseException | None = None


class Store:
    """headwater's database: open with :meth:`open`, write with :meth:`record_events`."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._writer = Writer(self.dialect)
        self._cond = threading.Condition()
        self._queue: list[_Pending] = []
        self._writing = False  # a caller is writing a group now
        self._closed = False
        self._write_lock_path = write_lock_path(engine)
        # A file database (the one kind with a lock path) gets its WAL
        # checkpointed off the write path.
        self._checkpointer = (WalCheckpointer(engine.url.database)
                              if self._write_lock_path else None)

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        """Connect to ``url`` (``sqlite:///path`` or ``postgresql+psycopg://…``).

        With ``migrate`` (the default) the schema is upgraded to the newest
        revision first; without it, a database at another revision is refused.
        """
        from headwater.store import migrate as migrations

        try:
            engine = dialects.create_engine(url)
        except (ValueError, SQLAlchemyError) as exc:
            raise StoreError(f"cannot open database {url!r}: {exc}") from exc
        try:
            if migrate:
                migrations.upgrade(engine)
            else:
                migrations.check_current(engine)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"cannot migrate database: {exc}") from exc
        except HeadwaterError:
            engine.dispose()
            raise
        return cls(engine)

    def close(self) -> None:
        """Refuse new writes, let queued ones finish and release connections."""
        with self._cond:
            self._closed = True
            while self._writing or self._queue:
                self._cond.wait()
        if self._checkpointer is not None:
            self._checkpointer.close()
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------

    def record_events(self, events: Sequence[Mapping[str, Any]]) -> list[RecordResult]:
        """Store ``events`` (one transaction for the call); duplicates change nothing.

        Raises :class:`~headwater.errors.EventError` for an event the store
        cannot index (before anything is written) and
        :class:`~headwater.errors.StoreError` when the database fails.
        """
        parsed = [parse_event(event) for event in events]
        if not parsed:
            return []
        # Gathered before queueing, so the transaction (which holds the
        # database's write lock) has less to do.
        pending = _Pending(parsed, Facts.of(parsed))
        with self._cond:
            if self._closed:
                raise StoreError("the store is closed")
            self._queue.append(pending)
            while not pending.done:
                if self._writing:
                    self._cond.wait()
                    continue
                # Nobody is writing: this caller leads, writing everything
                # queued so far (its own call included) in its own thread.
                group, self._queue = self._queue, []
                self._writing = True
                self._cond.release()
                try:
                    self._write_group(group)
                finally:
                    self._cond.acquire()
                    self._writing = False
                    self._cond.notify_all()
        if pending.error is not None:
            raise pending.error
        assert pending.results is not None
        return pending.results

    def _write_group(self, group: list[_Pending]) -> None:
        try:
            try:
                self._write_transaction(group, prepared=True)
            except Exception as exc:
                if len(group) == 1:
                    group[0].error = exc
                    return
                logger.warning("group commit of %d calls failed (%s); retrying each alone",
                               len(group), exc)
                for pending in group:
                    try:
                        self._write_transaction([pending], prepared=False)
                    except Exception as single:
                        pending.error = single
        finally:
            for pending in group:
                pending.done = True

    def _write_transaction(self, group: list[_Pending], prepared: bool) -> None:
        """One transaction for ``group``; with ``prepared``, using the callers' facts.

        A retry passes ``prepared=False``: the facts of a failed attempt may
        have been changed while writing, so they are gathered again.
        """
        everything = [ev for pending in group for ev in pending.parsed]
        facts = None
        if prepared:
            # Merged before taking the write lock, like the callers' own work.
            facts = (group[0].facts if len(group) == 1
                     else Facts.merged(pending.facts for pending in group))
        try:
            # Several processes may write one SQLite file (serve --workers N):
            # they take turns through the lock file (see transactions.py).
            with write_transaction(self.engine) as conn:
                new = self._writer.write(conn, everything, facts)
        except BaseException:
            self._writer.rollback()  # the id caches may hold rows that were not committed
            raise
        self._writer.commit()
        if self._checkpointer is not None:
            self._checkpointer.committed(len(new))
        # The first occurrence of a new hash is the one that stored it.
        for pending in group:
            results = []
            for ev in pending.parsed:
                fresh = ev.event_hash in new
                new.discard(ev.event_hash)
                results.append(RecordResult(ev.event_hash, duplicate=not fresh))
            pending.results = results

    # -- reading -------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Rows per table, keyed by table name."""
        try:
            with self.engine.connect() as conn:
                return {
                    table.name: int(conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)
                    for table in t.metadata.sorted_tables
                }
        except SQLAlchemyError as exc:
            raise StoreError(f"database read failed: {exc}") from exc

