"""Lineage query latency on a synthetic graph, on SQLite and PostgreSQL (prints; not pass/fail).

Builds the graph of ``benchmarks/synthetic.py`` at ``--scale`` (1.0 = 100k datasets,
50k jobs, 1M runs, ~2.3M column edges), ingests it through the store's own write
path (``Store.record`` of parsed events in 500-event batches), then times, per database:

- directed table lineage, depth 10, upstream of top-layer datasets and downstream
  of low-layer ones — the ``/api/v2/lineage`` computation (walk + node data),
  without HTTP;
- column lineage, depth 10, upstream of a top-layer field (``/api/v2/lineage`` on a
  ``datasetField`` node);
- run-level lineage, depth 4, upstream of a recent run (the versions it read and the
  runs that wrote them);
- search (``/api/v1/search`` query) for name fragments;
- ``GET /api/v1/lineage`` at depth 20 (``v1``) and the v1 dataset and job lists
  (``lists``) over HTTP (in-process, gzip) against their bare path (the same walk
  or page and the answer's rows, no records, no JSON), per answered item, with the
  records reused between answers and rebuilt for each (``http_answers.py``);
- the same answers while the store takes one event before every request
  (``written``), records kept per revision of their rows against records kept
  per store watermark (``http_answers.py``);
- column impact (``/api/v2/impact`` on a ``datasetField`` node), depth 10, from a
  field of a low-layer dataset, interleaved query by query with the downstream
  table walk of depth 10 from the same dataset, and the ratio of the two.

Targets at full scale: table lineage p95 <= 50 ms, column lineage p95 <= 200 ms,
column impact <= 2x the table walk of the same depth.

    .venv/bin/python benchmarks/graph.py [--scale 0.01] [--runs-per-job 20]
        [--queries 200] [--only sqlite|postgresql] [--db URL [--reuse]]
        [--ingest-processes N] [--bulk [--sample-every 100]]

``--bulk`` fills the store with ``bulk_load.py`` instead (the rows the write path
would store, copied in; the raw log of every ``--sample-every``-th job): scale 10
loads in tens of minutes where the write path would take days.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bulk_load  # noqa: E402
import http_answers  # noqa: E402
import synthetic  # noqa: E402

from headwater.events import parse_event  # noqa: E402
from headwater.graph.impact import ImpactFilter  # noqa: E402
from headwater.server.routes.graph_v2 import directed_lineage  # noqa: E402
from headwater.server.routes.impact import impact_answer  # noqa: E402
from headwater.server.run import tune_gc  # noqa: E402
from headwater.store import Store  # noqa: E402
from headwater.store import tables as t  # noqa: E402
from headwater.store.reads.search import search  # noqa: E402


def _chunks(events: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    while batch := list(islice(events, size)):
        yield batch


def _ingest_part(
    url: str, scale: float, runs_per_job: int, part: tuple[int, int]
) -> int:
    """One ingesting process: the events of every ``part[1]``-th job, through its own Store."""
    graph = synthetic.build_graph(scale, runs_per_job=runs_per_job)
    count = 0
    with Store.open(url, migrate=False) as store:
        for batch in _chunks(synthetic.events(graph, part=part), 500):
            store.record([parse_event(e) for e in batch])
            count += len(batch)
    return count


def ingest(
    store: Store, graph: synthetic.SyntheticGraph, url: str, scale: float, processes: int = 1
) -> tuple[int, float]:
    started = time.perf_counter()
    if processes <= 1:
        count = 0
        for batch in _chunks(synthetic.events(graph), 500):
            store.record([parse_event(e) for e in batch])
            count += len(batch)
        return count, time.perf_counter() - started
    # Concurrent writers, each with whole jobs (so no two write the same run); the
    # store serialises what must be serialised.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        parts = [(k, processes) for k in range(processes)]
        counts = pool.map(_ingest_part, *zip(*[(url, scale, graph.runs_per_job, p) for p in parts]))
        count = sum(counts)
    return count, time.perf_counter() - started


def _percentiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p50 = statistics.median(ms)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return f"p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  max {ms[-1]:7.2f} ms"


def _load() -> str:
    """The machine's 1-minute load average (the figures are only comparable at similar load)."""
    return f"{os.getloadavg()[0]:.1f}"


