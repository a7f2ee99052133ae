"""Events per second straight into the store (no HTTP), on SQLite and PostgreSQL.

Realistic ~3.8 KB events (schema + columnLineage facets) from the replay
generator, written (a) in 500-event batches and (b) as single-event calls from
16 threads (group commit coalesces them). PostgreSQL runs on a throwaway
cluster when the server binaries are installed. Besides wall-clock rates it
prints events per CPU-second of this process, which stays meaningful when
other work shares the machine (for PostgreSQL it leaves out the server's CPU).

    .venv/bin/python benchmarks/store_write.py [--events N] [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headwater.events import parse_event  # noqa: E402
from headwater.store import Store  # noqa: E402
from tests.store.generate import generate  # noqa: E402


def batches(store: Store, events: list[dict[str, Any]], size: int) -> tuple[float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(events), size):
        store.record([parse_event(e) for e in events[i : i + size]])
    return _rates(len(events), started, cpu)


def _rates(count: int, started: float, cpu: float) -> tuple[float, float]:
    """Events per wall second, and per CPU second of this process (all threads)."""
    return count / (time.perf_counter() - started), count / (time.process_time() - cpu)


def concurrent_singles(
    store: Store, events: list[dict[str, Any]], clients: int
) -> tuple[float, float]:
    shares = [events[i::clients] for i in range(clients)]

    def client(share: list[dict[str, Any]]) -> None:
        for event in share:
            store.record([parse_event(event)])

    threads = [threading.Thread(target=client, args=(s,)) for s in shares]
    started, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return _rates(len(events), started, cpu)


def run(label: str, make_url: Any, events: list[dict[str, Any]], singles: int) -> None:
    store = Store.open(make_url("batch"))
    try:
        wall, cpu = batches(store, events, 500)
        print(f"{label:11s} 500-event batches       : {wall:7.0f} events/s wall, "
              f"{cpu:7.0f} per CPU-second ({len(events)} events)")
    finally:
        store.close()
    store = Store.open(make_url("single"))
    try:
        wall, cpu = concurrent_singles(store, events[:singles], 16)
        print(f"{label:11s} 16 clients, 1 event/call: {wall:7.0f} events/s wall, "
              f"{cpu:7.0f} per CPU-second ({singles} events)")
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--singles", type=int, default=4_000)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    events = generate(args.events)
    size = sum(len(str(e)) for e in events[:1000]) / 1000
    print(f"generated {len(events)} events, ~{size / 1024:.1f} KB each")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "sqlite"):
            run("sqlite", lambda name: f"sqlite:///{tmp}/{name}.db", events, args.singles)
        if args.only in (None, "postgresql"):
            from tests.support.pgcluster import find_pg_bin, start_cluster

            if find_pg_bin() is None:
                print("postgresql  skipped: server binaries not installed")
                return
            cluster = start_cluster()
            try:
                run("postgresql", lambda name: cluster.create_database(f"bench_{name}"),
                    events, args.singles)
            finally:
                cluster.stop()


if __name__ == "__main__":
    main()
