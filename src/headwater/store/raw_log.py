"""Reading the raw event log back out: what ``headwater export`` and ``rebuild`` stream.

Beside the log, :func:`carry` copies the tables no event can make again
(:data:`CARRIED`: the quarantine, access tokens, the audit log and users'
tag definitions, propagation blocks, owners and tag history), so a
rebuilt store swapped in keeps its tokens and does not open the server to
everyone; :func:`outside_log` names what neither way carries.

The ``events`` table holds every distinct event as the canonical JSON its
hash is taken of, so the log alone is enough to derive every other table
again. It is read in (``event_time``, ``event_hash``) order, a page at a time
by keyset (the page after the last row seen), so memory stays bounded by
one page whatever the log's size and no server-side cursor or long read
transaction is held on either database.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from headwater.errors import StoreError
from headwater.store import tables as t
from headwater.store.transactions import write_transaction

__all__ = ["CARRIED", "PAGE", "carry", "count", "outside_log", "payloads"]

#: Rows read per query.
PAGE = 2_000

#: Tables copied row by row by a rebuild: kept, not derived from events.
CARRIED = ("quarantine", "api_tokens", "audit_log", "tag_definitions", "propagation_blocks",
           "owners", "owner_history", "tag_history")

_e = t.events


def count(engine: sa.Engine) -> int:
    """How many events the log holds."""
    try:
        with engine.connect() as conn:
            return int(conn.scalar(sa.select(sa.func.count()).select_from(_e)) or 0)
    except SQLAlchemyError as exc:
        raise StoreError(f"database read failed: {exc}") from exc


def payloads(engine: sa.Engine, *, page: int = PAGE) -> Iterator[tuple[str, str]]:
    """Every event's (hash, canonical JSON), in (event time, event hash) order."""
    after: tuple[datetime, str] | None = None
    while True:
        query = (sa.select(_e.c.event_time, _e.c.event_hash, _e.c.payload)
                 .order_by(_e.c.event_time, _e.c.event_hash).limit(page))
        if after is not None:
            query = query.where(sa.tuple_(_e.c.event_time, _e.c.event_hash) > sa.tuple_(*after))
        try:
            with engine.connect() as conn:
                rows = conn.execute(query).all()
        except SQLAlchemyError as exc:
            raise StoreError(f"database read failed: {exc}") from exc
        for row in rows:
            yield row.event_hash, row.payload
        if len(rows) < page:
            return
        after = (rows[-1].event_time, rows[-1].event_hash)


def carry(source: sa.Engine, target: sa.Engine, *, page: int = PAGE) -> dict[str, int]:
    """Copy the :data:`CARRIED` tables from ``source`` into ``target``; rows copied per table.

    Rows keep every column but the surrogate id, and go in id order, so the
    target numbers them in the same order and its own sequences stay right.
    A table ``source`` does not have yet (an older schema) is skipped.
    """
    copied: dict[str, int] = {}
    try:
        present = set(sa.inspect(source).get_table_names())
        for name in CARRIED:
            table = t.metadata.tables[name]
            if name not in present:
                continue
            columns = [c.name for c in table.columns if c.name != "id"]
            copied[name] = 0
            after: int | None = None
            while True:
                query = sa.select(table).order_by(table.c.id).limit(page)
                if after is not None:
                    query = query.where(table.c.id > after)
                with source.connect() as conn:
                    rows = conn.execute(query).all()
                if rows:
                    with write_transaction(target) as conn:
                        conn.execute(sa.insert(table),
                                     [{c: getattr(row, c) for c in columns} for row in rows])
                copied[name] += len(rows)
                if len(rows) < page:
                    break
                after = rows[-1].id
    except SQLAlchemyError as exc:
        raise StoreError(f"database read failed: {exc}") from exc
    return copied


def outside_log(engine: sa.Engine) -> dict[str, int]:
    """What a store holds that neither its raw log nor :func:`carry` takes to a new store.

    Marquez's soft deletes, the namespace owners and descriptions only the
    Marquez API sets, and tags put on through the API.
    """
    ns = t.namespaces
    checks = {
        "soft-deleted namespaces, datasets and jobs": sa.select(
            sa.select(sa.func.count()).where(ns.c.deleted_at.is_not(None)).scalar_subquery()
            + sa.select(sa.func.count()).where(t.datasets.c.deleted_at.is_not(None))
            .scalar_subquery()
            + sa.select(sa.func.count()).where(t.jobs.c.deleted_at.is_not(None))
            .scalar_subquery()),
        "namespace owners and descriptions": sa.select(sa.func.count()).where(
            sa.or_(ns.c.owner_name.is_not(None), ns.c.description.is_not(None))),
        # Tags put on through the API live among those events derive (store.tags).
        "tags set through the API": sa.select(sa.func.count()).where(
            t.tag_assignments.c.source == "api"),
    }
    try:
        with engine.connect() as conn:
            found = {what: int(conn.scalar(query) or 0) for what, query in checks.items()}
    except SQLAlchemyError as exc:
        raise StoreError(f"database read failed: {exc}") from exc
    return {what: n for what, n in found.items() if n}