def _time(
    store: Store, run: Callable[[Any], Any], repeat: int
) -> tuple[list[float], list[float], list[Any]]:
    """Wall-clock and CPU seconds of each call. CPU time is this process's only (the
    database's own work is in it for SQLite, not for PostgreSQL); it shows the cost
    when the shared machine is busy and wall-clock times include waiting for a core."""
    wall, cpu, answers = [], [], []
    with store.engine.connect() as conn:
        for _ in range(repeat):
            started, started_cpu = time.perf_counter(), time.process_time()
            answers.append(run(conn))
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
    return wall, cpu, answers


KINDS = (
    "up", "down", "up-asof", "down-asof", "column", "run", "search", "impact", "v1", "lists",
    "written",
)


@contextlib.contextmanager
def _server_gc() -> Iterator[None]:
    """The garbage collector as ``headwater serve`` runs it (``tune_gc``: what exists
    is frozen, the young generation's threshold raised), restored afterwards.

    With the interpreter's defaults, the full collections that a large answer's
    allocations set off walk this process's own synthetic graph (1.4 million objects
    at scale 1, about a second each) inside whichever query triggers them."""
    threshold = gc.get_threshold()
    tune_gc()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def measure_impact(store: Store, low: list[str], queries: int, rng: random.Random) -> None:
    """Column impact against the table walk, both depth 10, alternating query by query
    on one connection so that both meet the same load and caches, with the garbage
    collector as the server sets it (:func:`_server_gc`).

    Impact depth counts jobs crossed (one column edge each), table depth counts edges
    (two per job), so the table walk of depth 20, which crosses as many jobs, is timed
    alongside as well."""
    with _server_gc():
        _measure_impact(store, low, queries, rng)


def _measure_impact(store: Store, low: list[str], queries: int, rng: random.Random) -> None:
    ns = synthetic.NAMESPACE
    kinds = ("table", "table20", "impact")
    samples: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
    sizes: dict[str, list[int]] = {kind: [] for kind in kinds}
    cut = dict.fromkeys(kinds, 0)
    with store.engine.connect() as conn:
        for round_no in range(queries + 5):
            dataset = rng.choice(low)
            field = synthetic._field(rng.randrange(synthetic.FIELDS))
            walks = {
                "table": lambda: directed_lineage(
                    conn, f"dataset:{ns}:{dataset}", "downstream", 10, None, 10_000
                ),
                "table20": lambda: directed_lineage(
                    conn, f"dataset:{ns}:{dataset}", "downstream", 20, None, 10_000
                ),
                "impact": lambda: impact_answer(
                    conn, f"datasetField:{ns}:{dataset}:{field}", 10, None, ImpactFilter(),
                    10_000,
                ),
            }
            # Alternate which goes first, so neither always finds the other's pages cached.
            order = kinds if round_no % 2 else kinds[::-1]
            for kind in order:
                started, started_cpu = time.perf_counter(), time.process_time()
                answer = walks[kind]()
                if round_no < 5:
                    continue  # warm-up
                samples[kind].append(time.perf_counter() - started)
                cpu[kind].append(time.process_time() - started_cpu)
                sizes[kind].append(len(answer["nodes"]))
                cut[kind] += bool(answer["truncated"])
    labels = {
        "table": "table lineage, downstream, depth 10 (paired)",
        "table20": "table lineage, downstream, depth 20 (paired)",
        "impact": "column impact, depth 10                    ",
    }
    for kind, label in labels.items():
        extra = f"  nodes/answer median {statistics.median(sizes[kind]):.0f}"
        extra += f" max {max(sizes[kind])}  truncated {cut[kind]}"
        print(f"  {label} wall {_percentiles(samples[kind])}{extra}")
        print(f"  {' ' * len(label)} cpu  {_percentiles(cpu[kind])}  load {_load()}")

    def ratio(values: dict[str, list[float]], table: str, q: float) -> float:
        def at(xs: list[float]) -> float:
            ordered = sorted(xs)
            return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

        return at(values["impact"]) / at(values[table])

    for table in ("table", "table20"):
        print(
            f"  column impact / {labels[table].strip()}: wall p50 "
            f"{ratio(samples, table, 0.5):.2f}x  p95 {ratio(samples, table, 0.95):.2f}x; "
            f"cpu p50 {ratio(cpu, table, 0.5):.2f}x  p95 {ratio(cpu, table, 0.95):.2f}x"
            "  (target <= 2x)"
        )
    # The impact walk counts depth in jobs crossed and answers columns, so it reaches
    # more nodes than the table walk of the same depth: the cost per answered node
    # separates the walk's own cost from its reach.
    per_node = {kind: sum(cpu[kind]) / max(1, sum(sizes[kind])) * 1e6 for kind in kinds}
    print(
        "  cpu per answered node: "
        + ", ".join(f"{kind} {per_node[kind]:.0f} us" for kind in kinds)
        + "; nodes answered: "
        + ", ".join(f"{kind} {sum(sizes[kind]):,}" for kind in kinds)
    )


