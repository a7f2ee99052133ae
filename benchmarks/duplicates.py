"""What duplicate-work answers cost, read through the fingerprint table and read from
every column edge (prints; not pass/fail).

``GET /api/v2/duplicates`` finds candidate pairs of jobs by equal fingerprint digests
in ``column_fingerprints`` (kept by the write transaction) and reads only those
jobs' edges. This measures, on the synthetic graph of ``benchmarks/synthetic.py``
(its column edges as producers send them), per scale:

* the store-wide answer and one job's answer (``?job=``, the job page's), and the
  same answers computed from every column edge of the store (each job's columns in
  full, ``tests/store/duplicates_reference.py``: the read-time way), rounds
  interleaved (new, old, new, old...) so that load changes hit both alike, and
  checked equal;
* with ``--ingest``, the write path's cost of keeping the table: the same batches
  written alternately into two stores, one with the table's refresh switched off,
  and the ratio of their times.

Medians and p95 over ``--repeat`` rounds; ``uptime`` before and after.

    .venv/bin/python benchmarks/duplicates.py [--scales 0.01 0.05] [--repeat 5]
        [--ingest] [--runs-per-job N] [--no-reference] [--db URL]
        (a fresh database per scale; default a temporary SQLite file)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

from headwater.events import parse_event  # noqa: E402
from headwater.server.routes.duplicates import duplicates_answer  # noqa: E402
from headwater.store import Store, derive  # noqa: E402
from tests.store.duplicates_reference import reference_answer  # noqa: E402

BATCH = 500


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _p95(samples: list[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def _line(name: str, samples: list[float]) -> str:
    return (
        f"  {name:<34} median {1000 * statistics.median(samples):9.1f} ms  "
        f"p95 {1000 * _p95(samples):9.1f}"
    )


@contextmanager
def _without_table() -> Iterator[None]:
    """The write path with the fingerprint table's refresh switched off."""
    refresh = derive.fingerprints.refresh_after_batch
    derive.fingerprints.refresh_after_batch = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        yield
    finally:
        derive.fingerprints.refresh_after_batch = refresh


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def measure(url: str, scale: float, repeat: int, reference: bool, runs: int) -> None:
    graph = synthetic.build_graph(scale, runs_per_job=runs)
    with Store.open(url, migrate=True) as store:
        started = time.perf_counter()
        count = 0
        events = synthetic.events(graph)
        while batch := list(islice(events, BATCH)):
            store.record([parse_event(e) for e in batch])
            count += len(batch)
        ingest = time.perf_counter() - started
        samples: dict[str, list[float]] = {k: [] for k in ("new", "old", "new_job", "old_job")}
        some_jobs = [
            f"job:{synthetic.NAMESPACE}:{j.name}"
            for j in graph.jobs[:: max(1, len(graph.jobs) // repeat)]
        ]
        found = 0
        for _, job in zip(range(repeat), some_jobs, strict=False):
            with store.engine.connect() as conn:
                took, answer = _timed(lambda: duplicates_answer(conn, None, None, 0.5, 100))
                samples["new"].append(took)
                took, one = _timed(lambda: duplicates_answer(conn, None, job, 0.5, 100))  # noqa: B023
                samples["new_job"].append(took)
            found = answer["totalCount"]
            if not reference:
                continue
            took, old = _timed(lambda: reference_answer(store.engine))
            samples["old"].append(took)
            took, old_one = _timed(lambda: reference_answer(store.engine, job=job))  # noqa: B023
            samples["old_job"].append(took)
            assert old == answer and old_one == one, "the answers differ"
        with store.engine.connect() as conn:
            columns = conn.exec_driver_sql("SELECT count(*) FROM column_fingerprints").scalar()
    print(
        f"scale {scale}: {len(graph.jobs)} jobs, {columns} output columns, "
        f"{graph.column_edges} column edges; ingest {count} events in {ingest:.1f} s "
        f"({1000 * ingest / count:.2f} ms/event); pairs at minShare 0.5: {found}"
        + ("; answers equal to the reference's" if reference else "")
    )
    print(_line("store-wide, fingerprint table", samples["new"]))
    if reference:
        print(_line("store-wide, every column edge", samples["old"]))
    print(_line("one job's (?job=), fingerprint table", samples["new_job"]))
    if reference:
        print(_line("one job's, every column edge", samples["old_job"]))


def measure_ingest(url_with: str, url_without: str, scale: float, runs: int) -> None:
    """The same batches into two stores alternately, the table kept in one only."""
    graph = synthetic.build_graph(scale, runs_per_job=runs)
    times = {"with": 0.0, "without": 0.0}
    count = 0
    with Store.open(url_with, migrate=True) as kept, Store.open(url_without, migrate=True) as bare:
        events = synthetic.events(graph)
        while batch := list(islice(events, BATCH)):
            for name in ("with", "without") if count % (2 * BATCH) == 0 else ("without", "with"):
                parsed = [parse_event(e) for e in batch]
                started = time.perf_counter()
                if name == "with":
                    kept.record(parsed)
                else:
                    with _without_table():
                        bare.record(parsed)
                times[name] += time.perf_counter() - started
            count += len(batch)
    ratio = times["with"] / times["without"]
    print(
        f"ingest, scale {scale}, {runs} runs per job: {count} events, "
        f"{1000 * times['with'] / count:.2f} ms/event with "
        f"the table, {1000 * times['without'] / count:.2f} without; ratio {ratio:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[0.01, 0.05])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ingest", action="store_true", help="measure the write path's cost")
    parser.add_argument(
        "--runs-per-job",
        type=int,
        default=2,
        help="runs of each job (each re-asserts its column lineage; the first one is new)",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the answer from every column edge"
    )
    parser.add_argument("--db", help="a database URL (emptied per scale is up to you)")
    args = parser.parse_args()
    print(f"load before: {_uptime()}")
    for scale in args.scales:
        with tempfile.TemporaryDirectory() as tmp:
            if args.ingest:
                measure_ingest(
                    f"sqlite:///{os.path.join(tmp, 'with.db')}",
                    f"sqlite:///{os.path.join(tmp, 'without.db')}",
                    scale,
                    args.runs_per_job,
                )
                continue
            url = args.db or f"sqlite:///{os.path.join(tmp, 'duplicates.db')}"
            measure(url, scale, args.repeat, not args.no_reference, args.runs_per_job)
    print(f"load after: {_uptime()}")


if __name__ == "__main__":
    main()
