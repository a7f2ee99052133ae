"""The :class:`Store`: headwater's write path into SQLite or PostgreSQL.

Callers hand :meth:`Store.record` events already checked by
:func:`headwater.events.parse_event`; the store checks nothing again.

Concurrency (group commit): any number of threads may call :meth:`record`.
A call cuts its events into lots of at most :data:`LOT_EVENTS` and queues
one lot at a time, gathering its facts first (outside any lock). A caller
that finds nobody writing becomes the leader: in its own thread it writes
the queued lots, up to :data:`LOT_EVENTS` events per transaction, while
callers arriving meanwhile queue for the next transaction. So 16
single-event callers cost about one commit, and since a caller queues its
next lot only after the previous one is committed, a 35,000-event batch
takes turns with everyone else instead of holding the writer for minutes.

Isolation: when a transaction fails because of what it writes (a value the
database refuses, an event the fact extraction chokes on — anything but the
database being unavailable), the store splits the events in two and writes
each half in its own transaction, down to single events. Every good event
is stored; each event that fails alone comes back as a
:class:`RecordResult` with ``refused`` set. Only an unavailable database
(connection refused, disk full, lock timeout) raises
:class:`~headwater.errors.StoreError`; a deadlock with another writer is
retried first.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from headwater.errors import EventError, HeadwaterError, StoreError, WriteRefused
from headwater.events.parse import ParsedEvent
from headwater.store import dialects, producers, retention
from headwater.store import tables as t
from headwater.store.checkpoint import WalCheckpointer
from headwater.store.extract import Facts
from headwater.store.namespace_rules import NamespaceRules, Normaliser
from headwater.store.transactions import WriteConflict, write_lock_path, write_transaction
from headwater.store.writer import Writer

__all__ = ["LOT_EVENTS", "RecordResult", "Store"]

logger = logging.getLogger(__name__)

#: Most events per transaction, and per lot a caller queues at a time.
LOT_EVENTS = 500
# A failing part of at most this many events is written one event at a time
# instead of being split further.
_ONE_BY_ONE = 4
#: How often symlinks other processes stored are read, with ``[symlinks] resolve``.
SYMLINK_REFRESH_SECONDS = 5.0
# Transactions retried after a deadlock/serialization failure before giving up.
_CONFLICT_RETRIES = 5


@dataclass(frozen=True)
class RecordResult:
    """The outcome of recording one event."""

    event_hash: str  # sha256 of the event's canonical JSON (sorted keys, no spaces)
    duplicate: bool = False  # this exact event was already stored (or earlier in the call)
    refused: str | None = None  # why the database refused it alone; then nothing was stored
    field: str | None = None  # where in the event, when known

    @property
    def stored(self) -> bool:
        return self.refused is None


@dataclass(eq=False)
class _Lot:
    """One caller's events waiting for the writer, with their facts gathered beforehand."""

    events: list[ParsedEvent]
    facts: Facts | None
    results: list[RecordResult | None] = field(default_factory=list)
    error: StoreError | None = None
    done: bool = False

    def __post_init__(self) -> None:
        self.results = [None] * len(self.events)