def measure(
    store: Store,
    graph: synthetic.SyntheticGraph,
    queries: int,
    seed: int = 3,
    kinds: tuple[str, ...] = KINDS,
) -> None:
    rng = random.Random(seed)
    # Half way through the events (round r of job j is at START + r hours + j seconds),
    # so every job has runs before it: each job's version then (the slower asOf path).
    span = timedelta(hours=graph.runs_per_job - 1, seconds=len(graph.jobs))
    as_of = synthetic.START + span / 2
    top = [o for job in graph.jobs if job.layer >= synthetic.LAYERS - 3 for o in job.outputs]
    low = [o for job in graph.jobs if job.layer <= 3 for o in job.outputs]
    ns = synthetic.NAMESPACE

    def table(direction: str, roots: list[str], at: datetime | None) -> Any:
        """A depth-10 table-lineage query from a random dataset of ``roots``."""

        def query(conn: Any) -> dict[str, Any]:
            node = f"dataset:{ns}:{rng.choice(roots)}"
            return directed_lineage(conn, node, direction, 10, at, 10_000)

        return query

    def column_up(conn: Any) -> dict[str, Any]:
        field = synthetic._field(rng.randrange(synthetic.FIELDS))
        node = f"datasetField:{ns}:{rng.choice(top)}:{field}"
        return directed_lineage(conn, node, "upstream", 10, None, 10_000)

    def find(conn: Any) -> Any:
        return search(conn, f"job_{rng.randrange(len(graph.jobs))}_out", None, "name", 10)

    # Runs of the last round: their inputs have versions written by earlier runs.
    with store.engine.connect() as conn:
        recent = list(
            conn.execute(
                sa.select(t.runs.c.uuid).order_by(t.runs.c.created_at.desc()).limit(2_000)
            ).scalars()
        )

    def run_up(conn: Any) -> dict[str, Any]:
        return directed_lineage(conn, f"run:{rng.choice(recent)}", "upstream", 4, None, 10_000)

    if "impact" in kinds:
        measure_impact(store, low, queries, random.Random(seed + 1))
    if "v1" in kinds:
        http_answers.measure_v1(store, graph, min(queries, 40), random.Random(seed + 2))
    if "lists" in kinds:
        http_answers.measure_lists(store, min(queries, 40), random.Random(seed + 4))
        http_answers.measure_first_pages(store, min(queries, 40))
    if "written" in kinds:
        http_answers.measure_written(store, graph, min(queries, 40), random.Random(seed + 5))
    for kind, label, run in (
        ("up", "table lineage, upstream, depth 10        ", table("upstream", top, None)),
        ("down", "table lineage, downstream, depth 10      ", table("downstream", low, None)),
        ("up-asof", "table lineage, upstream, depth 10, asOf  ", table("upstream", top, as_of)),
        ("down-asof", "table lineage, downstream, depth 10, asOf", table("downstream", low, as_of)),
        ("column", "column lineage, upstream, depth 10       ", column_up),
        ("run", "run lineage, upstream, depth 4           ", run_up),
        ("search", "search                                   ", find),
    ):
        if kind not in kinds:
            continue
        _time(store, run, min(5, queries))  # warm caches
        samples, cpu, answers = _time(store, run, queries)
        sizes = [len(a["nodes"]) for a in answers if isinstance(a, dict) and "nodes" in a]
        extra = ""
        if sizes:
            cut = sum(1 for a in answers if a["truncated"])
            extra = f"  nodes/answer median {statistics.median(sizes):.0f} max {max(sizes)}"
            extra += f"  truncated {cut}"
        print(f"  {label} wall {_percentiles(samples)}{extra}")
        print(f"  {' ' * len(label)} cpu  {_percentiles(cpu)}  load {_load()}")


