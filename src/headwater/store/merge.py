"""Order-independent merge rules, applied identically in Python and in SQL.

Every derived row is a function of the *set* of events that mention it. Each
column of a row follows one rule:

* ``least``: the smallest non-null value seen (``created_at``);
* ``greatest``: the largest non-null value seen (``updated_at``);
* ``guard`` + ``guarded``: the row's guard columns (e.g. ``event_time``,
  ``event_hash``) are compared as a tuple; the newest candidate replaces the
  guard and every guarded column together. The hash breaks ties, so equal
  event times still give one answer whatever the arrival order.

* ``counted``: one more on every upsert that meets a stored row (a write
  counter, not a fact: ``store.revisions``); the column's default on insert.

Columns in none of these are written on insert and never changed.
The same rule reduces rows inside a batch (:func:`merge_into`) and resolves
conflicts with stored rows (:func:`upsert_statement`), so a batch's outcome
does not depend on how events were split into batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from headwater.store import dialects

__all__ = ["MergeRule", "merge_into", "upsert_statement"]


@dataclass(frozen=True)
class MergeRule:
    """How rows of ``table`` with the same ``key`` combine."""

    table: sa.Table
    key: tuple[str, ...]
    least: tuple[str, ...] = ("created_at",)
    greatest: tuple[str, ...] = ("updated_at",)
    guard: tuple[str, ...] = ()
    guarded: tuple[str, ...] = ()
    counted: tuple[str, ...] = ()


def merge_into(
    rows: dict[Any, dict[str, Any]], key: Any, row: dict[str, Any], rule: MergeRule
) -> None:
    """Fold ``row`` into ``rows[key]`` following ``rule`` (in place).

    This runs tens of times per event, so it is written for speed.
    """
    old = rows.get(key)
    if old is None:
        rows[key] = row
        return
    for col in rule.least:
        new = row[col]
        if new is not None:
            current = old[col]
            if current is None or new < current:
                old[col] = new
    for col in rule.greatest:
        new = row[col]
        if new is not None:
            current = old[col]
            if current is None or new > current:
                old[col] = new
    guard = rule.guard
    if guard and [row[c] for c in guard] > [old[c] for c in guard]:
        for col in guard:
            old[col] = row[col]
        for col in rule.guarded:
            old[col] = row[col]


def upsert_statement(rule: MergeRule, dialect_name: str) -> sa.Insert:
    """INSERT … ON CONFLICT (key) DO UPDATE implementing ``rule`` in SQL."""
    table = rule.table
    stmt = dialects.insert(dialect_name, table)
    new = stmt.excluded  # type: ignore[attr-defined]
    updates: dict[str, Any] = {}
    for col in rule.least:
        updates[col] = _sql_pick(table.c[col], new[col], "<")
    for col in rule.greatest:
        updates[col] = _sql_pick(table.c[col], new[col], ">")
    if rule.guard:
        newer = _newer([new[c] for c in rule.guard], [table.c[c] for c in rule.guard])
        for col in rule.guard + rule.guarded:
            updates[col] = sa.case((newer, new[col]), else_=table.c[col])
    for col in rule.counted:
        updates[col] = table.c[col] + sa.literal_column("1")  # no parameter to bind
    if not updates:
        return stmt.on_conflict_do_nothing(  # type: ignore[no-any-return,attr-defined]
            index_elements=list(rule.key)
        )
    return stmt.on_conflict_do_update(  # type: ignore[no-any-return,attr-defined]
        index_elements=list(rule.key), set_=updates
    )


def _sql_pick(old: Any, new: Any, op: str) -> Any:
    better = new < old if op == "<" else new > old
    return sa.case((old.is_(None), new), (new.is_(None), old), (better, new), else_=old)


def _newer(new: list[Any], old: list[Any]) -> Any:
    """SQL for tuple(new) > tuple(old), lexicographic, without row-value syntax."""
    if len(new) == 1:
        return new[0] > old[0]
    return sa.or_(new[0] > old[0], sa.and_(new[0] == old[0], _newer(new[1:], old[1:])))

