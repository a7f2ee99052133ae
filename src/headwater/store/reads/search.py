"""Search over dataset and job names, and the raw event log with time range and paging."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.common import Page, aware, naive
from headwater.store.reads.visibility import visible

__all__ = ["list_events", "list_tags", "search"]

_ns = t.namespaces


def _matches(table: sa.Table, pattern: str) -> sa.Select[Any]:
    # Marquez's rule: case-insensitive, the query may use % and _ as wildcards,
    # and it matches anywhere in the name.
    return (
        sa.select(
            table.c.name,
            table.c.updated_at,
            _ns.c.name.label("namespace"),
        )
        .join(_ns, _ns.c.id == table.c.namespace_id)
        .where(sa.func.lower(table.c.name).like(f"%{pattern.lower()}%"), visible(table))
    )


def search(
    conn: sa.Connection,
    query: str,
    kind: Literal["dataset", "job"] | None,
    sort: Literal["name", "updated_at"],
    limit: int,
) -> tuple[list[dict[str, Any]], int]:
    """Datasets and jobs whose name contains ``query``; ``(results, totalCount)``.

    ``limit`` is at least 1: the total comes with the rows.
    """
    if limit < 1:
        raise ValueError("limit must be >= 1")
    parts = []
    if kind in (None, "dataset"):
        parts.append(_matches(t.datasets, query).add_columns(sa.literal("DATASET").label("type")))
    if kind in (None, "job"):
        parts.append(_matches(t.jobs, query).add_columns(sa.literal("JOB").label("type")))
    union = sa.union_all(*parts).subquery()
    order = (
        (union.c.updated_at.desc(), union.c.name)
        if sort == "updated_at"
        else (union.c.name, union.c.namespace, union.c.type)
    )
    # The count rides along as a window over the same matches: one pass over the
    # names (a substring match reads every name), not a second one for the total.
    rows = conn.execute(
        sa.select(union, sa.func.count().over().label("total")).order_by(*order).limit(limit)
    ).all()
    total = rows[0].total if rows else 0
    results = [
        {
            "type": row.type,
            "name": row.name,
            "updatedAt": aware(row.updated_at),
            "namespace": row.namespace,
            "nodeId": f"{row.type.lower()}:{row.namespace}:{row.name}",
        }
        for row in rows
    ]
    return results, total


def list_events(
    conn: sa.Connection,
    page: Page,
    before: datetime | None = None,
    after: datetime | None = None,
    ascending: bool = False,
) -> tuple[list[dict[str, Any]], int]:
    """Stored OpenLineage events by event time (newest first unless ``ascending``)."""
    ev = t.events
    where = []
    if before is not None:
        where.append(ev.c.event_time < naive(before))
    if after is not None:
        where.append(ev.c.event_time > naive(after))
    total = conn.execute(sa.select(sa.func.count()).select_from(ev).where(*where)).scalar_one()
    order = (ev.c.event_time, ev.c.id) if ascending else (ev.c.event_time.desc(), ev.c.id.desc())
    payloads = conn.execute(page.apply(sa.select(ev.c.payload).where(*where).order_by(*order)))
    return [json.loads(payload) for (payload,) in payloads], total


def list_tags(conn: sa.Connection, page: Page) -> list[dict[str, Any]]:
    rows = conn.execute(page.apply(sa.select(t.tags).order_by(t.tags.c.name))).all()
    return [{"name": row.name, "description": row.description} for row in rows]
