"""Read statements with list parameters, run through the database driver.

A lineage walk runs a few statements per depth level, each with a list of names
or ids (the frontier). Through SQLAlchemy each execution renders the list into
the SQL text, one placeholder per item, which costs twice:

- on PostgreSQL every list length is new SQL text, so psycopg never reuses a
  prepared statement and the server parses and plans each execution anew;
- on SQLite, rendering the list and SQLAlchemy's per-row result handling cost
  more than the database's own work for a large answer.

A :class:`ListSelect` compiles its statement once per dialect. On PostgreSQL a
list is one array parameter (``= ANY(%(names)s)``): the text never changes and
the driver prepares it. On SQLite the list is expanded into ``?`` placeholders,
the text cached per list length. Rows come back as named tuples with the values
SQLAlchemy would give: SQLite's DateTime and JSON text are converted here (the
PostgreSQL driver returns both converted already).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import sqlalchemy as sa

from headwater.store.driver.bulk import RowMaker, driver_cursor
from headwater.store.chunking import CHUNK

__all__ = ["ListSelect"]

# How SQLAlchemy renders an expanding parameter before it knows the list.
_EXPANDING = re.compile(r"IN \(__\[POSTCOMPILE_(\w+)\]\)")


class _Compiled:
    """One statement compiled for one dialect, ready to render for given lists."""

    def __init__(self, stmt: sa.Select[Any], dialect: sa.Dialect) -> None:
        compiled = stmt.compile(dialect=dialect)
        self.lists = set(_EXPANDING.findall(compiled.string))
        if not self.lists:
            raise ValueError("statement has no expanding list parameter")
        self.list_order = sorted(self.lists)  # the key of the SQLite text cache
        # Lists of tuples (``tuple_(a, b).in_(...)``): their width, by name.
        self.widths = {
            name: len(compiled.binds[name].type.types)
            for name in self.lists
            if isinstance(compiled.binds[name].type, sa.types.TupleType)
        }
        # The SQL type of each tuple position: unnest() needs typed arrays.
        self.element_types = {
            name: [dialect.type_compiler_instance.process(element)
                   for element in compiled.binds[name].type.types]
            for name in self.widths
        }
        # Scalar parameters go through their type's bind processing (e.g. SQLite
        # stores DateTime as text in one fixed format, which comparisons rely on).
        self.processors: dict[str, Callable[[Any], Any]] = {}
        for name, bind in compiled.binds.items():
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if processor is not None and name not in self.lists:
                self.processors[name] = processor
        # Values the statement carries itself (literals such as ``target_field != ''``).
        self.constants = {
            name: value for name, value in compiled.params.items()
            if name not in self.lists and value is not None
        }
        self.positional = dialect.paramstyle == "qmark"
        if self.positional:
            self.order = list(compiled.positiontup or [])
            self.template = compiled.string
            self._by_lengths: dict[tuple[int, ...], str] = {}
        else:
            # Named parameters (psycopg): each list is one array parameter; a list of
            # tuples is one array per position, zipped back by unnest().
            self.sql = _EXPANDING.sub(self._array_in, compiled.string)

    def _array_in(self, match: re.Match[str]) -> str:
        name = match.group(1)
        width = self.widths.get(name)
        if width is None:
            return f"= ANY(%({name})s)"
        columns = ", ".join(
            f"%({name}__{i})s::{sql_type}[]"
            for i, sql_type in enumerate(self.element_types[name])
        )
        return f"IN (SELECT * FROM unnest({columns}))"

    def _placeholders(self, name: str, count: int) -> str:
        width = self.widths.get(name)
        if width is None:
            return "IN (" + ", ".join(["?"] * count) + ")"
        row = "(" + ", ".join(["?"] * width) + ")"
        return "IN (VALUES " + ", ".join([row] * count) + ")"

    def _scalar(self, name: str, value: Any) -> Any:
        processor = self.processors.get(name)
        return processor(value) if processor is not None and value is not None else value

    def render(self, given: Mapping[str, Any]) -> tuple[str, Any]:
        params = {**self.constants, **given}
        if not self.positional:
            values = {}
            for name, value in params.items():
                if name in self.widths:
                    for i in range(self.widths[name]):
                        values[f"{name}__{i}"] = [item[i] for item in value]
                elif name in self.lists:
                    values[name] = list(value)
                else:
                    values[name] = self._scalar(name, value)
            return self.sql, values
        lengths = tuple(len(params[name]) for name in self.list_order)
        sql = self._by_lengths.get(lengths)
        if sql is None:
            sizes = dict(zip(self.list_order, lengths, strict=True))
            sql = _EXPANDING.sub(
                lambda m: self._placeholders(m.group(1), sizes[m.group(1)]), self.template
            )
            self._by_lengths[lengths] = sql
        args: list[Any] = []
        for name in self.order:
            if name in self.widths:
                args.extend(value for item in params[name] for value in item)
            elif name in self.lists:
                args.extend(params[name])
            else:
                args.append(self._scalar(name, params[name]))
        return sql, args


class ListSelect:
    """A SELECT with one or more expanding list parameters (``col.in_(bindparam(name,
    expanding=True))``, or ``sa.tuple_(a, b).in_(...)`` for a list of tuples) and any
    scalar ones, run through the driver.

    Build it once at import time; :meth:`rows` runs it in a connection's transaction.
    Every list must be non-empty (callers send their lists in chunks).
    """

    def __init__(self, stmt: sa.Select[Any]) -> None:
        self.stmt = stmt
        self._compiled: dict[str, tuple[_Compiled, RowMaker]] = {}

    def rows(self, conn: sa.Connection, params: Mapping[str, Any]) -> list[Any]:
        """The rows for ``params`` (every statement parameter, lists as sequences)."""
        dialect = conn.dialect
        prepared = self._compiled.get(dialect.name)
        if prepared is None:
            prepared = _Compiled(self.stmt, dialect), RowMaker(self.stmt, dialect.name)
            self._compiled[dialect.name] = prepared
        compiled, maker = prepared
        sql, args = compiled.render(params)
        if not conn.in_transaction():
            # The statements of one answer read one snapshot, as through SQLAlchemy.
            conn.begin()
        with driver_cursor(conn, sql) as cursor:
            cursor.execute(sql, args)
            raw = cursor.fetchall()
        return maker.rows(raw)

    def rows_by_name(
        self,
        conn: sa.Connection,
        keys: Iterable[tuple[str, str]],
        params: Mapping[str, Any] | None = None,
        chunk: int = CHUNK,
    ) -> Iterator[tuple[str, Any]]:
        """(namespace, row) for (namespace, name) ``keys``: the statement's ``namespace``
        and ``names`` parameters, run once per namespace and chunk of names."""
        names_in: dict[str, set[str]] = defaultdict(set)
        for namespace, name in keys:
            names_in[namespace].add(name)
        for namespace, names in names_in.items():
            ordered = sorted(names)
            for start in range(0, len(ordered), chunk):
                values = {**(params or {}), "namespace": namespace,
                          "names": ordered[start:start + chunk]}
                for row in self.rows(conn, values):
                    yield namespace, row
