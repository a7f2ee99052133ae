"""Store bytes per event, and what retention and a rebuild of that store take (prints figures).

Records ``--events`` of the ingest benchmark's ~3 KB events (START/COMPLETE
pairs over 50 chained jobs, a schema facet on input and output and a
columnLineage facet on each COMPLETE's output) through ``Store.record`` in lots
of 500, on SQLite and on a throwaway PostgreSQL cluster
(tests/support/pgcluster.py), then prints:

- bytes per event: the SQLite file after a WAL checkpoint, PostgreSQL's
  ``pg_database_size`` less the size of the empty migrated database, and the
  raw log's own share (the canonical JSON kept per event);
- retention: ``prune`` with a window that keeps the newer half of the runs
  (seconds, runs and events deleted, the longest transaction);
- rebuild: the pruned store's raw log through the write path into a new store
  (seconds, events/s).

    python benchmarks/store_size.py --events 50000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from itertools import islice
from pathlib import Path

import sqlalchemy as sa

from headwater.events import parse_event
from headwater.server.ingest import ingest_batch
from headwater.store import Store, raw_log
from headwater.store import tables as t
from headwater.store.retention import prune

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for the ingest benchmark's events
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support.pgcluster
from ingest import iter_events  # noqa: E402

LOT = 500


def _size(store: Store, url: str, empty: int) -> int:
    if store.dialect == "sqlite":
        with store.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").all()
        path = Path(url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar()
                   or 0) - empty


def _empty_size(store: Store) -> int:
    if store.dialect == "sqlite":
        return 0
    with store.engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar()
                   or 0)


def measure(name: str, url: str, into: str, count: int) -> None:
    events = list(islice(iter_events("size", "v7"), count))
    with Store.open(url) as store:
        empty = _empty_size(store)
        began = time.perf_counter()
        for start in range(0, count, LOT):
            store.record([parse_event(e) for e in events[start:start + LOT]])
        recorded = time.perf_counter() - began
        size = _size(store, url, empty)
        with store.engine.connect() as conn:
            raw = int(conn.scalar(sa.select(sa.func.sum(sa.func.length(t.events.c.payload))))
                      or 0)
            times = sorted(conn.scalars(sa.select(t.runs.c.updated_at)))
        print(f"{name}: {count:,} events recorded in {recorded:.1f} s ({count / recorded:,.0f}/s); "
              f"store {size / count:,.0f} bytes per event, of which the raw log's JSON "
              f"{raw / count:,.0f}")
        middle = times[len(times) // 2]
        now = datetime(2030, 1, 1)
        done = prune(store.engine, now - middle, now=now, settle=0)
        longest = max(done.batch_seconds, default=0.0)
        print(f"{name}: retention deleted {done.runs:,} runs and {done.events:,} events in "
              f"{done.seconds:.1f} s ({done.transactions} transactions, the longest "
              f"{longest * 1000:.0f} ms); {done.vacuumed_pages:,} pages given back; store now "
              f"{_size(store, url, empty) / count:,.0f} bytes per recorded event")
    engine = sa.create_engine(url)
    try:
        with Store.open(into) as target:
            began = time.perf_counter()
            lot: list[object] = []
            for _, payload in raw_log.payloads(engine):
                lot.append(json.loads(payload))
                if len(lot) == LOT:
                    ingest_batch(target, lot)
                    lot = []
            if lot:
                ingest_batch(target, lot)
            took = time.perf_counter() - began
            rebuilt = raw_log.count(target.engine)
        print(f"{name}: rebuild of the pruned store, {rebuilt:,} events in {took:.1f} s "
              f"({rebuilt / took:,.0f} events/s)")
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args()
    print(f"load average {'/'.join(f'{v:.2f}' for v in os.getloadavg())} at start")
    with tempfile.TemporaryDirectory(prefix="headwater-size-") as tmp:
        if args.db in ("sqlite", "both"):
            measure("SQLite", f"sqlite:///{tmp}/a.db", f"sqlite:///{tmp}/b.db", args.events)
        if args.db in ("postgresql", "both"):
            from tests.support.pgcluster import find_pg_bin, start_cluster

            if find_pg_bin() is None:
                print("PostgreSQL: server binaries not installed; skipped")
            else:
                cluster = start_cluster()
                try:
                    measure("PostgreSQL", cluster.create_database("a"),
                            cluster.create_database("b"), args.events)
                finally:
                    cluster.stop()
    print(f"load average {'/'.join(f'{v:.2f}' for v in os.getloadavg())} at end")


if __name__ == "__main__":
    main()
