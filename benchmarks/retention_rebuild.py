"""Retention and a rebuild on a store that already holds a graph (prints figures).

Takes a store another benchmark built -- ``benchmarks/graph.py --scale 1.0 --db
sqlite:////tmp/full.db --queries 1 --kinds search`` builds the full-scale one
(100,000 datasets, 1,000,000 runs, 2,000,000 events through the write path) --
and on it, one step after the other:

- migrates it to the newest schema (the time a release's migrations take there);
- retention: ``prune`` of every run last updated before ``--cutoff`` (the
  synthetic graph's runs span 2026-01-01T00:00Z to 2026-01-02T08:53Z; the
  default cutoff, 16:00Z, deletes about 45 % of them), in transactions of
  ``--batch`` runs: seconds, what was deleted and kept, the transactions'
  median, p95 and longest time, SQLite pages given back;
- a rebuild of what is left: ``headwater rebuild --from-raw`` into ``--into``
  (a new SQLite file next to the store by default), as an operator runs it:
  seconds and events per second.

Store sizes are printed before and after each step. The store is changed in
place: copy it first to keep the original.

    .venv/bin/python benchmarks/retention_rebuild.py --db sqlite:////tmp/full.db
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from headwater.store import Store
from headwater.store.retention import prune

COUNTED = ("runs", "events", "dataset_versions", "column_lineage", "column_fingerprints")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _size(store: Store, url: str) -> int:
    if store.dialect == "sqlite":
        path = Path(url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar())


def _counts(store: Store) -> str:
    counts = store.counts()
    return ", ".join(f"{k} {counts[k]:,}" for k in COUNTED)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="the store to prune and rebuild")
    parser.add_argument("--cutoff", default="2026-01-01T16:00:00+00:00")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--into", help="the rebuilt store [a new SQLite file next to --db]")
    args = parser.parse_args()
    cutoff = datetime.fromisoformat(args.cutoff).astimezone(UTC)

    print(f"start {datetime.now(UTC):%H:%M:%S} load {_load()}", flush=True)
    started = time.perf_counter()
    store = Store.open(args.db, migrate=True)
    print(f"migrated to the newest schema in {time.perf_counter() - started:.1f} s", flush=True)
    try:
        print(f"before: {_size(store, args.db):,} bytes; {_counts(store)}", flush=True)
        done = prune(store.engine, datetime.now(UTC) - cutoff, batch=args.batch, settle=0)
        times = sorted(done.batch_seconds) or [0.0]
        p95 = times[int(0.95 * (len(times) - 1))]
        print(
            f"retention before {cutoff:%Y-%m-%dT%H:%MZ}: {done.seconds:.1f} s; deleted "
            f"{done.runs:,} runs, {done.events:,} raw events, {done.dataset_versions:,} dataset "
            f"versions; kept {done.protected:,} older runs; {done.transactions:,} transactions, "
            f"median {statistics.median(times):.3f} s, p95 {p95:.3f} s, longest {times[-1]:.3f} s; "
            f"{done.vacuumed_pages:,} pages given back; load {_load()}",
            flush=True,
        )
        print(f"after: {_size(store, args.db):,} bytes; {_counts(store)}", flush=True)
        events = store.counts()["events"]
    finally:
        store.close()

    command = [sys.executable, "-m", "headwater", "rebuild", "--from-raw", "--db", args.db]
    if args.into:
        command += ["--into", args.into]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    print(
        f"rebuild --from-raw of {events:,} events: {seconds:.1f} s ({events / seconds:,.0f} "
        f"events/s); load {_load()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
