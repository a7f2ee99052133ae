"""Many rows, one statement: the write path's executemany, without per-row overhead.

SQLAlchemy Core builds every statement the write path runs; this module only
changes how their rows travel. ``Connection.execute(stmt, rows)`` converts
each value of each row in Python (datetimes to text on SQLite, JSON through
``json.dumps``, one bind processor call per value): with ~10 rows of ~8
values per event, that was a quarter of the store's CPU. Here a statement is
compiled once per dialect and set of columns, the few conversions the
columns need are done by fast functions (``datetime.isoformat`` in C, orjson),
and the rows go to the driver's own ``executemany`` on the connection's
current transaction.

The conversions write exactly what SQLAlchemy's types would store, so the
read path (plain SQLAlchemy) reads them back unchanged:

* ``DateTime`` on SQLite: ``YYYY-MM-DD HH:MM:SS.ffffff`` text (SQLAlchemy's
  storage format; fixed width, so text order is time order);
* ``JSON``: JSON text (a Python ``None`` is JSON ``null``, as SQLAlchemy's
  JSON type stores it); PostgreSQL casts it to JSONB in the statement.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from operator import itemgetter
from typing import Any

import orjson
import sqlalchemy as sa

__all__ = [
    "BulkStatement", "IdsStatement", "RowMaker", "copy_rows", "driver_cursor", "json_text",
    "sqlite_time",
]


def sqlite_time(value: datetime | None) -> str | None:
    """A naive UTC datetime as SQLAlchemy stores it in SQLite."""
    return None if value is None else value.isoformat(" ", "microseconds")


def json_text(value: Any) -> str:
    """A JSON column's value as text (``None`` is JSON ``null``)."""
    return orjson.dumps(value).decode()


@contextmanager
def driver_cursor(conn: sa.Connection, sql: str) -> Iterator[Any]:
    """A driver cursor on ``conn``'s transaction, for running ``sql``.

    Driver errors come out as the exception SQLAlchemy would raise, so callers
    see one kind whichever way a statement ran.
    """
    cursor = conn.connection.cursor()
    try:
        yield cursor
    except conn.dialect.loaded_dbapi.Error as exc:
        raise sa.exc.DBAPIError.instance(sql, None, exc, conn.dialect.loaded_dbapi.Error) from exc
    finally:
        cursor.close()


