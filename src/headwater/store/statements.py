"""The write path's compiled statements and surrogate-id caches, shared by writer and derive.

A :class:`Statements` belongs to one :class:`~headwater.store.writer.Writer`
(one database): each statement is compiled once per dialect and set of
columns, then run through :mod:`headwater.store.bulk` for every batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from headwater.store.driver.bulk import BulkStatement, IdsStatement
from headwater.store.merge import MergeRule, upsert_statement

__all__ = ["IdCache", "Statements"]


class IdCache:
    """Natural key -> surrogate id, with staged entries kept until commit.

    Ids learnt inside a transaction are only published by :meth:`commit`, so a
    rolled-back insert never leaves an id that does not exist.
    """

    def __init__(self) -> None:
        self._ids: dict[Any, int] = {}
        self._staged: dict[Any, int] = {}

    def get(self, key: Any) -> int | None:
        found = self._ids.get(key)
        return found if found is not None else self._staged.get(key)

    def stage(self, key: Any, value: int) -> None:
        self._staged[key] = value

    def forget(self, key: Any) -> None:
        """Drop ``key`` (its row was deleted)."""
        self._ids.pop(key, None)
        self._staged.pop(key, None)

    def commit(self) -> None:
        self._ids.update(self._staged)
        self._staged.clear()

    def rollback(self) -> None:
        self._staged.clear()


class Statements:
    """Upserts, bulk statements and id-list statements for one dialect, compiled once."""

    def __init__(self, dialect_name: str) -> None:
        self.dialect = dialect_name
        self._upserts: dict[str, sa.Insert] = {}
        self._bulk: dict[tuple[str, tuple[str, ...]], BulkStatement] = {}
        self._by_ids: dict[str, IdsStatement] = {}

    def upsert(self, conn: sa.Connection, rule: MergeRule, rows: Sequence[dict[str, Any]]) -> None:
        """Upsert ``rows`` into ``rule.table`` following the rule (one executemany)."""
        stmt = self._upserts.get(rule.table.name)
        if stmt is None:
            stmt = self._upserts[rule.table.name] = upsert_statement(rule, self.dialect)
        self.bulk(conn, rule.table.name, rule.table, stmt, rows)

    def by_ids(self, conn: sa.Connection, name: str, stmt: Any, ids: Sequence[Any]) -> list[Any]:
        """Run ``stmt`` (expanding parameter ``ids``) for ``ids``; its rows if a SELECT.

        ``name`` identifies the statement (compiled once per writer).
        """
        if not ids:
            return []
        runner = self._by_ids.get(name)
        if runner is None:
            runner = self._by_ids[name] = IdsStatement(stmt, conn.dialect)
        return runner.run(conn, ids)

    def bulk(self, conn: sa.Connection, name: str, table: sa.Table, stmt: Any,
             rows: Sequence[dict[str, Any]]) -> None:
        """Run ``stmt`` once per row of ``rows`` (see :mod:`headwater.store.bulk`)."""
        if rows:
            self.compiled(conn, name, table, stmt, rows).execute(conn, rows)

    def compiled(self, conn: sa.Connection, name: str, table: sa.Table,
                 stmt: Any, rows: Sequence[dict[str, Any]]) -> BulkStatement:
        """``stmt`` compiled for the columns of ``rows`` (cached by ``name`` and columns)."""
        key = (name, tuple(rows[0]))
        bulk = self._bulk.get(key)
        if bulk is None:
            bulk = self._bulk[key] = BulkStatement(stmt, key[1], conn.dialect, table)
        return bulk
