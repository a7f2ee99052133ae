"""Where SQLite and PostgreSQL differ: engines, upserts, session settings.

Everything else in ``headwater.store`` is written once in SQLAlchemy Core.
"""

from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from headwater.store.driver.begin import begin_sqlite

__all__ = [
    "SQLITE_REVISION_PRAGMA",
    "UNVERSIONED_OPTION",
    "WRITER_OPTION",
    "create_engine",
    "insert",
    "is_sqlite",
    "json_member",
]

logger = logging.getLogger(__name__)

# How long a SQLite connection waits for another process's write lock.
SQLITE_BUSY_TIMEOUT_MS = 30_000

# Page cache per connection, in KiB.
SQLITE_CACHE_KB = 65_536

# WAL pages (4 KiB) after which a committing connection checkpoints by itself.
SQLITE_AUTOCHECKPOINT_PAGES = 50_000

# The WAL file is truncated to this size when SQLite restarts it.
SQLITE_WAL_KEEP_BYTES = 64 * 1024 * 1024

#: Execution option marking a connection that writes (see ``_configure_sqlite``).
WRITER_OPTION = "headwater_writer"

#: The SQLite header field counting the store's write transactions: every commit
#: that changed a row adds one in the same transaction, whichever process made it,
#: so a reader learns whether anything changed from one PRAGMA. ETags of read
#: answers are derived from it (``headwater.store.reads.watermark``).
SQLITE_REVISION_PRAGMA = "user_version"
#: Execution option of a write transaction no read answer shows (the audit log's):
#: it leaves the revision as it is, so ETags stay current.
UNVERSIONED_OPTION = "headwater_unversioned"
_CHANGES_AT_BEGIN = "headwater_changes_at_begin"


def is_sqlite(url: str | sa.URL) -> bool:
    return sa.make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str) -> sa.Engine:
    """An engine configured for headwater's write pattern on either database.

    SQLite: WAL (readers never block the one writer), ``synchronous=NORMAL``
    (durable at checkpoints, fast commits), foreign keys on, and transactions
    begun by us with ``BEGIN IMMEDIATE`` so a writer takes the lock up front
    instead of failing half-way with SQLITE_BUSY (writers only).
    """
    parsed = sa.make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        engine = sa.create_engine(parsed, connect_args={"check_same_thread": False})
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        return sa.create_engine(parsed, pool_pre_ping=True)
    raise ValueError(f"unsupported database URL scheme {parsed.drivername!r}")


def _configure_sqlite(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        # The write path touches several wide unique indexes per batch; the
        # 2 MB default page cache makes every batch re-read them from disk.
        cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KB}")
        cursor.execute("PRAGMA temp_store=MEMORY")
        # The Store checkpoints in a thread of its own (checkpoint.py); a
        # connection's own checkpoint, run inside a commit, is only the
        # backstop for when that thread falls behind or no Store is open.
        cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_AUTOCHECKPOINT_PAGES}")
        # After a checkpoint lets SQLite restart the WAL, trim the file back.
        cursor.execute(f"PRAGMA journal_size_limit={SQLITE_WAL_KEEP_BYTES}")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # Writers take the write lock up front (BEGIN IMMEDIATE) rather than
        # failing half-way with SQLITE_BUSY; readers stay deferred.
        begin_sqlite(conn, immediate=conn.get_execution_options().get(WRITER_OPTION, False))
        conn.info[_CHANGES_AT_BEGIN] = _driver(conn).total_changes

    @sa.event.listens_for(engine, "commit")
    def _on_commit(conn: sa.Connection) -> None:
        # Runs just before the COMMIT: a transaction that changed rows bumps the
        # database's revision in the same commit (see SQLITE_REVISION_PRAGMA).
        driver = _driver(conn)
        if conn.get_execution_options().get(UNVERSIONED_OPTION, False):
            conn.info.pop(_CHANGES_AT_BEGIN, None)
            return
        if driver.total_changes != conn.info.pop(_CHANGES_AT_BEGIN, driver.total_changes):
            (revision,) = driver.execute(f"PRAGMA {SQLITE_REVISION_PRAGMA}").fetchone()
            driver.execute(f"PRAGMA {SQLITE_REVISION_PRAGMA} = {(int(revision) + 1) % 2**31}")


def _driver(conn: sa.Connection) -> Any:
    return conn.connection.driver_connection


def insert(dialect_name: str, table: sa.Table) -> Any:
    """The dialect's INSERT construct, which knows ON CONFLICT."""
    if dialect_name == "sqlite":
        return sqlite.insert(table)
    if dialect_name == "postgresql":
        return postgresql.insert(table)
    raise ValueError(f"unsupported dialect {dialect_name!r}")


def json_member(dialect_name: str, document: Any, key: str, json_type: str) -> Any:
    """SQL for ``document[key]`` when it is of ``json_type`` (``array`` or ``string``), else NULL.

    Arrays come back as JSON (text on SQLite, JSONB on PostgreSQL), strings as
    text. Lets the write path derive columns from stored facets inside the
    database instead of reading the facets back into Python.
    """
    if dialect_name == "sqlite":
        path = f'$."{key}"'
        sqlite_type = {"array": "array", "string": "text"}[json_type]
        return sa.case((sa.func.json_type(document, path) == sqlite_type,
                        sa.func.json_extract(document, path)))
    if dialect_name == "postgresql":
        member = document.op("->")(key)
        value = member if json_type == "array" else document.op("->>")(key)
        return sa.case((sa.func.jsonb_typeof(member) == json_type, value))
    raise ValueError(f"unsupported dialect {dialect_name!r}")