class BulkStatement:
    """``stmt`` compiled for ``dialect`` and the columns ``columns``, run with executemany."""

    def __init__(self, stmt: sa.Insert | sa.Update | sa.Delete, columns: Sequence[str],
                 dialect: sa.Dialect, table: sa.Table) -> None:
        # Only table columns are column keys; other names are bindparams
        # (e.g. an UPDATE's ``WHERE uuid = :b_uuid``).
        compiled = stmt.compile(dialect=dialect,
                                column_keys=[c for c in columns if c in table.c])
        self.sql = compiled.string
        self.positional = dialect.paramstyle in ("qmark", "numeric", "format")
        # positiontup lists a parameter once per use, in statement order.
        names = list(compiled.positiontup or []) if self.positional else list(columns)
        missing = set(names) - set(columns)
        if missing:
            raise ValueError(f"statement needs parameters not given: {sorted(missing)}")
        self.names = names
        sqlite = dialect.name == "sqlite"
        self.converters: dict[str, Callable[[Any], Any]] = {}
        for name in set(names):
            column = table.c.get(name)
            if column is None:
                continue
            kind = column.type
            if isinstance(kind, sa.JSON):
                self.converters[name] = json_text
            elif sqlite and isinstance(kind, sa.DateTime):
                self.converters[name] = sqlite_time

    def params(self, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """The driver parameters of ``rows``: tuples (SQLite) or dicts (PostgreSQL)."""
        converters = self.converters
        if self.positional:
            take = itemgetter(*self.names)
            if len(self.names) == 1:
                plain = [(take(row),) for row in rows]
            else:
                plain = [take(row) for row in rows]
            if not converters:
                return plain
            at = [(i, converters[name]) for i, name in enumerate(self.names) if name in converters]
            out = []
            for values in plain:
                values = list(values)
                for i, convert in at:
                    values[i] = convert(values[i])
                out.append(values)
            return out
        if not converters:
            return list(rows)
        out = []
        for row in rows:
            row = dict(row)
            for name, convert in converters.items():
                row[name] = convert(row[name])
            out.append(row)
        return out

    def execute(self, conn: sa.Connection, rows: Sequence[dict[str, Any]]) -> None:
        """Run the statement once per row of ``rows`` in ``conn``'s transaction."""
        if rows:
            self._run(conn, rows, each=False)

    def execute_each(self, conn: sa.Connection, rows: Sequence[dict[str, Any]]) -> list[int]:
        """Like :meth:`execute`, one call per row; returns each row's rowcount.

        For an ``INSERT … ON CONFLICT DO NOTHING`` the rowcounts say which rows
        were new, which ``executemany`` cannot tell.
        """
        return self._run(conn, rows, each=True) if rows else []

    def _run(self, conn: sa.Connection, rows: Sequence[dict[str, Any]], each: bool) -> list[int]:
        params = self.params(rows)
        with driver_cursor(conn, self.sql) as cursor:
            if not each:
                cursor.executemany(self.sql, params)
                return []
            counts = []
            for one in params:
                cursor.execute(self.sql, one)
                counts.append(cursor.rowcount)
            return counts


_MARKER = "__[POSTCOMPILE_ids]"


class RowMaker:
    """Named-tuple rows from a driver's raw rows for a SELECT's columns, with the
    values SQLAlchemy would give: on SQLite, ``DateTime`` text becomes ``datetime``
    and JSON text becomes values (PostgreSQL's driver returns both converted)."""

    def __init__(self, stmt: sa.Select[Any] | sa.CompoundSelect[Any], dialect_name: str) -> None:
        columns = list(stmt.selected_columns)
        # rename: two selected ``name`` columns become ``name`` and ``_1``.
        keys = [c.key for c in columns]
        self.row_type = namedtuple("Row", keys, rename=True)  # type: ignore[misc]
        self.converters: list[tuple[int, Callable[[Any], Any]]] = []
        if dialect_name == "sqlite":
            for i, column in enumerate(columns):
                if isinstance(column.type, sa.JSON):
                    self.converters.append((i, _json_value))
                elif isinstance(column.type, sa.DateTime):
                    self.converters.append((i, _sqlite_datetime))

    def rows(self, raw: Iterable[Sequence[Any]]) -> list[Any]:
        make = self.row_type._make
        if not self.converters:
            return [make(row) for row in raw]
        out = []
        for row in raw:
            values = list(row)
            for i, convert in self.converters:
                if values[i] is not None:
                    values[i] = convert(values[i])
            out.append(make(values))
        return out


class IdsStatement:
    """A statement with one expanding ``ids`` parameter, run through the driver.

    The write path runs a dozen such statements per transaction (derivation
    after each batch); SQLAlchemy's per-execution work for them (parameter
    processing, expanding the IN list, result set-up) cost more than the
    database's. Compiled once, the IN list is expanded by text substitution
    and rows come back as named tuples with the column types' conversions
    done here: on SQLite, ``DateTime`` text to ``datetime`` and JSON text to
    values (PostgreSQL's driver returns both already).
    """

    def __init__(self, stmt: sa.Select[Any] | sa.CompoundSelect[Any] | sa.Update | sa.Delete,
                 dialect: sa.Dialect) -> None:
        compiled = stmt.compile(dialect=dialect)
        if _MARKER not in compiled.string:
            raise ValueError("statement has no expanding 'ids' parameter")
        self.sql = compiled.string
        self.positional = dialect.paramstyle in ("qmark", "numeric", "format")
        self.names = list(compiled.positiontup or [])
        self.constants = dict(compiled.params)
        self.placeholder = "?" if dialect.paramstyle == "qmark" else "%s"
        self._sql_by_count: dict[int, str] = {}
        self.maker = (
            RowMaker(stmt, dialect.name) if isinstance(stmt, sa.Select | sa.CompoundSelect)
            else None
        )

    def _statement(self, count: int) -> str:
        sql = self._sql_by_count.get(count)
        if sql is None:
            if self.positional:
                expanded = ", ".join([self.placeholder] * count)
            else:
                expanded = ", ".join(f"%(ids__{i})s" for i in range(count))
            sql = self._sql_by_count[count] = self.sql.replace(_MARKER, expanded)
        return sql

    def _params(self, ids: Sequence[Any]) -> Any:
        if self.positional:
            values: list[Any] = []
            for name in self.names:
                if name == "ids":
                    values.extend(ids)
                else:
                    values.append(self.constants[name])
            return values
        params = dict(self.constants)
        params.update({f"ids__{i}": value for i, value in enumerate(ids)})
        return params

    def run(self, conn: sa.Connection, ids: Sequence[Any]) -> list[Any]:
        """Execute for ``ids`` (non-empty) in ``conn``'s transaction; the rows of a SELECT."""
        sql = self._statement(len(ids))
        with driver_cursor(conn, sql) as cursor:
            cursor.execute(sql, self._params(ids))
            if self.maker is None:
                return []
            raw = cursor.fetchall()
        return self.maker.rows(raw)


def _json_value(text: Any) -> Any:
    return orjson.loads(text) if isinstance(text, str | bytes) else text


def _sqlite_datetime(text: Any) -> Any:
    return datetime.fromisoformat(text) if isinstance(text, str) else text


def copy_rows(conn: sa.Connection, table: sa.Table, columns: Sequence[str],
              rows: Iterable[dict[str, Any]]) -> None:
    """Append ``rows`` to ``table`` with PostgreSQL's COPY (plain inserts only).

    For append-only rows that never conflict, COPY costs the server a few
    microseconds a row where an INSERT, even pipelined, costs tens.
    """
    take = itemgetter(*columns)
    sql = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
    with driver_cursor(conn, sql) as cursor, cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(take(row))
