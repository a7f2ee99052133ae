"""SQLite transactions begun on the driver connection: ``BEGIN`` or ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["begin_sqlite"]


def begin_sqlite(conn: sa.Connection, immediate: bool) -> None:
    """Begin ``conn``'s transaction (from SQLAlchemy's ``begin`` event).

    Straight to the driver: SQLAlchemy's statement machinery costs more than
    the BEGIN itself, once per transaction. Errors still come out as
    SQLAlchemy's (an ``OperationalError`` when the lock wait times out).
    """
    sql = "BEGIN IMMEDIATE" if immediate else "BEGIN"
    dbapi_error = conn.dialect.loaded_dbapi.Error
    try:
        conn.connection.driver_connection.execute(sql)  # type: ignore[union-attr]
    except dbapi_error as exc:
        raise sa.exc.DBAPIError.instance(sql, None, exc, dbapi_error) from exc
