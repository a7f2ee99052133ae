"""WAL checkpoints off the write path (SQLite).

In WAL mode every commit appends pages to ``<db>-wal``; a *checkpoint* copies
them back into the database file and syncs it. Left to SQLite, the connection
whose commit crosses ``wal_autocheckpoint`` pages runs the checkpoint inside
that commit, so one batch in every few waits ~200 ms for it while holding the
write lock. The :class:`WalCheckpointer` runs passive checkpoints in a thread
of its own instead: the sqlite3 module releases the GIL while SQLite works, so
the copy proceeds on another core while the next batch is written (WAL lets a
checkpoint and a writer run at once). The writers' own ``wal_autocheckpoint``
(see ``dialects``) stays as a backstop in case this thread falls behind.

:func:`truncate_large_wal` is for the paths that write a lot in one
transaction or in a few (a schema migration, retention): it checkpoints the
WAL and truncates it to nothing at the end of such a path, when it outgrew the
``journal_size_limit`` SQLite keeps.

The same thread refreshes the planner statistics (``statistics``): each time
the events this process committed since the last refresh reach as many as
before it (a store that grew from empty is re-analyzed at 1,000, 2,000,
4,000... events), at least :data:`STATISTICS_MIN_EVENTS`, at the latest every
:data:`STATISTICS_EVERY_S` while events come in, and once more when the store
closes.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time

import sqlalchemy as sa

from headwater.store import dialects
from headwater.store.statistics import refresh_statistics
from headwater.store.transactions import cross_process_lock, write_lock_path

__all__ = [
    "CHECKPOINT_AFTER_EVENTS",
    "CHECKPOINT_AFTER_S",
    "STATISTICS_EVERY_S",
    "STATISTICS_MIN_EVENTS",
    "TRUNCATE_WAIT_MS",
    "WalCheckpointer",
    "truncate_large_wal",
]

logger = logging.getLogger(__name__)

#: Checkpoint once this many events were committed since the last checkpoint
#: (~25 KB of WAL each) ...
CHECKPOINT_AFTER_EVENTS = 1_000
#: ... or, with fewer, once this many seconds have passed.
CHECKPOINT_AFTER_S = 2.0
#: Refresh the planner statistics after at least this many committed events ...
STATISTICS_MIN_EVENTS = 1_000
#: ... and, while events come in, at least this often (seconds).
STATISTICS_EVERY_S = 3_600.0
#: How long truncating a large WAL waits for the writer and the readers using it
#: before it leaves the WAL to SQLite.
TRUNCATE_WAIT_MS = 10_000


class WalCheckpointer:
    """A daemon thread that checkpoints ``database``'s WAL after enough commits.

    Writers call :meth:`committed` after each commit with the number of events
    it stored. A checkpoint runs once ``after_events`` were committed since the
    last, or after ``after_s`` seconds when fewer were: often enough that each
    checkpoint is small and usually finishes between two write transactions
    (only a finished checkpoint lets SQLite restart the WAL from its start, so
    the file stays small), rarely enough that a stream of one-event commits
    does not sync the database file after every one. An idle store costs
    nothing. (The WAL file's size cannot tell how much is left to copy: SQLite
    reuses the file from its start.)
    """

    def __init__(self, database: str, *, after_events: int = CHECKPOINT_AFTER_EVENTS,
                 after_s: float = CHECKPOINT_AFTER_S,
                 statistics_every_s: float | None = None) -> None:
        self._database = database
        self._after_events = after_events
        self._after_s = after_s
        # Read at construction, not bound as a default, so tests can shorten it.
        self._statistics_every_s = (STATISTICS_EVERY_S if statistics_every_s is None
                                    else statistics_every_s)
        self._lock = threading.Lock()
        self._pending = 0  # events committed since the last checkpoint began
        self._unanalyzed = 0  # events committed since the last statistics refresh began
        self._analyzed = 0  # events committed before it
        self._analyzed_at = time.monotonic()
        self.statistics_refreshes = 0  # (for tests)
        self._wake = threading.Event()
        self._stopping = False
        self.checkpoints = 0  # completed passive checkpoints (for tests and benchmarks)
        self._thread = threading.Thread(target=self._run, name="headwater-wal-checkpoint",
                                        daemon=True)
        self._thread.start()

    def committed(self, events: int) -> None:
        """A transaction storing ``events`` new events was committed."""
        with self._lock:
            self._pending += events
            self._unanalyzed += events
            due = self._pending >= self._after_events
        if due:
            self._wake.set()

    def close(self) -> None:
        """Stop the thread and refresh the statistics if events came in since the last refresh
        (SQLite checkpoints the rest when the last connection closes)."""
        self._stopping = True
        self._wake.set()
        self._thread.join()
        if self._unanalyzed:
            self._refresh_statistics()

    def _statistics_due(self) -> bool:
        with self._lock:
            if not self._unanalyzed:
                return False
            grown = self._unanalyzed >= max(STATISTICS_MIN_EVENTS, self._analyzed)
            return grown or (time.monotonic() - self._analyzed_at >= self._statistics_every_s)

    def _refresh_statistics(self) -> None:
        with self._lock:
            self._analyzed += self._unanalyzed
            self._unanalyzed = 0
            self._analyzed_at = time.monotonic()
        if refresh_statistics(self._database):
            self.statistics_refreshes += 1

    def _run(self) -> None:
        connection: sqlite3.Connection | None = None
        try:
            while True:
                self._wake.wait(self._after_s)
                if self._stopping:
                    return
                self._wake.clear()
                if self._statistics_due():
                    self._refresh_statistics()
                with self._lock:
                    if not self._pending:
                        continue
                    self._pending = 0
                try:
                    if connection is None:
                        connection = sqlite3.connect(self._database, check_same_thread=False,
                                                     isolation_level=None)
                        connection.execute("PRAGMA busy_timeout=0")
                    # PASSIVE: copy what no reader still needs, never wait for a lock.
                    busy, _frames, _copied = connection.execute(
                        "PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.OperationalError as exc:
                    # E.g. another process's checkpoint (serve --workers N)
                    # holds the checkpoint lock: that one does the work now.
                    logger.debug("WAL checkpoint skipped: %s", exc)
                    with self._lock:
                        self._pending += 1  # try again at the next chance
                    continue
                if not busy:
                    self.checkpoints += 1
        except Exception:  # the writers' autocheckpoint still bounds the WAL
            logger.exception("background WAL checkpoints stopped; SQLite's own take over")
        finally:
            if connection is not None:
                connection.close()


def truncate_large_wal(engine: sa.Engine) -> int:
    """Checkpoint ``engine``'s WAL and truncate it to nothing if it outgrew the size SQLite
    keeps (``journal_size_limit``); the WAL's bytes before, or 0 when nothing was done.

    A path that writes a lot in one transaction (a migration filling or indexing a
    big table) leaves a WAL as large as what it wrote. SQLite cuts it down to the
    limit only when it restarts the WAL, in the commit of the next write -- an
    ingested event's, holding the write lock: about 0.27 ms per MB on ext4 (3.6 s
    after 13 GB). Called at the end of such a path, the cost lands there instead.
    Not SQLite (PostgreSQL), an in-memory store or a WAL within the limit: nothing.
    """
    lock = write_lock_path(engine)
    database = engine.url.database
    if lock is None or not database:
        return 0
    try:
        size = os.path.getsize(f"{database}-wal")
    except OSError:
        return 0  # no WAL file: nothing written since the last connection closed
    if size <= dialects.SQLITE_WAL_KEEP_BYTES:
        return 0
    began = time.perf_counter()
    connection = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    try:
        connection.execute(f"PRAGMA busy_timeout={TRUNCATE_WAIT_MS}")
        # Copying the pages back holds no writer up; the TRUNCATE after it
        # blocks writers, but only for what was committed meanwhile and the cut.
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        with cross_process_lock(lock):
            busy, _frames, _copied = connection.execute(
                "PRAGMA wal_checkpoint(TRUNCATE)"
            ).fetchone()
    except sqlite3.Error as exc:
        logger.warning("the %d MB write-ahead log was not truncated: %s", size >> 20, exc)
        return 0
    finally:
        connection.close()
    if busy:
        logger.info(
            "the %d MB write-ahead log was not truncated: other connections kept it in use "
            "for %d ms",
            size >> 20,
            TRUNCATE_WAIT_MS,
        )
        return 0
    logger.info(
        "checkpointed and truncated the %d MB write-ahead log in %.1f s",
        size >> 20,
        time.perf_counter() - began,
    )
    return size
