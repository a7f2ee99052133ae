"""How many datasets and jobs each namespace's lists show, kept by the database.

The Marquez lists (``GET /api/v1/namespaces/{ns}/datasets`` and ``.../jobs``)
answer a ``totalCount``: the namespace's rows that are not soft-deleted
(:func:`headwater.store.reads.visibility.visible`). Counting them per request
reads every row of the namespace -- 880 ms for a million datasets on
PostgreSQL -- however small the page, so ``namespace_counts`` keeps the answer,
one row per namespace.

Database triggers keep it (installed by the migration that creates the table,
on SQLite and PostgreSQL alike), in the transaction of the write itself:

* a new namespace gets its row (0, 0); the row goes with the namespace;
* a dataset or job row inserted or deleted while shown adds or takes one;
* an update that moves a row to another namespace, or changes whether it is
  shown (``deleted_at`` set by a delete, ``updated_at`` moved past it by a later
  event), takes one from the old state and adds one to the new.

Triggers rather than code on each write path, because every path that touches
those rows -- the event write path, symlink folding, soft deletes and their
undoing by a later event, retention, a rebuild -- then keeps the count without
knowing of it, and a path added later cannot forget it. An update that changes
neither the namespace nor whether the row is shown (nearly every upsert of a
known dataset) does not call the trigger at all: its condition is checked first.

The one writer that switches triggers off is the benchmarks' bulk loader (on
PostgreSQL, with ``session_replication_role``); it calls :func:`refill` after.
"""

from __future__ import annotations

from typing import Literal

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.tables import metadata

__all__ = ["namespace_counts", "refill", "shown"]

namespace_counts = sa.Table(
    "namespace_counts",
    metadata,
    sa.Column("namespace_id", sa.ForeignKey("namespaces.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("datasets", sa.BigInteger(), nullable=False),
    sa.Column("jobs", sa.BigInteger(), nullable=False),
)

Kind = Literal["datasets", "jobs"]

_nc = namespace_counts
# Built once: the list endpoints ask on every request.
_SHOWN = {
    kind: sa.select(_nc.c[kind]).where(_nc.c.namespace_id == sa.bindparam("namespace_id"))
    for kind in ("datasets", "jobs")
}


def shown(conn: sa.Connection, namespace_id: int, kind: Kind) -> int:
    """How many of the namespace's ``kind`` rows its list shows (not soft-deleted)."""
    value = conn.execute(_SHOWN[kind], {"namespace_id": namespace_id}).scalar()
    return int(value or 0)


def _visible_count(table: sa.Table) -> sa.ScalarSelect[int]:
    # The condition of reads.visibility.visible, which the lists filter on.
    return (
        sa.select(sa.func.count())
        .where(
            table.c.namespace_id == t.namespaces.c.id,
            sa.or_(table.c.deleted_at.is_(None), table.c.updated_at > table.c.deleted_at),
        )
        .correlate(t.namespaces)
        .scalar_subquery()
    )


def refill(conn: sa.Connection) -> None:
    """Count every namespace's shown datasets and jobs again from their rows."""
    conn.execute(sa.delete(_nc))
    conn.execute(
        sa.insert(_nc).from_select(
            ["namespace_id", "datasets", "jobs"],
            sa.select(t.namespaces.c.id, _visible_count(t.datasets), _visible_count(t.jobs)),
        )
    )
