"""The runs retention keeps whatever their age (see :mod:`headwater.store.retention`).

Each keeps the current graph, or an answer as of a time at or after the cutoff,
as it was: the runs that produced each dataset's current version and its version
in force at the cutoff, each job's latest run and its latest before the cutoff,
the runs whose events sent the owners and dataset facets in force at the cutoff,
and the parents of all of these up the chain.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from headwater.store import dataset_facet_history, job_ownership
from headwater.store import tables as t
from headwater.store.chunking import chunks

__all__ = ["protected_runs"]


def protected_runs(conn: sa.Connection, cutoff: datetime) -> set[str]:
    """The runs retention keeps whatever their age (see the module's docstring)."""
    v, d, r = t.dataset_versions, t.datasets, t.runs
    kept: set[str] = set()
    # Each dataset's current version's producer.
    kept.update(
        conn.scalars(
            sa.select(v.c.run_uuid)
            .join(d, d.c.current_version_uuid == v.c.uuid)
            .where(v.c.run_uuid.is_not(None))
        )
    )
    # Each dataset's version in force at the cutoff: latest (updated_at, uuid) before it.
    ranked = (
        sa.select(
            v.c.run_uuid,
            sa.func.row_number()
            .over(partition_by=v.c.dataset_id, order_by=(v.c.updated_at.desc(), v.c.uuid.desc()))
            .label("rank"),
        )
        .where(v.c.updated_at < cutoff)
        .subquery()
    )
    kept.update(
        conn.scalars(
            sa.select(ranked.c.run_uuid).where(ranked.c.rank == 1, ranked.c.run_uuid.is_not(None))
        )
    )
    # Each job's latest run, and its latest run created before the cutoff.
    for condition in (sa.true(), r.c.created_at < cutoff):
        latest = (
            sa.select(
                r.c.uuid,
                sa.func.row_number()
                .over(partition_by=r.c.job_id, order_by=(r.c.created_at.desc(), r.c.uuid.desc()))
                .label("rank"),
            )
            .where(condition)
            .subquery()
        )
        kept.update(conn.scalars(sa.select(latest.c.uuid).where(latest.c.rank == 1)))
    kept |= job_ownership.in_force_runs(conn, cutoff)
    kept |= dataset_facet_history.in_force_runs(conn, cutoff)
    # Their parents (an action's application run), up the chain.
    frontier = set(kept)
    while frontier:
        parents: set[str] = set()
        for part in chunks(sorted(frontier)):
            parents.update(
                p
                for p in conn.scalars(
                    sa.select(r.c.parent_run_uuid).where(
                        r.c.uuid.in_(part), r.c.parent_run_uuid.is_not(None)
                    )
                )
            )
        frontier = parents - kept
        kept |= frontier
    return kept
