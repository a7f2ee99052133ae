"""The store's watermark: a short string that changes whenever a write commits.

Read answers take their ``ETag`` from it (``headwater.server.caching``): an
answer read at the same watermark is the same answer, so a re-fetch whose
``If-None-Match`` names it costs this one query and a 304. Any committed write
changes it — an event, a late event that only adds a facet, a delete, a tag —
so no answer is ever called unchanged after a change it could show.

- SQLite: the revision counter every committing write transaction bumps in the
  database header (``dialects.SQLITE_REVISION_PRAGMA``), with the raw log's
  highest id;
- PostgreSQL: the transaction snapshot (``pg_current_snapshot()``: the oldest
  running transaction, the next id, the ids running), which differs between two
  moments exactly when some transaction committed in between (or took an id),
  with the raw log's highest id. Writes to other databases of the cluster change
  it too: more re-fetches, never a stale answer.

Read it *before* the answer's rows, on the answer's own connection or a
connection opened earlier: the rows are then at least as new as the watermark,
so a write between the two can only make the client fetch once more.
"""

from __future__ import annotations

import sqlalchemy as sa

from headwater.store import tables as t
from headwater.store.dialects import SQLITE_REVISION_PRAGMA

__all__ = ["read_watermark"]

_LAST_EVENT = sa.select(sa.func.max(t.events.c.id))


def read_watermark(conn: sa.Connection) -> str:
    """The watermark of the data ``conn`` sees now (see the module docstring)."""
    last_event = conn.execute(_LAST_EVENT).scalar()
    if conn.dialect.name == "sqlite":
        revision = conn.exec_driver_sql(f"PRAGMA {SQLITE_REVISION_PRAGMA}").scalar()
        return f"s{revision}.{last_event or 0}"
    snapshot = conn.exec_driver_sql("SELECT pg_current_snapshot()::text").scalar()
    return f"p{snapshot}.{last_event or 0}"
