"""Search over dataset and job names, and the raw event log with time range and paging."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.reads.common import Page, after_key, aware, naive
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from headwater.store.reads.visibility import visible

__all__ = ["event_page", "list_events", "list_tags", "search"]

_ns = t.namespaces


def _matches(table: sa.Table, pattern: str, scope: NamespaceScope) -> sa.Select[Any]:
    # Marquez's rule: case-insensitive, the query may use % and _ as wildcards,
    # and it matches anywhere in the name.
    return (
        sa.select(
            table.c.name,
            table.c.updated_at,
            _ns.c.name.label("namespace"),
        )
        .join(_ns, _ns.c.id == table.c.namespace_id)
        .where(
            sa.func.lower(table.c.name).like(f"%{pattern.lower()}%"),
            visible(table),
            scope.where(_ns.c.name),
        )
    )


def search(
    conn: sa.Connection,
    query: str,
    kind: Literal["dataset", "job"] | None,
    sort: Literal["name", "updated_at"],
    limit: int,
    scope: NamespaceScope = EVERYTHING,
    after: tuple[Any, ...] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Datasets and jobs whose name contains ``query``, in ``scope``; ``(results, totalCount)``.

    ``limit`` is at least 1: the total comes with the rows. ``after`` is the sort key
    of the last result of the page before: (name, namespace, type) by name,
    (updatedAt, name, namespace, type) by ``updated_at``.
    """
    if limit < 1:
        raise ValueError("limit must be >= 1")
    parts = []
    if kind in (None, "dataset"):
        datasets = _matches(t.datasets, query, scope)
        parts.append(datasets.add_columns(sa.literal("DATASET").label("type")))
    if kind in (None, "job"):
        parts.append(_matches(t.jobs, query, scope).add_columns(sa.literal("JOB").label("type")))
    union = sa.union_all(*parts).subquery()
    # The count rides along as a window over the same matches: one pass over the
    # names (a substring match reads every name), not a second one for the total.
    counted = sa.select(union, sa.func.count().over().label("total")).subquery()
    order = [counted.c.name, counted.c.namespace, counted.c.type]
    if sort == "updated_at":
        order.insert(0, counted.c.updated_at.desc())
    query = sa.select(counted).order_by(*order).limit(limit)
    if after is not None:
        query = query.where(after_key(order, after))
    rows = conn.execute(query).all()
    if rows:
        total = rows[0].total
    elif after is None:
        total = 0
    else:  # past the last match: the window saw no row to count
        total = conn.execute(sa.select(sa.func.count()).select_from(union)).scalar_one()
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
    scope: NamespaceScope = EVERYTHING,
) -> tuple[list[dict[str, Any]], int]:
    """Stored OpenLineage events by event time (newest first unless ``ascending``)."""
    items, total, _ = event_page(conn, page, before, after, ascending, scope)
    return items, total


def event_page(
    conn: sa.Connection,
    page: Page,
    before: datetime | None = None,
    after: datetime | None = None,
    ascending: bool = False,
    scope: NamespaceScope = EVERYTHING,
) -> tuple[list[dict[str, Any]], int, tuple[Any, ...] | None]:
    """:func:`list_events`, and the sort key (event time, log id) of the last event
    answered, for ``page.after`` of the next page (None on an empty page).

    With a limited ``scope``: the run and job events of jobs inside it and the dataset
    events of datasets inside it, each without the inputs, outputs and facet
    references outside it (see :meth:`NamespaceScope.payload`).
    """
    ev = t.events
    where = [] if not scope.limited else [_event_in(conn, ev, scope)]
    if before is not None:
        where.append(ev.c.event_time < naive(before))
    if after is not None:
        where.append(ev.c.event_time > naive(after))
    total = conn.execute(sa.select(sa.func.count()).select_from(ev).where(*where)).scalar_one()
    order = (ev.c.event_time, ev.c.id) if ascending else (ev.c.event_time.desc(), ev.c.id.desc())
    if page.after is not None:
        where.append(after_key(order, page.after))
    rows = conn.execute(
        page.apply(sa.select(ev.c.payload, ev.c.event_time, ev.c.id)
                   .where(*where).order_by(*order))
    ).all()
    last = (rows[-1].event_time, rows[-1].id) if rows else None
    return [scope.payload(json.loads(row.payload)) for row in rows], total, last


def _event_in(conn: sa.Connection, ev: sa.Table, scope: NamespaceScope) -> sa.ColumnElement[bool]:
    """SQL: the event is about a job, or (a dataset event) a dataset, inside ``scope``.

    A dataset event's dataset is found by its node id among the event's subjects.
    """
    es = t.event_subjects
    subject_in = _subject_in(conn, es.c.subject, scope, ("dataset",))
    return sa.or_(
        scope.where(ev.c.job_namespace),
        sa.and_(
            ev.c.kind == "dataset",
            sa.exists().where(es.c.event_hash == ev.c.event_hash, subject_in),
        ),
    )


def _subject_in(
    conn: sa.Connection, subject: sa.ColumnElement[str], scope: NamespaceScope,
    kinds: tuple[str, ...],
) -> sa.ColumnElement[bool]:
    """SQL: the node id ``subject`` (of the ``kinds`` given) is inside ``scope``.

    By its ``{kind}:{namespace}:`` prefix, less those of the namespaces outside the
    scope whose own prefix starts with it (``s3://b`` and ``s3://b:9000``).
    """
    names = sorted(scope.namespaces or ())
    others = conn.execute(sa.select(_ns.c.name).where(_ns.c.name.not_in(names))).scalars().all()
    prefixes = [f"{kind}:{namespace}:" for kind in kinds for namespace in names]
    if not prefixes:
        return sa.false()
    longer = [
        f"{kind}:{other}:"
        for kind in kinds
        for other in others
        if any(f"{kind}:{other}:".startswith(p) for p in prefixes)
    ]
    return sa.and_(
        sa.or_(*(subject.startswith(p, autoescape=True) for p in prefixes)),
        *(sa.not_(subject.startswith(p, autoescape=True)) for p in longer),
    )


def list_tags(
    conn: sa.Connection, page: Page, scope: NamespaceScope = EVERYTHING
) -> list[dict[str, Any]]:
    """Tags by name; with a limited ``scope``, those on a dataset, field or job inside it
    and those on nothing (defined through the API)."""
    query = sa.select(t.tags)
    if scope.limited:
        ta = t.tag_assignments
        on_any = sa.exists().where(ta.c.tag_id == t.tags.c.id)
        inside = sa.exists().where(
            ta.c.tag_id == t.tags.c.id,
            _subject_in(conn, ta.c.subject, scope, ("dataset", "datasetField", "job")),
        )
        query = query.where(sa.or_(sa.not_(on_any), inside))
    rows = conn.execute(page.apply(query.order_by(t.tags.c.name))).all()
    return [{"name": row.name, "description": row.description} for row in rows]
