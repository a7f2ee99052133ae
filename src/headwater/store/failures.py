"""Why a write failed: the database is unavailable, two writers collided, or the data.

The write path answers these three differently. *Unavailable* (connection
refused or lost, disk full, out of memory, the database locked past its
timeout, shutting down) is nobody's event's fault: the request is answered
503 ``retriable: true`` and the producer sends it again. A *conflict* (a
deadlock or serialization failure between two servers upserting the same
rows) passes if the transaction runs again. Anything else was caused by what
was being written, and the store isolates the events responsible.

The classification reads the driver's own error codes: PostgreSQL's SQLSTATE
(psycopg's ``sqlstate``) and SQLite's extended result code
(``sqlite_errorname``, Python 3.11+).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout

__all__ = ["is_conflict", "is_unavailable"]

# SQLSTATE classes and codes that say nothing about the data written:
# 08 connection exception, 53 insufficient resources (disk full, out of memory,
# too many connections), 57 operator intervention (shutdown, cannot connect
# now, query cancelled), 58 system error (I/O), XX internal error.
_PG_UNAVAILABLE_CLASSES = ("08", "53", "57", "58", "XX")
# 55P03 lock not available, 55006 object in use, 42P01 undefined table (the
# schema is gone: the database was replaced or dropped under the server).
_PG_UNAVAILABLE_CODES = frozenset({"55P03", "55006", "42P01"})
# 40001 serialization failure, 40P01 deadlock detected.
_PG_CONFLICT_CODES = frozenset({"40001", "40P01"})

_SQLITE_UNAVAILABLE = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_IOERR",
                       "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_NOMEM",
                       "SQLITE_PROTOCOL", "SQLITE_CORRUPT", "SQLITE_NOTADB",
                       "SQLITE_INTERRUPT", "SQLITE_PERM", "SQLITE_AUTH")


def is_unavailable(exc: BaseException) -> bool:
    """True if ``exc`` means the database cannot take writes now, whatever is written."""
    if isinstance(exc, DisconnectionError):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    driver = _driver_error(exc)
    if driver is None:
        # No driver error: the connection pool timed out or the engine is disposed.
        return isinstance(exc, PoolTimeout)
    sqlstate = getattr(driver, "sqlstate", None)
    if isinstance(sqlstate, str):
        return sqlstate.startswith(_PG_UNAVAILABLE_CLASSES) or sqlstate in _PG_UNAVAILABLE_CODES
    if sqlstate is None and driver.__class__.__module__.startswith("psycopg"):
        # A psycopg error without a SQLSTATE was raised by the client library
        # itself: the connection failed or broke, except for the data errors
        # it raises before sending (NUL in text, a value it cannot adapt).
        return driver.__class__.__name__ in ("OperationalError", "InterfaceError")
    name = getattr(driver, "sqlite_errorname", None)
    if isinstance(name, str):
        # SQLITE_ERROR is generic; "no such table" means the file is not the store.
        return name.startswith(_SQLITE_UNAVAILABLE) or "no such table" in str(driver)
    return False


def is_conflict(exc: BaseException) -> bool:
    """True if ``exc`` is a deadlock or serialization failure: the same transaction may pass."""
    driver = _driver_error(exc)
    return getattr(driver, "sqlstate", None) in _PG_CONFLICT_CODES


def _driver_error(exc: BaseException) -> Any:
    """The driver's exception behind ``exc`` (SQLAlchemy wraps it as ``orig``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DBAPIError):
            return current.orig
        current = current.__cause__
    return None
