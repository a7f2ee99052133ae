"""Reusable read selects over the store's tables (Core, both databases).

``run_input_versions`` answers "which dataset version did run R read": the
latest version of the input dataset (greatest ``updated_at``, then ``uuid``)
whose ``updated_at`` is strictly before the read time (``run_inputs.created_at``,
the earliest event of R listing the input), excluding versions R wrote itself.
It is computed at query time, so a late-arriving older output lands in the
right place without rewriting anything.

``latest_run_of_job`` picks a job's latest run (by ``created_at``, then
``uuid``), the run that defines the job's current version.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from headwater.store import tables as t

__all__ = ["LATEST_RUN", "input_version_uuid", "latest_run_of_job", "run_input_versions"]

#: The runs :func:`latest_run_of_job` looks at: an alias, so the subquery never
#: correlates to a ``runs`` of the query it sits in.
LATEST_RUN = t.runs.alias("latest_run")


def latest_run_of_job(
    column: sa.ColumnElement[Any], *conditions: sa.ColumnElement[bool]
) -> sa.ScalarSelect[Any]:
    """Scalar subquery, correlated to ``jobs``: ``column`` (of :data:`LATEST_RUN`) of
    the job's latest run among those meeting ``conditions`` (on :data:`LATEST_RUN`).

    Latest by ``created_at``, then ``uuid``: a ``LIMIT 1`` per job that both
    databases answer by seeking ``ix_runs_job_id_created_at``.
    """
    run = LATEST_RUN
    return (
        sa.select(column)
        .where(run.c.job_id == t.jobs.c.id, *conditions)
        .order_by(run.c.created_at.desc(), run.c.uuid.desc())
        .limit(1)
        .correlate(t.jobs)
        .scalar_subquery()
    )


def input_version_uuid(run_input: sa.FromClause) -> sa.ScalarSelect[str]:
    """Scalar subquery: the version uuid read by the ``run_inputs`` row ``run_input``."""
    v = t.dataset_versions
    return (
        sa.select(v.c.uuid)
        .where(
            v.c.dataset_id == run_input.c.dataset_id,
            v.c.updated_at < run_input.c.created_at,
            sa.or_(v.c.run_uuid.is_(None), v.c.run_uuid != run_input.c.run_uuid),
        )
        .order_by(v.c.updated_at.desc(), v.c.uuid.desc())
        .limit(1)
        .scalar_subquery()
    )


def run_input_versions() -> sa.Select[tuple[str, int, sa.DateTime, str | None]]:
    """``run_uuid, dataset_id, read_at, dataset_version_uuid`` for every run input.

    Filter it like any select, e.g. ``.where(run_inputs.c.run_uuid == r)``;
    ``dataset_version_uuid`` is NULL when no earlier version is known.
    """
    ri = t.run_inputs
    return sa.select(
        ri.c.run_uuid,
        ri.c.dataset_id,
        ri.c.created_at.label("read_at"),
        input_version_uuid(ri).label("dataset_version_uuid"),
    )
