"""Reads and single-event ingest at ten times the graph, against full scale.

Bulk-loads ``synthetic.py``'s graph at ``--small`` (1.0: 100k datasets, 2.3M column
edges) and ``--big`` (10: 1M datasets, ~23M column edges) into two databases of one
throwaway PostgreSQL cluster, or with ``--db sqlite`` into two SQLite files in
``--dir`` (``bulk_load.py``; its time, rows and bytes printed), then, in one run and
interleaved query by query (which store goes first alternates):

- v2 lineage (``/api/v2/lineage``, depth 10, ``maxNodes=1000``): upstream of a top-layer
  dataset, downstream of a low-layer one, and upstream of a top-layer column;
- node pages: a dataset, a job;
- lists (``limit=100``): datasets and jobs at a random offset below 100,000 and the
  page after it by cursor; a dataset's versions and a job's runs, first page;

over HTTP (in-process app), and prints each kind's p50/p95 on both stores and the
p95 ratio big/small (target <= 2x), and for the lineage walks the same per answered
node. Then single-event ingest (``Store.record`` of one
event, new runs of the graph's jobs) alternating between an empty store and the big
one, and the ratio of the rates (target >= 80 %). Bytes per table, indexes included
(``pg_total_relation_size``; SQLite's ``dbstat``), per event and per column edge; with
``--explain DIR``, the plan of every statement each kind runs on the big store
(``auto_explain``; SQLite: ``EXPLAIN QUERY PLAN`` of each statement the answer ran).
Each SQLite file is deleted when the run ends; the PostgreSQL cluster too, unless
``--keep`` leaves it running for a later ``--attach`` (or a look with ``psql``).

    .venv/bin/python benchmarks/graph_growth.py [--db postgresql|sqlite] [--dir DIR]
        [--small 1.0] [--big 10] [--runs-small 20] [--runs-big 4] [--sample-every 100]
        [--queries 100] [--ingest 300] [--explain DIR] [--keep | --attach PORT:DATA_DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import shutil
import sqlite3
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bulk_load  # noqa: E402
import http_answers  # noqa: E402
import orjson  # noqa: E402
import sqlalchemy as sa  # noqa: E402
import synthetic  # noqa: E402

from headwater.config import Settings  # noqa: E402
from headwater.events import parse_event  # noqa: E402
from headwater.server.app import create_app  # noqa: E402
from headwater.store import Store  # noqa: E402

#: Server settings for a bulk load and reads on a shared 2-core machine.
PG_SETTINGS = {
    "shared_buffers": "1GB",
    "maintenance_work_mem": "1GB",
    "work_mem": "32MB",
    "effective_cache_size": "4GB",
    "max_wal_size": "16GB",
    "checkpoint_timeout": "30min",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "random_page_cost": "1.1",
}
NS = synthetic.NAMESPACE


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


class SqliteFiles:
    """SQLite stores as files in one directory, in the place of a cluster's databases."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def create_database(self, name: str) -> str:
        path = self.directory / f"{name}.db"
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)
        return f"sqlite:///{path}"

    def stop(self) -> None:
        for path in self.directory.glob("growth_*.db*"):
            path.unlink()


def _postgres(store: Store) -> bool:
    return store.engine.dialect.name == "postgresql"


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


@dataclass
class Built:
    """A loaded store and what its queries pick from."""

    label: str
    url: str
    store: Store
    client: http_answers._InProcess
    top: list[str]
    low: list[str]
    jobs: list[str]
    job_io: list[tuple[str, list[str], list[str]]]
    datasets: int
    events: int
    column_edges: int


