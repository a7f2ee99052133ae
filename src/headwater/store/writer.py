"""One batch of events -> rows in every table, inside the caller's transaction.

The steps, each a handful of ``executemany`` statements per batch:

1. drop events already stored (content hash) and append the rest to ``events``;
2. gather the facts of the new events (:class:`~headwater.store.extract.Facts`);
3. resolve surrogate ids of namespaces, datasets, jobs and tags (cached);
4. upsert every fact table with its merge rule, counting the revisions of
   the records the batch may change (``revisions``);
5. re-derive, for the datasets, versions and runs the batch touched, the
   columns that are functions of stored facts (``derive``);
6. with ``[symlinks] resolve``, fold a catalog name stored as a dataset of its
   own into the dataset a symlink of the batch says it is (``fold``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from headwater.events.parse import ParsedEvent
from headwater.store import (
    dataset_facet_history,
    declared_io,
    derive,
    dialects,
    fold,
    job_ownership,
    producers,
    revisions,
    rules,
)
from headwater.store import tables as t
from headwater.store.chunking import chunks
from headwater.store.driver.bulk import copy_rows
from headwater.store.extract import Facts
from headwater.store.keys import DatasetKey
from headwater.store.namespace_rules import Normaliser
from headwater.store.statements import IdCache, Statements

__all__ = ["Writer", "event_rows"]

logger = logging.getLogger(__name__)

# Batches above this many events first ask which hashes are already stored.
PROBE_MIN = 16

# Built once: building a select costs more than the lookup, and every batch
# asks (usually with nothing missing from the caches).
_NAMESPACE_IDS = sa.select(t.namespaces.c.id, t.namespaces.c.name)
_TAG_IDS = sa.select(t.tags.c.id, t.tags.c.name)


class Writer:
    """Writes batches for one database; holds its statements and id caches."""

    def __init__(self, dialect_name: str) -> None:
        self.dialect = dialect_name
        self.sql = Statements(dialect_name)
        self.namespace_ids = IdCache()
        self.dataset_ids = IdCache()
        self.job_ids = IdCache()
        self.tag_ids = IdCache()
        self._caches = (self.namespace_ids, self.dataset_ids, self.job_ids, self.tag_ids)
        self._insert_event_plain = dialects.insert(dialect_name, t.events).on_conflict_do_nothing()
        self._insert_event = self._insert_event_plain.returning(t.events.c.event_hash)
        #: The namespace rules every batch's names go through (None: names as sent).
        self.names: Normaliser | None = None
        #: Symlink identifiers ``fold`` looked up lately, and when.
        self._links_checked: dict[DatasetKey, float] = {}

    def commit(self) -> None:
        for cache in self._caches:
            cache.commit()

    def rollback(self) -> None:
        for cache in self._caches:
            cache.rollback()

    # -- the batch -------------------------------------------------------------------

    def write(self, conn: sa.Connection, parsed: Sequence[ParsedEvent],
              prepared: Facts | None = None) -> set[str]:
        """Store the events of ``parsed`` not stored yet; return their hashes.

        ``prepared`` is ``Facts.of(parsed)`` built by the caller beforehand
        (outside the write lock); it is used when every event turns out new,
        else the facts of the new events are gathered here.
        """
        unique: dict[str, ParsedEvent] = {}
        for ev in parsed:
            unique.setdefault(ev.event_hash, ev)
        sqlite = self.dialect == "sqlite"
        small = len(unique) <= PROBE_MIN
        # Big batches first ask which hashes are stored, to skip their payloads.
        # Small ones on SQLite insert row by row and read each rowcount (no
        # extra statement); on PostgreSQL they rely on RETURNING below.
        existing: set[str] = set()
        if not small:
            for part in chunks(unique):
                existing.update(conn.scalars(sa.select(t.events.c.event_hash)
                                             .where(t.events.c.event_hash.in_(part))))
        candidates = [ev for h, ev in unique.items() if h not in existing]
        received = datetime.now(UTC).replace(tzinfo=None)
        if not candidates:
            self._count_arrivals(conn, unique.values(), (), received)
            return set()
        rows = event_rows(candidates, received)
        if sqlite and small:
            counts = self.sql.compiled(conn, "events", t.events, self._insert_event_plain,
                                       rows).execute_each(conn, rows)
            inserted = {ev.event_hash for ev, count in zip(candidates, counts, strict=True)
                        if count}
        elif sqlite:
            # The probe above holds: this transaction has the write lock.
            self.sql.bulk(conn, "events", t.events, self._insert_event_plain, rows)
            inserted = {ev.event_hash for ev in candidates}
        else:
            # RETURNING names the rows this transaction really inserted: a
            # concurrent writer (another server on the same PostgreSQL) may
            # have stored some of them since the check above.
            inserted = set(conn.scalars(self._insert_event, rows))
        new = [ev for ev in candidates if ev.event_hash in inserted]
        self._count_arrivals(conn, unique.values(), new, received)
        producers.record_agents(conn, ((ev.event, ev.time, ev.event_hash) for ev in new))
        if prepared is not None and len(new) == len(unique):
            facts = prepared
        else:
            facts = Facts.of(new, self.names)
        self._write_facts(conn, facts)
        derive.after_batch(conn, self.sql, self.dataset_ids, facts)
        declared_io.record(conn, new, self.names)
        job_ownership.record(conn, new, self.names)
        dataset_facet_history.record(conn, new, self.names)
        if self.names is not None and self.names.rules.resolve_symlinks:
            folded = fold.fold_linked_names(
                conn, new, self.names, self._rewrite, self.sql, self.dataset_ids,
                self.namespace_ids, facts.table_rows(rules.DATASETS), self._links_checked)
            if folded:
                revisions.bump_epoch(conn)  # rows of several datasets moved
        return {ev.event_hash for ev in new}

    def _rewrite(self, conn: sa.Connection, events: Sequence[ParsedEvent]) -> None:
        """Write the facts of stored ``events`` again, their names mapped as of now."""
        facts = Facts.of(events, self.names)
        self._write_facts(conn, facts)
        derive.after_batch(conn, self.sql, self.dataset_ids, facts)
        declared_io.record(conn, events, self.names)
        job_ownership.record(conn, events, self.names)
        dataset_facet_history.record(conn, events, self.names)

    def _count_arrivals(self, conn: sa.Connection, arrived: Iterable[ParsedEvent],
                        stored: Iterable[ParsedEvent], received: datetime) -> None:
        """Per-producer figures (``producers``), one compiled statement per transaction."""
        rows = producers.arrival_rows((ev.event for ev in arrived),
                                      (ev.event for ev in stored), received)
        self.sql.bulk(conn, "producer_hours", producers.producer_hours,
                      producers.add_statement(self.dialect), rows)

    def _write_facts(self, conn: sa.Connection, facts: Facts) -> None:
        namespaces = facts.table_rows(rules.NAMESPACES)
        self.sql.upsert(conn, rules.NAMESPACES, list(namespaces.values()))
        self._resolve(conn, self.namespace_ids, namespaces.keys(), _NAMESPACE_IDS,
                      t.namespaces.c.name)
        self.sql.upsert(conn, rules.SOURCES, list(facts.table_rows(rules.SOURCES).values()))

        datasets = facts.table_rows(rules.DATASETS)
        self.sql.upsert(conn, rules.DATASETS, [
            {"namespace_id": self.namespace_ids.get(k[0]), "name": k[1],
             "source_name": r["source_name"],
             "created_at": r["created_at"], "updated_at": r["updated_at"]}
            for k, r in datasets.items()])
        self._resolve_named(conn, self.dataset_ids, t.datasets, datasets.keys())

        jobs = facts.table_rows(rules.JOBS)
        self.sql.upsert(conn, rules.JOBS, [
            {"namespace_id": self.namespace_ids.get(k[0]), "name": k[1],
             "created_at": r["created_at"], "updated_at": r["updated_at"]}
            for k, r in jobs.items()])
        self._resolve_named(conn, self.job_ids, t.jobs, jobs.keys())

        tags = facts.table_rows(rules.TAGS)
        self.sql.upsert(conn, rules.TAGS, list(tags.values()))
        self._resolve(conn, self.tag_ids, tags.keys(), _TAG_IDS, t.tags.c.name)

        ds, job, tag = self.dataset_ids.get, self.job_ids.get, self.tag_ids.get
        runs = facts.table_rows(rules.RUNS)
        self.sql.upsert(conn, rules.RUNS, _with_ids(runs, ("job", "job_id", job)))
        revisions.count_children(conn, self.sql, runs)
        # Before the versions' upsert: it compares their stored times with the batch's.
        versions = facts.table_rows(rules.DATASET_VERSIONS)
        revisions.count_readers(conn, self.sql, [(v["uuid"], ds(v["dataset"]), v["updated_at"])
                                                 for v in versions.values()])
        for rule in (rules.DATASET_VERSIONS, rules.RUN_INPUTS, rules.RUN_OUTPUTS,
                     rules.DATASET_SYMLINKS):
            self.sql.upsert(conn, rule,
                            _with_ids(facts.table_rows(rule), ("dataset", "dataset_id", ds)))
        # A terminal event may settle its run's state: the datasets it wrote show it.
        revisions.count_run_outputs(conn, self.sql, [u for u, r in runs.items()
                                                     if r["state_rank"] == 2])
        self.sql.upsert(conn, rules.COLUMN_LINEAGE, _with_ids(
            facts.table_rows(rules.COLUMN_LINEAGE), ("target", "target_dataset_id", ds),
            ("source", "source_dataset_id", ds)))
        self.sql.upsert(conn, rules.TAG_ASSIGNMENTS, _with_ids(
            facts.table_rows(rules.TAG_ASSIGNMENTS), ("tag", "tag_id", tag)))
        aliases = facts.table_rows(rules.DATASET_ALIASES)
        if aliases:
            self.sql.upsert(conn, rules.DATASET_ALIASES,
                            _with_ids(aliases, ("dataset", "dataset_id", ds)))
        self.sql.upsert(conn, rules.FACETS, list(facts.table_rows(rules.FACETS).values()))
        if not facts.subjects:
            return
        if self.dialect == "postgresql":
            copy_rows(conn, t.event_subjects, ("subject", "event_time", "event_hash"),
                      facts.subjects.values())
        else:
            self.sql.bulk(conn, "event_subjects", t.event_subjects, t.event_subjects.insert(),
                          list(facts.subjects.values()))

    # -- ids ---------------------------------------------------------------------------

    def _resolve(self, conn: sa.Connection, cache: IdCache, keys: Iterable[Any],
                 query: sa.Select[Any], column: Any) -> None:
        """Stage the ids of the ``keys`` (names) not cached yet; ``query`` selects (id, name)."""
        missing = [k for k in keys if cache.get(k) is None]
        for part in chunks(missing):
            for row in conn.execute(query.where(column.in_(part))):
                cache.stage(row.name, row.id)

    def _resolve_named(self, conn: sa.Connection, cache: IdCache, table: sa.Table,
                       keys: Iterable[DatasetKey]) -> None:
        """Resolve (namespace, name) keys of ``datasets`` or ``jobs``."""
        missing = [k for k in keys if cache.get(k) is None]
        by_namespace: dict[int, list[str]] = {}
        for namespace, name in missing:
            ns_id = self.namespace_ids.get(namespace)
            assert ns_id is not None
            by_namespace.setdefault(ns_id, []).append(name)
        reverse = {self.namespace_ids.get(k[0]): k[0] for k in missing}
        for ns_id, names in by_namespace.items():
            for part in chunks(names):
                query = sa.select(table.c.id, table.c.name).where(
                    table.c.namespace_id == ns_id, table.c.name.in_(part))
                for row in conn.execute(query):
                    cache.stage((reverse[ns_id], row.name), row.id)


def event_rows(events: Sequence[ParsedEvent], received: datetime) -> list[dict[str, Any]]:
    """The raw log's (``events``) rows of ``events``, received at ``received``."""
    return [{"event_hash": ev.event_hash, "event_time": ev.time, "event_type": ev.event_type,
             "kind": ev.kind, "run_uuid": ev.run_uuid,
             "job_namespace": ev.job[0] if ev.job else None,
             "job_name": ev.job[1] if ev.job else None,
             "payload": ev.payload, "received_at": received}
            for ev in events]


def _with_ids(rows: dict[Any, dict[str, Any]],
              *lookups: tuple[str, str, Any]) -> list[dict[str, Any]]:
    """``rows`` with each (natural key, id column, id lookup) resolved, in place.

    The natural-key column stays in the row; the bulk statement reads only
    the table's columns. (The rows belong to this batch's Facts and are not
    used again.)
    """
    out = list(rows.values())
    for key, column, lookup in lookups:
        for row in out:
            row[column] = lookup(row[key])
    return out
