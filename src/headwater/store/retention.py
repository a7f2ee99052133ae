"""Retention: delete runs and their raw events older than a window, never the current graph.

``prune(engine, keep)`` with ``cutoff = now - keep``:

1. raises the **floor** (``retention_floor``) to ``cutoff`` and waits ``settle``
   seconds, so every writer sees it before anything is deleted: from then on
   the store refuses an event whose ``eventTime`` is before the floor (a spool
   replay, a consumer rewind), so a deleted run is never brought back;
2. deletes, in transactions of at most ``batch`` runs each, the runs whose
   every event is older than the cutoff (``runs.updated_at``, their latest
   event time), with their raw events, facet-history rows, latest facets,
   inputs, outputs, the dataset versions they produced and those versions'
   facets and drift rows; the versions left on either side of deleted ones
   become adjacent, and their drift rows are re-derived in the same
   transaction (``drift.refresh_after_deletion``), as a rebuild derives them
   from the versions it finds, and so are the contract rows
   (``schema_contracts``) whose declaring run or written version goes
   (``contract.refresh_after_deletion``), neither queued for the drift webhook;
3. drops the per-producer hours before the cutoff, and the drifts queued for
   the drift webhook before it;
4. on SQLite in incremental auto-vacuum mode, gives the freed pages back to
   the file system a bounded step at a time, and truncates the write-ahead
   log if these transactions left it larger than SQLite keeps it.

Never deleted (**protected**), so the current graph and every ``asOf``
answer at or after the cutoff stay as they were:

* for each dataset, its current version and the version in force at the
  cutoff (the latest with ``updated_at`` before it), and the runs that
  produced them;
* for each job, its latest run (its current version) and its latest run
  created before the cutoff (its version at the cutoff), and the run whose
  event sent the job's ``ownership`` facet in force at the cutoff
  (``job_ownership_history``; its other runs' rows go with them);
* for each dataset, the runs whose inputs sent the dataset facets in force at
  the cutoff (``dataset_facet_history``; its other runs' rows go with them);
* the parent runs of those runs;
* every run with an event at or after the cutoff, and every row no run owns:
  namespaces, datasets, jobs, job versions, column-lineage edges, tags, the
  raw events of dataset and job events (they carry no run), and so every
  declaration JobEvents made (``job_declaration_history``).

Each transaction is short (one batch), so ingestion takes turns with it as
with any other writer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from headwater.store import (
    contract,
    dataset_facet_history,
    drift,
    drift_outbox,
    fingerprints,
    job_ownership,
    producers,
)
from headwater.store import tables as t
from headwater.store.checkpoint import truncate_large_wal
from headwater.store.chunking import chunks
from headwater.store.retention_floor import (
    FLOOR_REFRESH_SECONDS,
    copy_floor,
    raise_floor,
    read_floor,
    retention_floor,
)
from headwater.store.retention_protected import protected_runs
from headwater.store.statements import Statements
from headwater.store.transactions import now_utc, write_transaction

__all__ = [
    "DEFAULT_BATCH",
    "FLOOR_REFRESH_SECONDS",
    "Pruned",
    "copy_floor",
    "create_sqlite_file",
    "protected_runs",
    "prune",
    "read_floor",
    "retention_floor",
]

logger = logging.getLogger(__name__)

#: Runs deleted per transaction.
DEFAULT_BATCH = 100
# Pages handed back to the file system per SQLite transaction.
_VACUUM_PAGES = 2_000


@dataclass
class Pruned:
    """What one :func:`prune` did."""

    cutoff: datetime
    runs: int = 0
    events: int = 0
    dataset_versions: int = 0
    producer_hours: int = 0
    queued_drifts: int = 0
    protected: int = 0
    vacuumed_pages: int = 0
    seconds: float = 0.0
    transactions: int = 0
    batch_seconds: list[float] = field(default_factory=list)


def _old_runs(
    conn: sa.Connection, cutoff: datetime, after: tuple[datetime, str] | None, limit: int
) -> list[tuple[datetime, str]]:
    r = t.runs
    query = sa.select(r.c.updated_at, r.c.uuid).where(r.c.updated_at < cutoff)
    if after is not None:
        query = query.where(
            sa.or_(
                r.c.updated_at > after[0], sa.and_(r.c.updated_at == after[0], r.c.uuid > after[1])
            )
        )
    return [
        (row.updated_at, row.uuid)
        for row in conn.execute(query.order_by(r.c.updated_at, r.c.uuid).limit(limit))
    ]


def _last_asserted_by(conn: sa.Connection, datasets: set[int], uuids: list[str]) -> set[int]:
    """Of ``datasets``, those with a column edge whose latest assertion is one of the
    runs ``uuids``: the only ones whose fingerprints deleting the runs changes. Most
    edges were last asserted by a newer run, which retention keeps, so this spares
    digesting every column of every dataset an old run touched."""
    cl = t.column_lineage
    found: set[int] = set()
    for part in chunks(sorted(datasets)):
        found.update(
            conn.scalars(
                sa.select(cl.c.target_dataset_id)
                .distinct()
                .where(cl.c.target_dataset_id.in_(part), cl.c.run_uuid.in_(uuids))
            )
        )
    return found


# For each deleted version (``ids``), the first schema-bearing version of its dataset
# after it that stays (no run of ``runs``, the batch's): one statement per batch, each
# a search of (dataset_id, updated_at) from the deleted version on.
_v, _next = t.dataset_versions.alias("deleted"), t.dataset_versions.alias("next")
_NEXT_KEPT_SCHEMA = sa.select(
    _v.c.dataset_id,
    _v.c.updated_at,
    _v.c.uuid,
    sa.select(_next.c.uuid)
    .where(
        _next.c.dataset_id == _v.c.dataset_id,
        _next.c.fields.is_not(None),
        sa.or_(
            _next.c.updated_at > _v.c.updated_at,
            sa.and_(_next.c.updated_at == _v.c.updated_at, _next.c.uuid > _v.c.uuid),
        ),
        sa.or_(
            _next.c.run_uuid.is_(None),
            _next.c.run_uuid.not_in(sa.bindparam("runs", expanding=True)),
        ),
    )
    .order_by(_next.c.updated_at, _next.c.uuid)
    .limit(1)
    .correlate(_v)
    .scalar_subquery()
    .label("next_uuid"),
).where(_v.c.uuid.in_(sa.bindparam("ids", expanding=True)))


def _spans_after(
    conn: sa.Connection, deleted: Sequence[Any], runs: list[str]
) -> list[tuple[str, str]]:
    """For each dataset of the ``deleted`` versions (``uuid``, ``schema``), which the
    batch's ``runs`` wrote, the first schema-bearing version left after its earliest
    and after its latest deleted one: every drift the deletion changes is keyed by a
    version between them (see :func:`drift.refresh_after_deletion`). Read before the
    deletion. A version without a schema is no link of the chain drifts compare, so
    deleting it changes none."""
    ids = [row.uuid for row in deleted if row.schema]
    bounds: dict[int, tuple[Any, Any]] = {}
    for part in chunks(ids):
        for row in conn.execute(_NEXT_KEPT_SCHEMA, {"ids": part, "runs": runs}):
            key = (row.updated_at, row.uuid, row.next_uuid)
            low, high = bounds.get(row.dataset_id, (key, key))
            bounds[row.dataset_id] = (min(low, key), max(high, key))
    return [
        (low[2], high[2])
        for _, (low, high) in sorted(bounds.items())
        if low[2] is not None and high[2] is not None
    ]


def _delete_runs(conn: sa.Connection, sql: Statements, uuids: list[str], into: Pruned) -> None:
    e, s, v = t.events, t.event_subjects, t.dataset_versions
    hashes = list(conn.scalars(sa.select(e.c.event_hash).where(e.c.run_uuid.in_(uuids))))
    for part in chunks(hashes):
        conn.execute(sa.delete(s).where(s.c.event_hash.in_(part)))
        into.events += conn.execute(sa.delete(e).where(e.c.event_hash.in_(part))).rowcount or 0
    doomed = conn.execute(
        sa.select(v.c.dataset_id, v.c.uuid, v.c.fields.is_not(None).label("schema")).where(
            v.c.run_uuid.in_(uuids)
        )
    ).all()
    versions = [row.uuid for row in doomed]
    sc = t.schema_contracts
    # The contracts holding a declaration of these runs (no writer makes another:
    # the floor refuses their events), re-derived with the declaration left before it.
    pairs = sa.select(sc.c.dataset_id, sc.c.job_id)
    contracted = {
        (row.dataset_id, row.job_id) for row in conn.execute(pairs.where(sc.c.run_uuid.in_(uuids)))
    }
    if conn.dialect.name == "postgresql":
        # Writers re-deriving a dataset's drifts and contracts take turns on its row
        # (store.drift).
        d = t.datasets
        locked = {row.dataset_id for row in doomed if row.schema}
        for part in chunks(sorted(locked | {dataset_id for dataset_id, _ in contracted})):
            conn.execute(
                sa.select(d.c.id).where(d.c.id.in_(part)).order_by(d.c.id).with_for_update()
            )
    spans = _spans_after(conn, doomed, uuids)
    for part in chunks(versions):
        # The contracts comparing against a deleted version (always one with a
        # schema, on a locked dataset), re-derived against the one left before it.
        contracted.update(
            (row.dataset_id, row.job_id)
            for row in conn.execute(pairs.where(sc.c.version_uuid.in_(part)))
        )
        conn.execute(sa.delete(t.dataset_drifts).where(t.dataset_drifts.c.version_uuid.in_(part)))
        conn.execute(
            sa.delete(t.facets).where(
                t.facets.c.kind == "dataset_version", t.facets.c.subject.in_(part)
            )
        )
        into.dataset_versions += conn.execute(sa.delete(v).where(v.c.uuid.in_(part))).rowcount or 0
    # The versions left on either side of the deleted ones are now adjacent: their
    # drift is the one a rebuild derives from the versions it finds.
    drift.refresh_after_deletion(conn, sql, spans)
    # The datasets whose columns these runs' edges describe (a columnLineage facet
    # on an output, rarely an input): their fingerprints lose the edges whose
    # last asserting run goes, as the edges are read.
    described = set()
    for io in (t.run_outputs, t.run_inputs):
        described.update(conn.scalars(sa.select(io.c.dataset_id).where(io.c.run_uuid.in_(uuids))))
    described = _last_asserted_by(conn, described, uuids)
    nodes = [f"run:{u}" for u in uuids]
    # One statement per run: most facets have no run (run_uuid ''), and with that
    # skew in its statistics SQLite's planner scans the table for an IN list.
    conn.execute(
        sa.delete(t.facets).where(t.facets.c.run_uuid == sa.bindparam("run")),
        [{"run": u} for u in uuids],
    )
    conn.execute(sa.delete(t.facets).where(t.facets.c.kind == "run", t.facets.c.subject.in_(nodes)))
    conn.execute(sa.delete(t.event_subjects).where(t.event_subjects.c.subject.in_(nodes)))
    owned = job_ownership.job_ownership_history
    conn.execute(sa.delete(owned).where(owned.c.run_uuid.in_(uuids)))
    sent = dataset_facet_history.dataset_facet_history
    conn.execute(sa.delete(sent).where(sent.c.run_uuid.in_(uuids)))
    conn.execute(sa.delete(t.run_inputs).where(t.run_inputs.c.run_uuid.in_(uuids)))
    conn.execute(sa.delete(t.run_outputs).where(t.run_outputs.c.run_uuid.in_(uuids)))
    into.runs += conn.execute(sa.delete(t.runs).where(t.runs.c.uuid.in_(uuids))).rowcount or 0
    # With the runs' declarations and versions gone: each contract is the one a
    # rebuild derives from the declarations and versions left.
    contract.refresh_after_deletion(conn, sql, contracted)
    fingerprints.refresh(conn, described)


def prune(
    engine: sa.Engine,
    keep: timedelta,
    *,
    now: datetime | None = None,
    batch: int = DEFAULT_BATCH,
    settle: float = 2 * FLOOR_REFRESH_SECONDS,
    progress: Callable[[Pruned, int], None] | None = None,
) -> Pruned:
    """Delete what is older than ``keep`` (see the module's docstring); what was deleted.

    ``progress(pruned, candidates_seen)`` is called after each transaction.
    """
    began = time.perf_counter()
    cutoff = (now or now_utc()) - keep
    done = Pruned(cutoff=cutoff)
    raise_floor(engine, cutoff)
    if settle > 0:
        time.sleep(settle)  # writers re-read the floor at least this often
    with engine.connect() as conn:
        kept = protected_runs(conn, cutoff)
    after: tuple[datetime, str] | None = None
    seen = 0
    sql = Statements(engine.dialect.name)
    while True:
        with engine.connect() as conn:
            page = _old_runs(conn, cutoff, after, batch)
        if not page:
            break
        after = page[-1]
        seen += len(page)
        doomed = [u for _, u in page if u not in kept]
        done.protected += len(page) - len(doomed)
        if doomed:
            started = time.perf_counter()
            with write_transaction(engine) as conn:
                _delete_runs(conn, sql, doomed, done)
            done.transactions += 1
            done.batch_seconds.append(time.perf_counter() - started)
        if progress is not None:
            progress(done, seen)
    with write_transaction(engine, records=False) as conn:
        done.producer_hours = producers.prune(conn, cutoff)
        done.queued_drifts = drift_outbox.prune(conn, cutoff)
    done.vacuumed_pages = _incremental_vacuum(engine)
    # Only a Store's own commits wake its checkpointer, so the WAL these
    # transactions left may be as large as SQLite's autocheckpoint backstop.
    truncate_large_wal(engine)
    done.seconds = time.perf_counter() - began
    logger.info(
        "retention before %s: %d runs, %d raw events, %d dataset versions deleted "
        "(%d old runs protected) in %d transactions, %.1f s",
        cutoff,
        done.runs,
        done.events,
        done.dataset_versions,
        done.protected,
        done.transactions,
        done.seconds,
    )
    return done


def create_sqlite_file(path: str) -> None:
    """Create a new SQLite file in incremental auto-vacuum mode, so retention can give
    deleted pages back; the mode is settable only before the file is first written
    (the engine's first connection turns WAL on, which writes it)."""
    import sqlite3

    try:
        conn = sqlite3.connect(path)
    except sqlite3.Error:
        return  # the engine reports it (a missing folder, a read-only place)
    try:
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()


def _incremental_vacuum(engine: sa.Engine) -> int:
    """SQLite in incremental auto-vacuum mode: free pages back to the file, a step at a time."""
    if engine.dialect.name != "sqlite":
        return 0
    with engine.connect() as conn:
        if conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() != 2:
            return 0
    freed = 0
    last: int | None = None
    while True:
        with write_transaction(engine, records=False) as conn:
            free = int(conn.exec_driver_sql("PRAGMA freelist_count").scalar() or 0)
            if free == 0 or free == last:  # done, or nothing more it can free
                return freed
            last = free
            step = min(free, _VACUUM_PAGES)
            # sqlite3's execute() steps a statement once, and this pragma frees one
            # page per step; executescript() runs it to the end (in autocommit, under
            # the write lock this transaction holds).
            conn.connection.driver_connection.executescript(  # type: ignore[union-attr]
                f"PRAGMA incremental_vacuum({step});"
            )
            freed += step
