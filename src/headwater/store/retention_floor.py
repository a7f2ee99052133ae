"""Retention's floor: the event time before which the store refuses events.

Retention raises it to its cutoff before deleting anything (``retention.prune``),
and every writer refuses an event older than it (the store re-reads it every
:data:`FLOOR_REFRESH_SECONDS`), so a spool replay or a consumer rewind never
brings back a run retention deleted. A rebuild copies it to the store it builds.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from headwater.store import dialects
from headwater.store.tables import metadata
from headwater.store.transactions import now_utc, write_transaction

__all__ = ["FLOOR_REFRESH_SECONDS", "copy_floor", "raise_floor", "read_floor", "retention_floor"]

#: How stale a process's copy of the floor may be (the store re-reads it this often).
FLOOR_REFRESH_SECONDS = 5.0

retention_floor = sa.Table(
    "retention_floor",
    metadata,
    sa.Column("name", sa.String(32), primary_key=True),  # 'events'
    sa.Column("floor", sa.DateTime(), nullable=False),
    sa.Column("updated_at", sa.DateTime(), nullable=False),
)
_FLOOR_NAME = "events"


def read_floor(conn: sa.Connection) -> datetime | None:
    """The event time before which events are refused, or None if retention never ran."""
    return conn.scalar(
        sa.select(retention_floor.c.floor).where(retention_floor.c.name == _FLOOR_NAME)
    )


def copy_floor(source: sa.Engine, target: sa.Engine) -> datetime | None:
    """Give ``target`` the floor of ``source`` (a rebuild: after its events are in, since
    the kept runs' raw events may be older than the floor); the floor copied, if any."""
    with source.connect() as conn:
        if not sa.inspect(conn).has_table(retention_floor.name):
            return None  # an older schema: retention never ran there
        floor = read_floor(conn)
    if floor is not None:
        raise_floor(target, floor)
    return floor


def raise_floor(engine: sa.Engine, cutoff: datetime) -> datetime:
    """Raise the floor to ``cutoff`` (never lower it); the floor now in force."""
    with write_transaction(engine, records=False) as conn:
        current = read_floor(conn)
        floor = cutoff if current is None else max(current, cutoff)
        stmt = dialects.insert(conn.dialect.name, retention_floor).values(
            name=_FLOOR_NAME, floor=floor, updated_at=now_utc()
        )
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[retention_floor.c.name],
                set_={"floor": stmt.excluded.floor, "updated_at": stmt.excluded.updated_at},
            )
        )
    return floor
