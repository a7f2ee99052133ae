"""What duplicate-work fingerprints cost when computed at read time (prints; not pass/fail).

``GET /api/v2/duplicates`` reads every job's output columns from ``column_lineage``,
fingerprints them and pairs the jobs on each request. This measures that answer on
the synthetic graph of ``benchmarks/synthetic.py`` (its column edges as producers
send them), split into the SQL read (``output_columns``) and the pure pairing
(``graph.duplicates``), next to the store's own ingest time for the same graph --
the cost a write-time derivation would be added to.

Per scale: the column edges, the output columns, the store's ingest time per event,
and the answer's median and p95 over ``--repeat`` requests, rounds interleaved
(read, pair, read, pair...) so that load changes hit both alike; ``uptime`` before
and after.

    .venv/bin/python benchmarks/duplicates.py [--scales 0.01 0.05] [--repeat 7]
        [--db URL]   (a fresh database per scale; default a temporary SQLite file)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

from headwater.events import parse_event  # noqa: E402
from headwater.graph.duplicates import ColumnInput, OutputColumn, duplicates  # noqa: E402
from headwater.server.routes.duplicates import duplicates_answer  # noqa: E402
from headwater.store import Store  # noqa: E402
from headwater.store.reads.duplicates import output_columns  # noqa: E402


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _p95(samples: list[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def measure(url: str, scale: float, repeat: int) -> None:
    graph = synthetic.build_graph(scale, runs_per_job=2)
    with Store.open(url, migrate=True) as store:
        started = time.perf_counter()
        count = 0
        events = synthetic.events(graph)
        while batch := list(islice(events, 500)):
            store.record([parse_event(e) for e in batch])
            count += len(batch)
        ingest = time.perf_counter() - started
        reads, pairs, answers, per_job = [], [], [], []
        some_jobs = [
            f"job:{synthetic.NAMESPACE}:{j.name}"
            for j in graph.jobs[:: max(1, len(graph.jobs) // repeat)]
        ]
        with store.engine.connect() as conn:
            for _, job in zip(range(repeat), some_jobs, strict=False):
                t0 = time.perf_counter()
                rows = output_columns(conn)
                t1 = time.perf_counter()
                columns = [
                    OutputColumn(j, d, f, frozenset(ColumnInput(*i) for i in inputs))
                    for j, d, f, inputs in rows
                ]
                found = duplicates(columns, 0.5)
                t2 = time.perf_counter()
                duplicates_answer(conn, None, None, 0.5, 100)
                t3 = time.perf_counter()
                duplicates_answer(conn, None, job, 0.5, 100)
                per_job.append(time.perf_counter() - t3)
                reads.append(t1 - t0)
                pairs.append(t2 - t1)
                answers.append(t3 - t2)
        edges = sum(len(inputs) for *_, inputs in rows)
    print(
        f"scale {scale}: {len(graph.jobs)} jobs, {len(rows)} output columns, {edges} column "
        f"edges; ingest {count} events in {ingest:.1f} s ({1000 * ingest / count:.2f} ms/event); "
        f"pairs found at minShare 0.5: {len(found)}"
    )
    print(
        f"  SQL read   median {1000 * statistics.median(reads):8.1f} ms  "
        f"p95 {1000 * _p95(reads):8.1f}"
    )
    print(
        f"  pairing    median {1000 * statistics.median(pairs):8.1f} ms  "
        f"p95 {1000 * _p95(pairs):8.1f}"
    )
    print(
        f"  answer     median {1000 * statistics.median(answers):8.1f} ms  "
        f"p95 {1000 * _p95(answers):8.1f}  "
        f"= {statistics.median(answers) / (ingest / count):.0f} events' ingest time"
    )
    print(
        f"  one job's  median {1000 * statistics.median(per_job):8.1f} ms  "
        f"p95 {1000 * _p95(per_job):8.1f}  (?job=, the job page's answer)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[0.01, 0.05])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--db", help="a database URL (emptied per scale is up to you)")
    args = parser.parse_args()
    print(f"load before: {_uptime()}")
    for scale in args.scales:
        if args.db:
            measure(args.db, scale, args.repeat)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            measure(f"sqlite:///{os.path.join(tmp, 'duplicates.db')}", scale, args.repeat)
    print(f"load after: {_uptime()}")


if __name__ == "__main__":
    main()
