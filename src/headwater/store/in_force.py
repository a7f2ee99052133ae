"""The runs whose row of a per-event history table is in force at a cutoff.

History tables (a job's ``ownership`` facets, the dataset facets an input sends)
keep one row per subject and event with its ``event_time``, ``event_hash`` and
``run_uuid``; the row in force at a time is the newest at or before it. Retention
deletes runs older than its cutoff, so it keeps each subject's newest run before
the cutoff: deleting it would let an older row, or none, answer for that time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

__all__ = ["in_force_runs"]


def in_force_runs(
    conn: sa.Connection,
    history: sa.Table,
    subject: tuple[sa.ColumnElement[Any], ...],
    cutoff: datetime,
) -> set[str]:
    """The runs of ``history``'s newest row per ``subject`` columns before ``cutoff``
    (newest by event time, then event hash, as every derived row breaks ties)."""
    ranked = (
        sa.select(
            history.c.run_uuid,
            sa.func.row_number()
            .over(
                partition_by=subject,
                order_by=(history.c.event_time.desc(), history.c.event_hash.desc()),
            )
            .label("rank"),
        )
        .where(history.c.event_time < cutoff)
        .subquery()
    )
    return set(
        conn.scalars(
            sa.select(ranked.c.run_uuid).where(ranked.c.rank == 1, ranked.c.run_uuid.is_not(None))
        )
    )
