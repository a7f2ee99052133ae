"""Revisions of what a dataset's or a job's Marquez record is built from.

The server keeps each record's JSON and reuses it while the record's rows are
unchanged (``headwater.server.record_fragments``), keyed by two numbers the
write path keeps:

- ``datasets.revision`` and ``jobs.revision``, counted up on the rows whose
  record a write may change:

  * by every event batch, on every dataset and job its events name (the
    ``DATASETS`` and ``JOBS`` merge rules count the upsert that meets the row):
    that covers the row, its facets, fields, tags, column lineage and versions
    (a dataset), its facets, tags, current version, parent and latest runs with
    their facets, states and outputs (a job) -- everything a record reads that
    the named things' own events write, a late event included;
  * by the batch whose terminal event settles a run's state, on the datasets
    the run wrote (:func:`count_run_outputs`): ``lastModifiedAt`` counts the
    versions of completed runs;
  * by the batch that writes a run, on the jobs of its child runs
    (:func:`count_children`): a child whose ``parent`` facet names no job
    takes its parent job from the parent run's own row;
  * by the batch that writes a dataset version or moves its time, on the jobs
    whose runs read the dataset at a time that version's move concerns
    (:func:`count_readers`): a run's input version is the dataset's latest
    version before the run read it, so a late older version changes what an
    unrelated job's ``latestRuns`` show;

- the records epoch (``record_epoch``, one row), counted up by every write
  transaction outside the event write path that may change records -- tags
  set by hand, soft deletes, retention, a rebuild, namespace and source
  metadata (``transactions.write_transaction``) -- and by a batch that folds a
  catalog name into another dataset (rows of several datasets move at once).
  Writes no record shows (tokens, the audit log, the quarantine, the drift
  webhook's queue) leave it.

Neither number is derived state: each counts writes, so two stores holding
the same events may count differently. Only equality matters to a reader:
the same epoch and revision mean the record's rows are the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from headwater.store import dialects
from headwater.store import tables as t
from headwater.store.driver.bulk import sqlite_time

if TYPE_CHECKING:
    from headwater.store.statements import Statements

__all__ = [
    "bump_epoch",
    "count_children",
    "count_readers",
    "count_run_outputs",
    "read_epoch",
]

_j, _ds, _v, _ri, _r = t.jobs, t.datasets, t.dataset_versions, t.run_inputs, t.runs
_epoch = t.record_epoch

_READ_EPOCH = sa.select(_epoch.c.epoch).where(_epoch.c.id == 1)

_IDS = sa.bindparam("ids", expanding=True)
# Datasets written by runs: their versions name the run.
_COUNT_RUN_OUTPUTS = (
    _ds.update()
    .where(_ds.c.id.in_(sa.select(_v.c.dataset_id).where(_v.c.run_uuid.in_(_IDS))))
    .values(revision=_ds.c.revision + 1)
)

# Jobs of the runs whose parent is one of the runs.
_COUNT_CHILDREN = (
    _j.update()
    .where(_j.c.id.in_(sa.select(_r.c.job_id).where(_r.c.parent_run_uuid.in_(_IDS))))
    .values(revision=_j.c.revision + 1)
)

# The version's stored time before this batch's upsert (NULL: a new version).
_OLD_TIME = sa.select(_v.c.updated_at).where(_v.c.uuid == sa.bindparam("b_uuid")).scalar_subquery()
_NEW_TIME = sa.bindparam("b_updated_at", type_=sa.DateTime())
# A run reading the dataset at ``created_at`` sees the version iff its time is
# earlier: a new version at time N concerns readers after N; a stored one moving
# from O to N (times only grow) concerns readers in (O, N].
_CONCERNED = (
    sa.select(_r.c.job_id)
    .join(_ri, _ri.c.run_uuid == _r.c.uuid)
    .where(
        _ri.c.dataset_id == sa.bindparam("b_dataset_id"),
        _ri.c.created_at > sa.func.coalesce(_OLD_TIME, _NEW_TIME),
        sa.or_(_OLD_TIME.is_(None), _ri.c.created_at <= _NEW_TIME),
    )
)
# ``literal_column``: the driver runs it with the rows' parameters only (driver.bulk).
_COUNT_READERS = (
    _j.update()
    .where(_j.c.id.in_(_CONCERNED))
    .values(revision=_j.c.revision + sa.literal_column("1"))
)


def read_epoch(conn: sa.Connection) -> int:
    """The records epoch as ``conn`` sees it now (0 before any counted write)."""
    return int(conn.execute(_READ_EPOCH).scalar() or 0)


def bump_epoch(conn: sa.Connection) -> None:
    """Count one write that may change any record (inside its transaction)."""
    insert = dialects.insert(conn.dialect.name, _epoch)
    conn.execute(
        insert.values(id=1, epoch=1).on_conflict_do_update(
            index_elements=["id"], set_={"epoch": _epoch.c.epoch + 1}
        )
    )


def count_run_outputs(conn: sa.Connection, sql: Statements, run_uuids: Iterable[str]) -> None:
    """Count up the datasets that the runs ``run_uuids`` (whose state a batch may have
    settled) wrote versions of."""
    sql.by_ids(conn, "revisions:run-outputs", _COUNT_RUN_OUTPUTS, sorted(set(run_uuids)))


def count_children(conn: sa.Connection, sql: Statements, run_uuids: Iterable[str]) -> None:
    """Count up the jobs of the child runs of ``run_uuids`` (runs a batch wrote)."""
    sql.by_ids(conn, "revisions:children", _COUNT_CHILDREN, sorted(set(run_uuids)))


def count_readers(
    conn: sa.Connection, sql: Statements, versions: Iterable[tuple[str, int, datetime]]
) -> None:
    """Count up the jobs with a run whose input version the upsert of ``versions``
    ((uuid, dataset id, the batch's latest time of it)) may change. Runs before the
    versions' upsert: it compares with their stored times."""
    # Times as the column stores them: the statement's parameters are no table's columns.
    time = sqlite_time if sql.dialect == "sqlite" else _same
    params = [
        {"b_uuid": uuid, "b_dataset_id": dataset_id, "b_updated_at": time(updated_at)}
        for uuid, dataset_id, updated_at in versions
    ]
    sql.bulk(conn, "revisions:readers", _j, _COUNT_READERS, params)


def _same(value: datetime) -> datetime:
    return value