def run_one(
    label: str,
    url: str,
    graph: synthetic.SyntheticGraph,
    queries: int,
    reuse: bool = False,
    scale: float = 0.01,
    processes: int = 1,
    kinds: tuple[str, ...] = KINDS,
    bulk_sample: int = 0,
) -> None:
    print(f"\n== {label}: {url.split('@')[-1]}  ({queries} queries each)")
    started = time.perf_counter()
    store = Store.open(url, migrate=True)
    print(f"  opened (migrations applied) in {time.perf_counter() - started:.1f} s")
    try:
        if not reuse and bulk_sample:
            report = bulk_load.load(store.engine, graph, sample_every=bulk_sample)
            print(f"  bulk-loaded in {report.seconds['total']:.1f} s\n  {report.summary()}")
        elif not reuse:
            count, seconds = ingest(store, graph, url, scale, processes)
            rate = count / seconds
            print(f"  ingested {count:,} events in {seconds:.1f} s ({rate:,.0f} events/s)")
        # Refresh planner statistics, as PostgreSQL's autovacuum would on a server that has
        # been up for a while, and as a SQLite store does by itself while events come in
        # (headwater.store.statistics: ANALYZE under PRAGMA analysis_limit); the bulk load
        # bypasses the store's write path, so it would get plans made for empty tables. This
        # full ANALYZE (no limit) starts the measurement on settled statistics.
        with store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
        counts = store.counts()
        print(
            "  store: "
            + ", ".join(
                f"{k} {counts[k]:,}"
                for k in ("datasets", "jobs", "runs", "column_lineage", "dataset_versions")
            )
        )
        measure(store, graph, queries, kinds=kinds)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--runs-per-job", type=int, default=20)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--db", help="use this database URL instead (must be empty)")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="the --db database already holds this graph (same --scale): only measure",
    )
    parser.add_argument(
        "--kinds",
        # ``written`` adds events to the store: asked for by name only.
        default=",".join(k for k in KINDS if k != "written"),
        help=f"comma-separated query kinds to time (of {','.join(KINDS)})",
    )
    parser.add_argument(
        "--ingest-processes",
        type=int,
        default=1,
        help="ingest with this many concurrent writer processes (PostgreSQL)",
    )
    parser.add_argument("--bulk", action="store_true", help="load with bulk_load.py")
    parser.add_argument("--sample-every", type=int, default=100,
                        help="with --bulk: keep the raw events of every N-th job")
    args = parser.parse_args()
    bulk_sample = args.sample_every if args.bulk else 0
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown --kinds: {', '.join(sorted(unknown))}")

    started = time.perf_counter()
    graph = synthetic.build_graph(args.scale, runs_per_job=args.runs_per_job)
    print(
        f"synthetic graph at scale {args.scale}: {len(graph.datasets):,} datasets, "
        f"{len(graph.jobs):,} jobs, {len(graph.jobs) * graph.runs_per_job:,} runs, "
        f"{graph.column_edges:,} column edges (built in {time.perf_counter() - started:.1f} s)"
    )
    if args.db:
        run_one(
            "given database", args.db, graph, args.queries, args.reuse, args.scale,
            args.ingest_processes, kinds, bulk_sample,
        )
        return
    if args.only in (None, "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            run_one(
                "SQLite", f"sqlite:///{tmp}/graph.db", graph, args.queries, scale=args.scale,
                kinds=kinds, bulk_sample=bulk_sample,
            )
    if args.only in (None, "postgresql"):
        from tests.support.pgcluster import find_pg_bin, start_cluster

        if find_pg_bin() is None:
            print("\n== PostgreSQL: server binaries not installed; skipped")
            return
        cluster = start_cluster()
        try:
            url = cluster.create_database("graph_bench")
            run_one(
                "PostgreSQL", url, graph, args.queries, scale=args.scale,
                processes=args.ingest_processes, kinds=kinds, bulk_sample=bulk_sample,
            )
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
