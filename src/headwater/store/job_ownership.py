"""A job's ``ownership`` facets over time, so owners can be answered as of a time.

``facets`` keeps a job's latest ``ownership`` facet only. ``job_ownership_history``
keeps every one a stored event sent (on a JobEvent or in a run's job), one row per
(job node id, event): the facet in force at a time ``T`` is the row with the
greatest (``event_time``, ``event_hash``) at or before ``T``, and it holds until
the next row's time. The table is a set of rows keyed by event, so a late event
older than the newest takes its place in the history whatever the arrival order,
and the current facet in ``facets`` is unchanged by it.

``run_uuid`` is the event's run (NULL for a JobEvent): retention deletes a run's
rows with its raw events and keeps the run whose event set the owners in force at
its cutoff (:func:`in_force_runs`), so a rebuild from the raw log makes the same
rows again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from headwater.events import ParsedEvent
from headwater.store import dialects
from headwater.store.in_force import in_force_runs as runs_in_force
from headwater.store.keys import facets_of, job_node
from headwater.store.namespace_rules import Normaliser
from headwater.store.tables import JSONType, metadata

__all__ = ["in_force_runs", "job_ownership_history", "record"]

job_ownership_history = sa.Table(
    "job_ownership_history",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("subject", sa.Text(), nullable=False),  # job node id
    sa.Column("event_time", sa.DateTime(), nullable=False),
    sa.Column("event_hash", sa.String(64), nullable=False),
    sa.Column("run_uuid", sa.Text(), nullable=True),
    sa.Column("payload", JSONType, nullable=False),
    sa.UniqueConstraint("subject", "event_hash"),
    sa.Index("ix_job_ownership_history_run_uuid", "run_uuid"),
)
_h = job_ownership_history


def _rows(events: Iterable[ParsedEvent], names: Normaliser | None) -> list[dict[str, Any]]:
    rows = []
    for ev in events:
        if ev.job is None:
            continue
        payload = facets_of(ev.event["job"], "facets").get("ownership")
        if payload is None:
            continue  # a null facet carries nothing, as in ``facets``
        job = ev.job if names is None else names.job(ev.job)
        rows.append(
            {
                "subject": job_node(*job),
                "event_time": ev.time,
                "event_hash": ev.event_hash,
                "run_uuid": ev.run_uuid,
                "payload": payload,
            }
        )
    return rows


def record(
    conn: sa.Connection, events: Iterable[ParsedEvent], names: Normaliser | None = None
) -> None:
    """Keep the job ``ownership`` facets that ``events`` (newly stored) send; writing
    an event's row again changes nothing."""
    rows = _rows(events, names)
    if rows:
        stmt = dialects.insert(conn.dialect.name, _h).on_conflict_do_nothing(
            index_elements=["subject", "event_hash"]
        )
        conn.execute(stmt, rows)


def in_force_runs(conn: sa.Connection, cutoff: datetime) -> set[str]:
    """The runs whose event set a job's owners in force at ``cutoff`` (each job's
    newest row before it), for retention to keep."""
    return runs_in_force(conn, _h, (_h.c.subject,), cutoff)