def build(cluster: Any, label: str, scale: float, runs: int, sample_every: int) -> Built:
    started = time.perf_counter()
    graph = synthetic.build_graph(scale, runs_per_job=runs)
    print(
        f"\n== {label}: scale {scale}: {len(graph.datasets):,} datasets, {len(graph.jobs):,} "
        f"jobs x {runs} runs, {graph.column_edges:,} column edges "
        f"(graph built in {time.perf_counter() - started:.0f} s, load {_load()})",
        flush=True,
    )
    url = cluster.create_database(f"growth_{label}")
    store = Store.open(url, migrate=True)
    started = time.perf_counter()
    report = bulk_load.load(
        store.engine, graph, sample_every=sample_every, log=lambda m: print(m, flush=True)
    )
    loaded = time.perf_counter() - started
    print(f"  bulk load: {loaded:.0f} s (load {_load()})\n  {report.summary()}", flush=True)
    started = time.perf_counter()
    # Planner statistics, as autovacuum keeps them on a server that has been up a while and
    # a SQLite store by itself while events come in (headwater.store.statistics: ANALYZE
    # under PRAGMA analysis_limit; the bulk load bypasses the store's write path). This one
    # reads every row, so measuring starts on settled statistics; PostgreSQL's VACUUM also
    # sets the visibility map.
    statement = "VACUUM ANALYZE" if _postgres(store) else "ANALYZE"
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(statement)
    print(f"  {statement}: {time.perf_counter() - started:.0f} s", flush=True)
    top = [o for job in graph.jobs if job.layer >= synthetic.LAYERS - 3 for o in job.outputs]
    low = [o for job in graph.jobs if job.layer <= 3 for o in job.outputs]
    built = Built(
        label,
        url,
        store,
        http_answers._InProcess(create_app(Settings(), store)),
        top,
        low,
        [job.name for job in graph.jobs],
        [
            (job.name, job.inputs, job.outputs)
            for job in graph.jobs[:: max(1, len(graph.jobs) // 2000)]
        ],
        report.rows["datasets"],
        report.total_events,
        graph.column_edges,
    )
    sizes(built, report)
    del graph
    gc.collect()
    return built


def attach(cluster: Any, label: str) -> Built:
    """A store an earlier run of this benchmark loaded (its cluster left running)."""
    url = f"postgresql+psycopg://postgres@127.0.0.1:{cluster.port}/growth_{label}"
    store = Store.open(url, migrate=False)
    with store.engine.connect() as conn:

        def names(sql: str) -> list[str]:
            return list(conn.exec_driver_sql(sql).scalars())

        top = names(
            f"SELECT name FROM datasets WHERE name >= 'l{synthetic.LAYERS - 3:02d}' AND name < 'm'"
        )
        low = names("SELECT name FROM datasets WHERE name >= 'l01' AND name < 'l04'")
        jobs = names("SELECT name FROM jobs ORDER BY id")
        io: dict[str, tuple[list[str], list[str]]] = {}
        for job, direction, dataset in conn.exec_driver_sql(
            "SELECT j.name, c.direction, d.name FROM job_current_io c JOIN jobs j "
            "ON j.id = c.job_id JOIN datasets d ON d.id = c.dataset_id "
            f"WHERE mod(c.job_id, {max(1, len(jobs) // 2000)}) = 0"
        ):
            io.setdefault(job, ([], []))[direction == "output"].append(dataset)
        counts = conn.exec_driver_sql(
            "SELECT (SELECT count(*) FROM datasets), (SELECT count(*) FROM runs), "
            "(SELECT count(*) FROM column_lineage)"
        ).one()
    print(
        f"== {label}: attached ({counts[0]:,} datasets, {counts[1]:,} runs, "
        f"{counts[2]:,} column edges)",
        flush=True,
    )
    return Built(
        label,
        url,
        store,
        http_answers._InProcess(create_app(Settings(), store)),
        top,
        low,
        jobs,
        [(j, i, o) for j, (i, o) in io.items()],
        counts[0],
        2 * counts[1],
        counts[2],
    )


#: Bytes per table, its indexes included.
PG_TABLE_BYTES = (
    "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' "
    "AND relnamespace = 'public'::regnamespace ORDER BY 2 DESC"
)
# Page by page: dbstat's own per-table sums (aggregate = 1) wrap past 2**32 bytes.
SQLITE_TABLE_BYTES = (
    "SELECT coalesce(m.tbl_name, s.name), sum(s.pgsize) FROM dbstat AS s "
    "LEFT JOIN sqlite_master AS m ON m.name = s.name GROUP BY 1 ORDER BY 2 DESC"
)


def sizes(built: Built, report: bulk_load.LoadReport) -> None:
    started = time.perf_counter()
    with built.store.engine.connect() as conn:
        if _postgres(built.store):
            rows = conn.exec_driver_sql(PG_TABLE_BYTES).all()
            total = conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar()
        else:
            rows = conn.exec_driver_sql(SQLITE_TABLE_BYTES).all()
            total = conn.exec_driver_sql(
                "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size"
            ).scalar()
    print(f"  (sizes read in {time.perf_counter() - started:.0f} s)")
    size = dict(rows)
    print(
        f"  bytes: database {total / 1e9:.2f} GB; "
        + ", ".join(f"{name} {b / 1e6:,.0f} MB" for name, b in rows if b > 1e6)
    )
    raw = size["events"] + size["event_subjects"]
    derived = sum(size.values()) - raw
    print(
        f"  per column edge {size['column_lineage'] / built.column_edges:.0f} B; "
        f"per event (derived tables / all {built.events:,} events) "
        f"{derived / built.events:.0f} B; per logged event (raw log / "
        f"{report.sampled_events:,}) {raw / max(1, report.sampled_events):.0f} B",
        flush=True,
    )


def _queries(b: Built, rng: random.Random) -> dict[str, tuple[str, dict[str, Any]]]:
    """One query of every kind, drawn at random from ``b``'s graph."""
    field = synthetic._field(rng.randrange(synthetic.FIELDS))
    job = rng.choice(b.jobs)
    dataset = rng.choice(b.top + b.low)
    offset = rng.randrange(0, min(100_000, b.datasets - 200))
    v2 = {"depth": 10, "maxNodes": 1000}
    return {
        "v2 up": (
            "/api/v2/lineage",
            {"nodeId": f"dataset:{NS}:{rng.choice(b.top)}", "direction": "upstream", **v2},
        ),
        "v2 down": (
            "/api/v2/lineage",
            {"nodeId": f"dataset:{NS}:{rng.choice(b.low)}", "direction": "downstream", **v2},
        ),
        "v2 column": (
            "/api/v2/lineage",
            {
                "nodeId": f"datasetField:{NS}:{rng.choice(b.top)}:{field}",
                "direction": "upstream",
                **v2,
            },
        ),
        "dataset page": (f"/api/v1/namespaces/{NS}/datasets/{dataset}", {}),
        "job page": (f"/api/v1/namespaces/{NS}/jobs/{job}", {}),
        "datasets list": (f"/api/v1/namespaces/{NS}/datasets", {"limit": 100, "offset": offset}),
        "jobs list": (
            f"/api/v1/namespaces/{NS}/jobs",
            {"limit": 100, "offset": offset % max(1, len(b.jobs) - 100)},
        ),
        "datasets cursor": (f"/api/v1/namespaces/{NS}/datasets", {"limit": 100, "offset": offset}),
        "versions list": (f"/api/v1/namespaces/{NS}/datasets/{dataset}/versions", {"limit": 100}),
        "runs list": (f"/api/v1/namespaces/{NS}/jobs/{job}/runs", {"limit": 100}),
    }


def _get(client: http_answers._InProcess, path: str, params: dict[str, Any]) -> tuple[float, Any]:
    """Wall seconds and the decoded answer of one GET (gzip accepted, as a browser would)."""
    wall, _, _, body = client.get(path, params)
    return wall, orjson.loads(body)


def measure_reads(small: Built, big: Built, queries: int, seed: int = 5) -> None:
    rngs = {small.label: random.Random(seed), big.label: random.Random(seed)}
    samples: dict[str, dict[str, list[float]]] = {small.label: {}, big.label: {}}
    nodes: dict[str, dict[str, list[int]]] = {small.label: {}, big.label: {}}
    per_node: dict[str, dict[str, list[float]]] = {small.label: {}, big.label: {}}
    for round_no in range(queries + 5):
        order = (small, big) if round_no % 2 else (big, small)
        asked = {b.label: _queries(b, rngs[b.label]) for b in order}
        for kind in asked[small.label]:
            for b in order:
                path, params = asked[b.label][kind]
                if kind == "datasets cursor":
                    # The page after the offset page, by its cursor: the cursor's own cost.
                    _, first = _get(b.client, path, params)
                    params = {"limit": 100, "cursor": first["nextCursor"]}
                seconds, answer = _get(b.client, path, params)
                if round_no < 5:
                    continue  # warm-up
                samples[b.label].setdefault(kind, []).append(seconds)
                if "nodes" in answer:
                    nodes[b.label].setdefault(kind, []).append(len(answer["nodes"]))
                    per_node[b.label].setdefault(kind, []).append(
                        seconds / max(1, len(answer["nodes"]))
                    )
    print(f"\n== reads, {queries} of each kind per store, interleaved (load {_load()})")
    print(
        f"  {'kind':<16} {small.label + ' p50':>11} {small.label + ' p95':>11} "
        f"{big.label + ' p50':>11} {big.label + ' p95':>11}  p95 ratio"
    )
    for kind, small_samples in samples[small.label].items():
        big_samples = samples[big.label][kind]
        ratio = _p(big_samples, 0.95) / _p(small_samples, 0.95)
        extra = ""
        if kind in nodes[small.label]:
            extra = "  nodes/answer median " + " / ".join(
                f"{statistics.median(nodes[b.label][kind]):.0f}" for b in (small, big)
            )
        print(
            f"  {kind:<16} {_p(small_samples, 0.5):9.1f}ms {_p(small_samples, 0.95):9.1f}ms "
            f"{_p(big_samples, 0.5):9.1f}ms {_p(big_samples, 0.95):9.1f}ms  {ratio:5.2f}x"
            f"{extra}",
            flush=True,
        )
    print(f"  (target: p95 ratio <= 2x; load {_load()})")
    # An answer that grows with the graph costs more for its nodes, not for the store.
    print("  per answered node (wall / nodes of each answer):")
    for kind, small_samples in per_node[small.label].items():
        big_samples = per_node[big.label][kind]
        ratio = _p(big_samples, 0.95) / _p(small_samples, 0.95)
        print(
            f"  {kind:<16} {_p(small_samples, 0.5):9.2f}ms {_p(small_samples, 0.95):9.2f}ms "
            f"{_p(big_samples, 0.5):9.2f}ms {_p(big_samples, 0.95):9.2f}ms  {ratio:5.2f}x",
            flush=True,
        )


def _ingest_events(big: Built, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """START or COMPLETE events of new runs of the graph's jobs (each run's pair together)."""
    out = []
    when = synthetic.START + timedelta(days=30)
    for k in range(count // 2):
        name, inputs, outputs = rng.choice(big.job_io)
        run = {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
        for offset, kind in ((0, "START"), (1, "COMPLETE")):
            out.append(
                {
                    "eventType": kind,
                    "eventTime": (when + timedelta(seconds=2 * k + offset)).isoformat(),
                    "run": run,
                    "job": {"namespace": NS, "name": name},
                    "inputs": [{"namespace": NS, "name": d} for d in inputs],
                    "outputs": [{"namespace": NS, "name": o} for o in outputs],
                    "producer": synthetic.PRODUCER,
                    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                }
            )
    return out


def measure_ingest(cluster: Any, big: Built, count: int) -> None:
    """``cluster``: a PostgreSQL cluster or :class:`SqliteFiles`, for the empty store."""
    empty_url = cluster.create_database(f"growth_empty_{uuid.uuid4().hex[:8]}")
    empty = Store.open(empty_url, migrate=True)
    events = [parse_event(e) for e in _ingest_events(big, count, random.Random(9))]
    seconds: dict[str, list[float]] = {"empty": [], "big": []}
    stores = {"empty": empty, "big": big.store}
    try:
        for i, event in enumerate(events):
            order = ("empty", "big") if i % 2 else ("big", "empty")
            for name in order:
                started = time.perf_counter()
                stores[name].record([event])
                seconds[name].append(time.perf_counter() - started)
    finally:
        empty.close()
    rate = {name: len(s) / sum(s) for name, s in seconds.items()}
    print(
        f"\n== single-event ingest (Store.record of one event), {len(events)} events each, "
        f"alternating: empty store {rate['empty']:.0f} events/s (p50 "
        f"{_p(seconds['empty'], 0.5):.1f} ms), {big.label} store {rate['big']:.0f} events/s "
        f"(p50 {_p(seconds['big'], 0.5):.1f} ms): {rate['big'] / rate['empty']:.0%} of the "
        f"empty store's rate (target >= 80 %; load {_load()})",
        flush=True,
    )


def explain(cluster: Any, big: Built, directory: Path) -> None:
    """Every statement one query of each kind runs on ``big``, with its plan (auto_explain)."""
    if not _postgres(big.store):
        explain_sqlite(big, directory)
        return
    with big.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for setting in (
            "session_preload_libraries = 'auto_explain'",
            "auto_explain.log_min_duration = 0",
            "auto_explain.log_analyze = on",
            "auto_explain.log_buffers = on",
            "auto_explain.log_nested_statements = on",
        ):
            conn.exec_driver_sql(f"ALTER DATABASE growth_{big.label} SET {setting}")
    big.store.engine.dispose()
    log = cluster.data_dir.parent / "log"
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(77)
    for kind, (path, params) in _queries(big, rng).items():
        if kind == "datasets cursor":
            # The page the reads time: the one after the offset page, by its cursor.
            _, first = _get(big.client, path, params)
            params = {"limit": 100, "cursor": first["nextCursor"]}
        before = log.stat().st_size
        _get(big.client, path, params)
        with log.open(errors="replace") as handle:
            handle.seek(before)
            text = handle.read()
        slug = re.sub(r"[^a-z0-9]+", "_", kind)
        (directory / f"{slug}.txt").write_text(f"{path} {params}\n\n{text}")
        print(f"  plans of {kind}: {directory / (slug + '.txt')}")


def explain_sqlite(big: Built, directory: Path) -> None:
    """Every statement one query of each kind runs on ``big``, with ``EXPLAIN QUERY PLAN``."""
    ran: list[tuple[str, Any]] = []

    def keep(
        conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool
    ) -> None:
        if not executemany and statement.lstrip().upper().startswith(("SELECT", "WITH")):
            ran.append((statement, params))

    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(77)
    for kind, (path, params) in _queries(big, rng).items():
        if kind == "datasets cursor":
            _, first = _get(big.client, path, params)
            params = {"limit": 100, "cursor": first["nextCursor"]}
        ran.clear()
        sa.event.listen(big.store.engine, "before_cursor_execute", keep)
        try:
            _get(big.client, path, params)
        finally:
            sa.event.remove(big.store.engine, "before_cursor_execute", keep)
        parts = [f"{path} {params}\n"]
        with big.store.engine.connect() as conn:
            cursor = conn.connection.driver_connection.cursor()
            for statement, values in ran:
                plan = cursor.execute(f"EXPLAIN QUERY PLAN {statement}", values).fetchall()
                parts.append(
                    f"{statement}\n{values!r}\n" + "\n".join(f"  {row[-1]}" for row in plan) + "\n"
                )
        slug = re.sub(r"[^a-z0-9]+", "_", kind)
        (directory / f"{slug}.txt").write_text("\n".join(parts))
        print(f"  plans of {kind}: {directory / (slug + '.txt')} ({len(ran)} statements)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("/tmp/headwater-growth"),
        help="with --db sqlite: where the store files go (deleted at the end)",
    )
    parser.add_argument("--small", type=float, default=1.0)
    parser.add_argument("--big", type=float, default=10.0)
    parser.add_argument("--runs-small", type=int, default=20)
    parser.add_argument("--runs-big", type=int, default=4)
    parser.add_argument(
        "--sample-every",
        type=int,
        default=100,
        help="keep the raw events of every N-th job (all its runs)",
    )
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ingest", type=int, default=300)
    parser.add_argument("--explain", type=Path, help="write each kind's plans here")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="leave the PostgreSQL cluster and its stores running for --attach",
    )
    parser.add_argument(
        "--attach",
        metavar="PORT:DATA_DIR",
        help="measure the stores of an earlier run's cluster, left running",
    )
    args = parser.parse_args()

    from tests.support.pgcluster import PgCluster, find_pg_bin, start_cluster

    if (args.attach or args.keep) and args.db == "sqlite":
        parser.error("--attach and --keep are for a PostgreSQL cluster's stores")
    if args.attach:
        port, data = args.attach.split(":", 1)
        as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        bin_dir = find_pg_bin()
        assert bin_dir is not None
        cluster = PgCluster(bin_dir, Path(data), int(port), as_user)
        small, big = attach(cluster, "small"), attach(cluster, "big")
        measure_reads(small, big, args.queries)
        measure_ingest(cluster, big, args.ingest)
        if args.explain:
            explain(cluster, big, args.explain)
        return

    cluster: Any
    if args.db == "sqlite":
        cluster = SqliteFiles(args.dir)
        print(
            f"SQLite {sqlite3.sqlite_version} files in {args.dir}; free disk "
            f"{shutil.disk_usage(args.dir).free / 1e9:.0f} GB; load {_load()}",
            flush=True,
        )
    else:
        print(
            f"PostgreSQL settings: {PG_SETTINGS}; free disk "
            f"{shutil.disk_usage('/tmp').free / 1e9:.0f} GB; load {_load()}",
            flush=True,
        )
        cluster = start_cluster(PG_SETTINGS)
    try:
        small = build(cluster, "small", args.small, args.runs_small, args.sample_every)
        big = build(cluster, "big", args.big, args.runs_big, args.sample_every)
        free = shutil.disk_usage(args.dir if args.db == "sqlite" else "/tmp").free / 1e9
        print(f"  free disk after the loads: {free:.0f} GB", flush=True)
        measure_reads(small, big, args.queries)
        measure_ingest(cluster, big, args.ingest)
        if args.explain:
            explain(cluster, big, args.explain)
        for b in (small, big):
            b.client.close()
            b.store.close()
    except BaseException:
        cluster.stop()
        raise
    if args.keep:
        print(
            f"\ncluster left running: --attach {cluster.port}:{cluster.data_dir} "
            f"(stop: pg_ctl -D {cluster.data_dir} stop, then delete {cluster.data_dir.parent})",
            flush=True,
        )
    else:
        cluster.stop()


if __name__ == "__main__":
    main()
