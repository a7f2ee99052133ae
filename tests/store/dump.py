"""A canonical dump of every store table, for comparing two databases' contents.

Left out, because they legitimately depend on arrival order or the clock:

* surrogate ``id`` columns (autoincrement order = arrival order); every foreign
  key to one is replaced by the referenced row's natural key instead;
* ``events.received_at`` (wall-clock ingest time) and ``retention_floor.updated_at``
  (when retention, or the rebuild that carried the floor, ran);
* ``audit_log``: it records requests, not lineage, and its rows are written by
  a timer;
* ``producer_hours``: arrivals counted by the hour the server received them
  (``producer_agents``, latest by event time, is compared);
* ``datasets.revision``, ``jobs.revision`` and ``record_epoch``: they count
  writes (the batches that named a row), not facts (``store.revisions``);
* ``drift_outbox``: the drifts waiting for the webhook, queued with the wall
  clock's time as their rows were written (a drift seen in two batches may be
  queued where one batch queues nothing new).

Everything else -- including every time taken from events, every JSON payload
and the derived columns -- must be identical. The version each run read
(``queries.run_input_versions``) is dumped too, by natural keys.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from headwater.store import Store
from headwater.store import tables as t
from headwater.store.queries import run_input_versions

EXCLUDED = {
    ("events", "received_at"),
    ("retention_floor", "updated_at"),
    ("datasets", "revision"),
    ("jobs", "revision"),
}
EXCLUDED_TABLES = {"audit_log", "drift_outbox", "producer_hours", "record_epoch"}


def _natural_keys(conn: sa.Connection) -> dict[str, dict[int, Any]]:
    namespaces = dict(conn.execute(sa.select(t.namespaces.c.id, t.namespaces.c.name)).all())
    keys: dict[str, dict[int, Any]] = {"namespaces": namespaces}
    for table in (t.datasets, t.jobs):
        keys[table.name] = {
            row.id: (namespaces[row.namespace_id], row.name)
            for row in conn.execute(sa.select(table.c.id, table.c.namespace_id, table.c.name))
        }
    keys["tags"] = dict(conn.execute(sa.select(t.tags.c.id, t.tags.c.name)).all())
    return keys


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def dump(store: Store) -> dict[str, list[str]]:
    """Table name -> sorted canonical rows."""
    out: dict[str, list[str]] = {}
    with store.engine.connect() as conn:
        keys = _natural_keys(conn)
        for table in t.metadata.sorted_tables:
            if table.name in EXCLUDED_TABLES:
                continue
            fks = {fk.parent.name: fk.column.table.name for fk in table.foreign_keys}
            rows = []
            for row in conn.execute(sa.select(table)).mappings():
                clean = {}
                for col, value in row.items():
                    if col == "id" or (table.name, col) in EXCLUDED:
                        continue
                    if col in fks and value is not None:
                        value = keys[fks[col]][value]
                    clean[col] = value
                rows.append(_canonical(clean))
            out[table.name] = sorted(rows)
        reads = [
            _canonical({"run": r.run_uuid, "dataset": keys["datasets"][r.dataset_id],
                        "read_at": r.read_at, "version": r.dataset_version_uuid})
            for r in conn.execute(run_input_versions())
        ]
        out["run_input_versions"] = sorted(reads)
    return out
