"""Load ``synthetic.py``'s graph into an empty store without the write path.

The write path (``Store.record``) takes ~2M events through parsing, merging and
derivation at ~1-2k events/s: fine at scale 1, days at scale 10. This loader
derives the rows the write path would store for the synthetic events -- every
table the reads use -- and inserts them in bulk: PostgreSQL ``COPY`` (psycopg 3)
and SQLite ``executemany``, one transaction, the secondary indexes and unique
constraints dropped first and built after the load (cheaper than keeping them:
see :func:`load`'s ``rebuild_indexes``).

What it knows of the write path, so ``tests/store/test_bulk_load.py`` compares
both stores table by table and answer by answer at a small scale:

* every run of a job has the same inputs and outputs, so one job version per job;
* a run is START then COMPLETE (its state the COMPLETE's, ``state_hash`` its hash);
* a dataset version per (output, run); only a job's last run carries the schema
  and column-lineage facets, so only its last versions have ``fields``;
* raw datasets get their schema facet from the last round's readers (the latest
  event carrying it wins the facet);
* a dataset's ``created_at``/``updated_at`` span the events that mention it;
* an output column's fingerprint digests are ``store.fingerprints``' own, of its edges;
* each namespace's kept list counts (``namespace_counts``) are counted from the
  loaded rows at the end (``store.namespace_counts.refill``).

The raw log (``events`` and ``event_subjects``) is sampled: the events of every
``sample_every``-th job (all its runs). Event hashes are taken of every COMPLETE
event anyway (the run state and facet rows name them), from the event's canonical
JSON; sampled events also go through ``parse_event``, which must agree.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import sqlalchemy as sa
import synthetic

from headwater.events import parse_event
from headwater.events.canonical import canonical_bytes, content_hash
from headwater.store import namespace_counts
from headwater.store.checkpoint import truncate_large_wal
from headwater.store.derive import _JOB_VERSION_NS
from headwater.store.fingerprints import digests, edge_input
from headwater.store.keys import dataset_node, dataset_version_uuid, job_node, name_uuid, run_node

__all__ = ["LoadReport", "load"]

#: Tables the loader fills, in load order.
TABLES = (
    "namespaces",
    "sources",
    "datasets",
    "fields",
    "jobs",
    "job_versions",
    "job_current_io",
    "runs",
    "run_inputs",
    "run_outputs",
    "dataset_versions",
    "column_lineage",
    "column_fingerprints",
    "facets",
    "events",
    "event_subjects",
)


@dataclass
class LoadReport:
    rows: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    sampled_events: int = 0
    total_events: int = 0

    def summary(self) -> str:
        parts = ", ".join(f"{t} {n:,}" for t, n in self.rows.items())
        timing = ", ".join(f"{k} {v:.1f} s" for k, v in self.seconds.items())
        return (
            f"rows: {parts}\n  raw log: {self.sampled_events:,} of "
            f"{self.total_events:,} events kept\n  time: {timing}"
        )


def _ts(value: datetime) -> str:
    """A naive UTC time as both databases take it as text (SQLAlchemy's SQLite format)."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


@dataclass
class _Run:
    uuid: str
    complete_hash: str


class _Derivation:
    """The graph's events reduced to what the rows need, in one pass over them."""

    def __init__(self, graph: synthetic.SyntheticGraph, sample_every: int) -> None:
        self.graph = graph
        self.ns = synthetic.NAMESPACE
        jobs = graph.jobs
        self.job_ids = {job.name: i + 1 for i, job in enumerate(jobs)}
        # Dataset ids in first-mention order (inputs, then outputs, job by job).
        self.dataset_ids: dict[str, int] = {}
        self.writer: dict[str, int] = {}
        self.first_reader: dict[str, int] = {}
        self.last_reader: dict[str, int] = {}
        for j, job in enumerate(jobs):
            for d in job.inputs:
                self.dataset_ids.setdefault(d, len(self.dataset_ids) + 1)
                self.first_reader.setdefault(d, j)
                self.last_reader[d] = j
            for o in job.outputs:
                self.dataset_ids.setdefault(o, len(self.dataset_ids) + 1)
                self.writer[o] = j
        self.versions = [
            name_uuid(
                _JOB_VERSION_NS,
                json.dumps(
                    [
                        job_node(self.ns, job.name),
                        sorted(dataset_node(self.ns, d) for d in job.inputs),
                        sorted(dataset_node(self.ns, o) for o in job.outputs),
                        None,
                    ]
                ),
            )
            for job in jobs
        ]
        self.runs: list[list[_Run]] = []  # [round][job index]
        self.sampled: list[Any] = []  # parsed events of sampled jobs
        self.total_events = 0
        n_jobs = len(jobs)
        for n, event in enumerate(synthetic.events(graph)):
            self.total_events += 1
            round_no, j = divmod(n // 2, n_jobs)
            sampled = j % sample_every == 0
            if event["eventType"] == "START" and not sampled:
                continue
            digest = content_hash(canonical_bytes(event))
            if sampled:
                parsed = parse_event(event)
                if parsed.event_hash != digest:
                    raise AssertionError(f"event hash differs from the write path's: {event}")
                self.sampled.append(parsed)
            if event["eventType"] == "START":
                continue
            if j == 0:
                self.runs.append([])
            self.runs[round_no].append(_Run(event["run"]["runId"], digest))
        self.rounds = graph.runs_per_job

    # -- times ----------------------------------------------------------------------

    def start(self, round_no: int, j: int) -> datetime:
        return synthetic.START + timedelta(hours=round_no, seconds=j)

    def complete(self, round_no: int, j: int) -> datetime:
        return self.start(round_no, j) + timedelta(milliseconds=500)

    def dataset_span(self, d: str) -> tuple[datetime, datetime]:
        first = min(j for j in (self.writer.get(d), self.first_reader.get(d)) if j is not None)
        last = max(j for j in (self.writer.get(d), self.last_reader.get(d)) if j is not None)
        return self.start(0, first), self.complete(self.rounds - 1, last)

    def schema_facet(self) -> dict[str, Any]:
        return synthetic._facet(
            "SchemaDatasetFacet",
            fields=[
                {"name": synthetic._field(f), "type": "bigint"} for f in range(synthetic.FIELDS)
            ],
        )

    # -- rows, table by table -------------------------------------------------------

    def rows(self, table: str) -> Iterator[tuple[Any, ...]]:
        return getattr(self, f"_{table}")()  # type: ignore[no-any-return]

    def _namespaces(self) -> Iterator[tuple[Any, ...]]:
        last = len(self.graph.jobs) - 1
        yield (
            1,
            self.ns,
            _ts(self.start(0, 0)),
            _ts(self.complete(self.rounds - 1, last)),
            None,
            None,
            None,
        )

    def _sources(self) -> Iterator[tuple[Any, ...]]:
        # Every event names a dataset: the latest event supplies the URL's (time, hash).
        last = len(self.graph.jobs) - 1
        latest = _ts(self.complete(self.rounds - 1, last))
        yield (
            1,
            self.ns,
            self.ns,
            latest,
            self.runs[-1][-1].complete_hash,
            _ts(self.start(0, 0)),
            latest,
            None,
            None,
        )

    def _datasets(self) -> Iterator[tuple[Any, ...]]:
        fields = _json(self.schema_facet()["fields"])
        for d, dataset_id in self.dataset_ids.items():
            first, last = self.dataset_span(d)
            j = self.writer.get(d)
            current = (
                None
                if j is None
                else dataset_version_uuid(self.ns, d, f"run:{self.runs[-1][j].uuid}")
            )
            yield (
                dataset_id,
                1,
                d,
                self.ns,
                None,
                fields,
                None,
                current,
                _ts(first),
                _ts(last),
                None,
                0,  # revision: no write counted yet
            )

    def _fields(self) -> Iterator[tuple[Any, ...]]:
        n = 0
        for dataset_id in self.dataset_ids.values():
            for f in range(synthetic.FIELDS):
                n += 1
                yield (n, dataset_id, synthetic._field(f), "bigint", None, f)

    def _jobs(self) -> Iterator[tuple[Any, ...]]:
        for j, job in enumerate(self.graph.jobs):
            yield (
                j + 1,
                1,
                job.name,
                self.versions[j],
                _ts(self.start(0, j)),
                _ts(self.complete(self.rounds - 1, j)),
                None,
                0,  # revision: no write counted yet
            )

    def _job_versions(self) -> Iterator[tuple[Any, ...]]:
        ns = self.ns
        for j, job in enumerate(self.graph.jobs):
            yield (
                j + 1,
                self.versions[j],
                j + 1,
                None,
                _json(sorted(dataset_node(ns, d) for d in job.inputs)),
                _json(sorted(dataset_node(ns, o) for o in job.outputs)),
                _ts(self.start(0, j)),
                _ts(self.complete(self.rounds - 1, j)),
            )

    def _job_current_io(self) -> Iterator[tuple[Any, ...]]:
        ids = self.dataset_ids
        for j, job in enumerate(self.graph.jobs):
            for d in job.inputs:
                yield (j + 1, "input", ids[d])
            for o in job.outputs:
                yield (j + 1, "output", ids[o])

    def _per_run(self) -> Iterator[tuple[int, int, _Run, str, str]]:
        for round_no, runs in enumerate(self.runs):
            for j, run in enumerate(runs):
                yield (
                    round_no,
                    j,
                    run,
                    _ts(self.start(round_no, j)),
                    _ts(self.complete(round_no, j)),
                )

    def _runs(self) -> Iterator[tuple[Any, ...]]:
        n = 0
        for _, j, run, started, ended in self._per_run():
            n += 1
            yield (
                n,
                run.uuid,
                j + 1,
                self.versions[j],
                "COMPLETE",
                2,
                ended,
                run.complete_hash,
                started,
                ended,
                None,
                None,
                None,
                started,
                ended,
            )

    def _run_inputs(self) -> Iterator[tuple[Any, ...]]:
        n, ids, jobs = 0, self.dataset_ids, self.graph.jobs
        for _, j, run, started, ended in self._per_run():
            for d in jobs[j].inputs:
                n += 1
                yield (n, run.uuid, ids[d], started, ended)

    def _run_outputs(self) -> Iterator[tuple[Any, ...]]:
        n, ids, jobs, ns = 0, self.dataset_ids, self.graph.jobs, self.ns
        for _, j, run, started, ended in self._per_run():
            for o in jobs[j].outputs:
                n += 1
                yield (
                    n,
                    run.uuid,
                    ids[o],
                    dataset_version_uuid(ns, o, f"run:{run.uuid}"),
                    started,
                    ended,
                )

    def _dataset_versions(self) -> Iterator[tuple[Any, ...]]:
        n, ids, jobs, ns = 0, self.dataset_ids, self.graph.jobs, self.ns
        fields = _json(self.schema_facet()["fields"])
        for round_no, j, run, started, ended in self._per_run():
            last = round_no == self.rounds - 1
            for o in jobs[j].outputs:
                n += 1
                yield (
                    n,
                    dataset_version_uuid(ns, o, f"run:{run.uuid}"),
                    ids[o],
                    run.uuid,
                    fields if last else None,
                    None,
                    started,
                    ended,
                )

    def _column_lineage(self) -> Iterator[tuple[Any, ...]]:
        n, ids, last_round = 0, self.dataset_ids, self.rounds - 1
        for j, job in enumerate(self.graph.jobs):
            run = self.runs[last_round][j]
            when = _ts(self.complete(last_round, j))
            for out, columns in job.columns.items():
                target = ids[out]
                for target_field, inputs in columns.items():
                    for src, src_field, kind, subtype in inputs:
                        n += 1
                        yield (
                            n,
                            ids[src],
                            src_field,
                            target,
                            target_field,
                            kind,
                            subtype,
                            None,
                            None,
                            run.uuid,
                            when,
                            run.complete_hash,
                            when,
                            when,
                        )

    def _column_fingerprints(self) -> Iterator[tuple[Any, ...]]:
        # The write path's own digests (store.fingerprints), one job's edges at a time:
        # an output column's fingerprint is a function of its edges alone.
        ids, ns = self.dataset_ids, self.ns
        for j, job in enumerate(self.graph.jobs):
            edges = [
                (j + 1, ids[out], target_field, edge_input(ns, src, src_field, kind, subtype))
                for out, columns in job.columns.items()
                for target_field, inputs in columns.items()
                for src, src_field, kind, subtype in inputs
            ]
            for (dataset_id, name, job_id), (key, whole) in digests(edges).items():
                yield (dataset_id, name, job_id, key, whole)

    def _facets(self) -> Iterator[tuple[Any, ...]]:
        n, ns, last_round = 0, self.ns, self.rounds - 1
        schema = _json(self.schema_facet())
        for j, job in enumerate(self.graph.jobs):
            run = self.runs[last_round][j]
            when = _ts(self.complete(last_round, j))
            for out in job.outputs:
                node = dataset_node(ns, out)
                version = dataset_version_uuid(ns, out, f"run:{run.uuid}")
                lineage = _json(synthetic._output_facets(job, out)["columnLineage"])
                for kind, subject in (("dataset", node), ("dataset_version", version)):
                    for name, payload in (("schema", schema), ("columnLineage", lineage)):
                        n += 1
                        yield (n, kind, subject, "", name, payload, when, run.complete_hash)
        # Raw datasets: the schema their last-round readers send, the latest reader's wins.
        for d, reader in self.last_reader.items():
            if d in self.writer:
                continue
            n += 1
            yield (
                n,
                "dataset",
                dataset_node(ns, d),
                "",
                "schema",
                schema,
                _ts(self.complete(last_round, reader)),
                self.runs[last_round][reader].complete_hash,
            )

    def _events(self) -> Iterator[tuple[Any, ...]]:
        received = _ts(datetime.now(UTC))
        for n, ev in enumerate(self.sampled, 1):
            yield (
                n,
                ev.event_hash,
                _ts(ev.time),
                ev.event_type,
                ev.kind,
                ev.run_uuid,
                ev.job[0],
                ev.job[1],
                ev.payload,
                received,
            )

    def _event_subjects(self) -> Iterator[tuple[Any, ...]]:
        n, ns = 0, self.ns
        for ev in self.sampled:
            event, when = ev.event, _ts(ev.time)
            subjects = [job_node(*ev.job), run_node(ev.run_uuid)]
            subjects += [dataset_node(ns, d["name"]) for d in event["inputs"]]
            subjects += [dataset_node(ns, d["name"]) for d in event["outputs"]]
            for subject in dict.fromkeys(subjects):
                n += 1
                yield (n, subject, when, ev.event_hash)


# -- the databases ------------------------------------------------------------------


def _columns(table: str) -> list[str]:
    from headwater.store import tables as t

    return [c.name for c in t.metadata.tables[table].columns]


def _pg_secondary(conn: Any, tables: Iterable[str]) -> tuple[list[str], list[str]]:
    """(drop, create) statements of the tables' unique constraints and non-key indexes."""
    names = list(tables)
    drop, create = [], []
    for table, name, definition in conn.exec_driver_sql(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE contype = 'u' AND conrelid::regclass::text = ANY(%(t)s)",
        {"t": names},
    ):
        drop.append(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        create.append(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
    for name, definition in conn.exec_driver_sql(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = 'public' "
        "AND i.tablename = ANY(%(t)s) AND NOT EXISTS (SELECT 1 FROM pg_constraint c "
        "WHERE c.conname = i.indexname)",
        {"t": names},
    ):
        drop.append(f'DROP INDEX "{name}"')
        create.append(definition)
    return drop, create


def _sqlite_secondary(conn: Any, tables: Iterable[str]) -> tuple[list[str], list[str]]:
    names = list(tables)
    rows = conn.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({','.join('?' * len(names))})",
        tuple(names),
    ).all()
    return [f'DROP INDEX "{name}"' for name, _ in rows], [sql for _, sql in rows]


def _copy(conn: Any, table: str, rows: Iterable[tuple[Any, ...]]) -> int:
    columns = _columns(table)
    count = 0
    cursor = conn.connection.driver_connection.cursor()
    # FREEZE: the rows are written frozen and all-visible (the table was truncated in
    # this transaction), so index-only scans need no VACUUM after the load.
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH (FREEZE)"
    with cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def _insert(conn: Any, table: str, rows: Iterable[tuple[Any, ...]]) -> int:
    columns = _columns(table)
    cursor = conn.connection.driver_connection.cursor()
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    counted = _Counted(rows)
    cursor.executemany(sql, counted)
    return counted.count


class _Counted:
    def __init__(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self.rows, self.count = iter(rows), 0

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> tuple[Any, ...]:
        row = next(self.rows)
        self.count += 1
        return row


def load(
    engine: sa.Engine,
    graph: synthetic.SyntheticGraph,
    sample_every: int = 1,
    rebuild_indexes: bool = True,
    log: Any = None,
) -> LoadReport:
    """Fill the empty, migrated store at ``engine`` with ``graph``'s rows.

    ``rebuild_indexes``: drop the loaded tables' secondary indexes and unique
    constraints first and build them after the rows (else insert into them).
    """
    report = LoadReport()
    started = time.perf_counter()
    derived = _Derivation(graph, sample_every)
    report.seconds["events hashed"] = time.perf_counter() - started
    report.sampled_events, report.total_events = len(derived.sampled), derived.total_events
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as conn:
        if postgres:
            # Foreign keys hold by construction; checking them row by row doubles the load.
            conn.exec_driver_sql("SET session_replication_role = replica")
            conn.exec_driver_sql("SET maintenance_work_mem = '512MB'")
            drop, create = _pg_secondary(conn, TABLES)
            conn.exec_driver_sql(f"TRUNCATE {', '.join(TABLES)} CASCADE")
        else:
            conn.exec_driver_sql("PRAGMA cache_size = -262144")
            drop, create = _sqlite_secondary(conn, TABLES)
        if not rebuild_indexes:
            drop, create = [], []
        for statement in drop:
            conn.exec_driver_sql(statement)
        write = _copy if postgres else _insert
        for table in TABLES:
            began = time.perf_counter()
            report.rows[table] = write(conn, table, derived.rows(table))
            report.seconds[table] = time.perf_counter() - began
            if log:
                log(f"    {table}: {report.rows[table]:,} rows in {report.seconds[table]:.1f} s")
        began = time.perf_counter()
        for statement in create:
            conn.exec_driver_sql(statement)
        report.seconds["indexes"] = time.perf_counter() - began
        # The lists' kept counts: PostgreSQL's triggers are off in replica mode.
        began = time.perf_counter()
        namespace_counts.refill(conn)
        report.seconds["namespace counts"] = time.perf_counter() - began
        if postgres:
            for table in TABLES:
                if "id" in _columns(table):
                    conn.exec_driver_sql(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
                    )
            conn.exec_driver_sql("SET session_replication_role = DEFAULT")
    if not postgres:
        # The load's one transaction leaves a write-ahead log the size of the
        # store, which the first ingested event would cut down: the cost stays
        # in the load, as after the store's own migrations.
        began = time.perf_counter()
        truncate_large_wal(engine)
        report.seconds["wal truncate"] = time.perf_counter() - began
    report.seconds["total"] = time.perf_counter() - started
    return report