class Store:
    """headwater's database: open with :meth:`open`, write with :meth:`record`."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._writer = Writer(self.dialect)
        self._cond = threading.Condition()
        self._queue: list[_Lot] = []
        self._writing = False  # a caller is writing a group now
        self._closed = False
        self._write_lock_path = write_lock_path(engine)
        # A file database (the one kind with a lock path) gets its WAL
        # checkpointed off the write path.
        self._checkpointer = (WalCheckpointer(engine.url.database)
                              if self._write_lock_path else None)
        #: Called after each committed transaction with its event count and
        #: seconds (the server's metrics); it runs in the writing thread, so it
        #: must be quick and must not raise.
        self.on_commit: Callable[[int, float], None] | None = None
        # The retention floor (see retention.py), re-read at most every
        # FLOOR_REFRESH_SECONDS so no request pays a query for it.
        self._floor: datetime | None = None
        self._floor_read_at: float | None = None
        self._floor_lock = threading.Lock()
        # (last dataset_symlinks id read, when) for the symlink rule's index.
        self._symlinks_seen: tuple[int, float] = (0, 0.0)

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        """Connect to ``url`` (``sqlite:///path`` or ``postgresql+psycopg://…``).

        With ``migrate`` (the default) the schema is upgraded to the newest
        revision first; without it, a database at another revision is refused.
        """
        from headwater.store import migrate as migrations

        try:
            parsed = sa.make_url(url)
            if (parsed.get_backend_name() == "sqlite" and parsed.database
                    and parsed.database != ":memory:" and not os.path.exists(parsed.database)):
                retention.create_sqlite_file(parsed.database)
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

    def record(self, events: Sequence[ParsedEvent]) -> list[RecordResult]:
        """Store ``events``; one result per event, in order. Duplicates change nothing.

        Raises :class:`~headwater.errors.StoreError` only when the database is
        unavailable; lots committed before that stay stored (sending the call
        again is harmless: stored events come back as duplicates).
        """
        names = self._writer.names
        if names is not None and names.rules.resolve_symlinks:
            self._learn_stored_symlinks(names)
        floor = self.retention_floor()
        if floor is not None and any(ev.time < floor for ev in events):
            return self._record_above(events, floor)
        results: list[RecordResult] = []
        for start in range(0, len(events), LOT_EVENTS):
            part = list(events[start:start + LOT_EVENTS])
            lot = _Lot(part, _facts_or_none(part, self._writer.names))
            self._submit(lot)
            if lot.error is not None:
                raise lot.error
            results.extend(r for r in lot.results if r is not None)
        return results

    def _record_above(self, events: Sequence[ParsedEvent], floor: datetime) -> list[RecordResult]:
        """Refuse the events older than the retention floor; record the others."""
        keep = [ev for ev in events if ev.time >= floor]
        stored = iter(self.record(keep) if keep else [])
        reason = (f"eventTime {{}} is before the retention floor {floor.isoformat()}Z: runs and "
                  "events older than that were deleted and are not taken again")
        return [next(stored) if ev.time >= floor else
                RecordResult(ev.event_hash, refused=reason.format(ev.time.isoformat() + "Z"),
                             field="eventTime")
                for ev in events]

    def use_namespace_rules(self, rules: NamespaceRules | None) -> str | None:
        """Map the names of every event recorded from now on by ``rules`` (None: as sent).

        Returns a sentence when the stored tables were derived with other rules
        (they keep their names until a rebuild), else None.
        """
        from headwater.store import aliases

        try:
            changed = aliases.rules_change(self.engine, rules)
            if rules is None:
                self._writer.names = None
                return changed
            last, known = 0, []
            if rules.resolve_symlinks:
                with self.engine.connect() as conn:
                    last, known = aliases.symlinks_after(conn, 0)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot read the namespace rules in force: {exc}") from exc
        self._writer.names = Normaliser(rules, known)
        self._symlinks_seen = (last, time.monotonic())
        return changed

    def _learn_stored_symlinks(self, names: Normaliser) -> None:
        """Symlinks other processes stored (``serve --workers N``), read at most every
        :data:`SYMLINK_REFRESH_SECONDS`."""
        from headwater.store import aliases

        with self._floor_lock:
            last, read_at = self._symlinks_seen
            now = time.monotonic()
            if now - read_at < SYMLINK_REFRESH_SECONDS:
                return
            try:
                with self.engine.connect() as conn:
                    last, found = aliases.symlinks_after(conn, last)
            except SQLAlchemyError:
                # The writes that follow meet the same database and fail on their own.
                logger.debug("could not read the stored symlinks", exc_info=True)
                return
            self._symlinks_seen = (last, now)
        names.add_symlinks(found)

    @property
    def namespace_rules(self) -> NamespaceRules | None:
        """The rules names are mapped by (see :meth:`use_namespace_rules`)."""
        return self._writer.names.rules if self._writer.names is not None else None

    def learn_symlinks(self, events: Sequence[dict[str, object]]) -> None:
        """Add the symlinks ``events`` carry to the symlink rule's index (a rebuild's
        first pass, so a table named before its location joins it all the same)."""
        if self._writer.names is not None:
            self._writer.names.learn(events)

    def retention_floor(self) -> datetime | None:
        """The event time before which events are refused (None: retention never ran)."""
        with self._floor_lock:
            now = time.monotonic()
            if (self._floor_read_at is None
                    or now - self._floor_read_at >= retention.FLOOR_REFRESH_SECONDS):
                try:
                    with self.engine.connect() as conn:
                        self._floor = retention.read_floor(conn)
                    self._floor_read_at = now
                except SQLAlchemyError:
                    # The writes that follow meet the same database and fail on their own.
                    logger.debug("could not read the retention floor", exc_info=True)
            return self._floor

    def forget_floor(self) -> None:
        """Re-read the retention floor at the next write (after this process raised it)."""
        with self._floor_lock:
            self._floor_read_at = None

    def _submit(self, lot: _Lot) -> None:
        """Queue ``lot`` and return once it is written, leading the writing if nobody does."""
        with self._cond:
            if self._closed:
                raise StoreError("the store is closed")
            self._queue.append(lot)
            while not lot.done:
                if self._writing:
                    self._cond.wait()
                    continue
                # Nobody is writing: this caller leads, writing the next group
                # from the queue (its own lot, or lots queued before it).
                group = self._next_group()
                self._writing = True
                self._cond.release()
                try:
                    self._write_group(group)
                finally:
                    self._cond.acquire()
                    self._writing = False
                    self._cond.notify_all()

    def _next_group(self) -> list[_Lot]:
        """The queue's first lots, up to :data:`LOT_EVENTS` events (at least one lot)."""
        size = 0
        taken = 0
        for lot in self._queue:
            if taken and size + len(lot.events) > LOT_EVENTS:
                break
            size += len(lot.events)
            taken += 1
        group, self._queue = self._queue[:taken], self._queue[taken:]
        return group

    def _write_group(self, group: list[_Lot]) -> None:
        items = [(lot, i) for lot in group for i in range(len(lot.events))]
        facts = None
        if all(lot.facts is not None for lot in group):
            # Merged before taking the write lock, like the callers' own work.
            facts = (group[0].facts if len(group) == 1
                     else Facts.merged(lot.facts for lot in group if lot.facts is not None))
        try:
            self._write_isolating(items, facts)
        except StoreError as exc:
            for lot in group:
                if any(r is None for r in lot.results):
                    lot.error = exc
        except BaseException as exc:  # a bug in isolation itself: no caller waits forever
            logger.exception("the write path failed")
            for lot in group:
                if any(r is None for r in lot.results):
                    lot.error = StoreError(f"the write path failed: {exc!r}")
        finally:
            for lot in group:
                lot.done = True

    def _write_isolating(self, items: list[tuple[_Lot, int]], facts: Facts | None) -> None:
        """Write ``items``; if what they hold fails the transaction, find the culprits."""
        events = [lot.events[i] for lot, i in items]
        try:
            new = self._transaction(events, facts)
        except StoreError:
            raise
        except Exception as exc:  # caused by what was written: isolate it
            if len(items) == 1:
                lot, i = items[0]
                lot.results[i] = _refusal(lot.events[i], exc)
                return
            logger.info("a transaction of %d events failed (%s); isolating the cause",
                        len(items), exc.__class__.__name__)
            if len(items) <= _ONE_BY_ONE:
                for item in items:
                    self._write_isolating([item], None)
                return
            middle = len(items) // 2
            self._write_isolating(items[:middle], None)
            self._write_isolating(items[middle:], None)
            return
        # The first occurrence of a new hash is the one that stored it.
        for lot, i in items:
            ev = lot.events[i]
            fresh = ev.event_hash in new
            new.discard(ev.event_hash)
            lot.results[i] = RecordResult(ev.event_hash, duplicate=not fresh)

    def _transaction(self, events: list[ParsedEvent], facts: Facts | None) -> set[str]:
        """One transaction for ``events``; the hashes it stored. Conflicts are retried."""
        for attempt in range(_CONFLICT_RETRIES + 1):
            started = time.perf_counter()
            try:
                # Several processes may write one SQLite file (serve --workers N):
                # they take turns through the lock file (see transactions.py).
                # The writer counts the revisions of the records it changes (revisions.py).
                with write_transaction(self.engine, records=False) as conn:
                    new = self._writer.write(conn, events, facts)
            except BaseException as exc:
                self._writer.rollback()  # the id caches may hold rows that were not committed
                if isinstance(exc, WriteConflict) and attempt < _CONFLICT_RETRIES:
                    time.sleep(0.01 * (attempt + 1))
                    facts = None  # the writer may have changed them while writing
                    continue
                raise
            self._writer.commit()
            if self.on_commit is not None:
                self.on_commit(len(events), time.perf_counter() - started)
            if self._checkpointer is not None:
                self._checkpointer.committed(len(new))
            return new
        raise AssertionError("unreachable")

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

    def producer_figures(self) -> list[producers.ProducerFigures]:
        """Every producer's figures as of now (see :mod:`headwater.store.producers`)."""
        try:
            with self.engine.connect() as conn:
                return producers.read(conn, datetime.now(UTC).replace(tzinfo=None))
        except SQLAlchemyError as exc:
            raise StoreError(f"database read failed: {exc}") from exc


def _facts_or_none(events: list[ParsedEvent], names: Normaliser | None) -> Facts | None:
    """The facts of ``events``, or None if an event breaks their extraction (isolated later)."""
    try:
        return Facts.of(events, names)
    except Exception:  # noqa: BLE001 - the transaction finds which event it was
        return None


def _refusal(ev: ParsedEvent, exc: BaseException) -> RecordResult:
    if isinstance(exc, WriteRefused | EventError):
        reason = str(exc)
    else:
        # Not a refusal the database made: a shape the fact extraction does not
        # expect. Logged with its traceback, since it may be headwater's bug.
        logger.warning("event %s could not be recorded", ev.event_hash, exc_info=exc)
        reason = f"the event could not be recorded: {exc.__class__.__name__}: {exc}"
    return RecordResult(ev.event_hash, refused=reason,
                        field=exc.field if isinstance(exc, EventError) else None)
