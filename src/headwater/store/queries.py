"""Reusable read selects over the store's tables (Core, both databases).

``run_input_versions`` answers "which dataset version did run R read": the
latest version of the input dataset (greatest ``updated_at``, then ``uuid``)
whose ``updated_at`` is strictly before the read time (``run_inputs.created_at``,
the earliest event of R listing the input), excluding versions R wrote itself.
It is computed at query time, so a late-arriving older output lands in the
right place without rewriting anything.
"""

from __future__ import annotations

import sqlalchemy as sa

from headwater.store import tables as t

__all__ = ["input_version_uuid", "run_input_versions"]


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
