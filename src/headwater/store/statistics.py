"""Planner statistics of a SQLite store (``sqlite_stat1``), kept off the write path.

SQLite's query planner chooses between indexes by the statistics ANALYZE
stores; without them it guesses, and some of headwater's reads then scan a big
table where an index answers in milliseconds. PostgreSQL gathers its own
(autovacuum); SQLite gathers none unless asked, so a file store gets them
here: once after migrations ran (a fresh or upgraded store starts with
statistics), then periodically from the store's background thread
(``checkpoint.WalCheckpointer``) and when the store closes.

``PRAGMA analysis_limit`` makes ANALYZE read about that many rows of each
index instead of all of them, so a refresh costs milliseconds even on a store
of many gigabytes; the estimates it stores are what the planner needs (which
index narrows a lookup more), not exact counts. SQLite's ``PRAGMA optimize``
chooses the tables to analyze by what queries on the *same connection* used
(before SQLite 3.46, which the store runs on, it looks at nothing else), so
from a connection of its own it would analyze nothing: the refresh runs
ANALYZE under the limit on every table instead, which is what optimize would
run for each table it picked.
"""

from __future__ import annotations

import logging
import sqlite3
import time

from headwater.store.transactions import cross_process_lock

__all__ = ["ANALYSIS_LIMIT_ROWS", "refresh_statistics"]

logger = logging.getLogger(__name__)

#: Rows of each index ANALYZE reads (``PRAGMA analysis_limit``).
ANALYSIS_LIMIT_ROWS = 400
#: How long a refresh waits for the write lock of other processes' writers.
_BUSY_WAIT_MS = 5_000


def refresh_statistics(database: str) -> bool:
    """Refresh the planner statistics of the SQLite file ``database``; False if it could not.

    ANALYZE writes ``sqlite_stat1``, so it takes the store's write lock (the
    ``<database>-writelock`` file writers take turns through) for the
    milliseconds it runs, and writers queue behind it as behind any writer.
    """
    began = time.perf_counter()
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout={_BUSY_WAIT_MS}")
        connection.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT_ROWS}")
        with cross_process_lock(f"{database}-writelock"):
            connection.execute("ANALYZE")
    except (sqlite3.Error, OSError) as exc:  # the reads keep the statistics they have
        logger.warning("planner statistics were not refreshed: %s", exc)
        return False
    finally:
        if connection is not None:
            connection.close()
    logger.debug("refreshed planner statistics in %.1f ms", (time.perf_counter() - began) * 1e3)
    return True
