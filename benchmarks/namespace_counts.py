"""What keeping the lists' counts (``store.namespace_counts``) costs a write at worst.

``benchmarks/ingest.py``'s events name the same 50 jobs and 51 datasets again
and again, so the count triggers almost never run there. Here every event is a
run of a new job reading one known dataset and writing two new ones: three
trigger calls per event, the most an ordinary event makes. Two stores per
database, one with the triggers and one with them dropped, take batches of the
same shape in turn (the order alternates), and the script prints the median
wall time per event of each and their ratio, with the load. On PostgreSQL the
triggers run in the server, so the wall time (one client, waiting for each
batch) is the measure.

    .venv/bin/python benchmarks/namespace_counts.py [--batches 40] [--size 100]
        [--only sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headwater.events import parse_event  # noqa: E402
from headwater.store import Store  # noqa: E402
from headwater.store.reads.common import Page  # noqa: E402
from headwater.store.reads.datasets import dataset_rows_page  # noqa: E402

_TRIGGERS = [("namespaces", "namespace_counts_namespace")] + [
    (table, f"namespace_counts_{table}_{op}")
    for table in ("datasets", "jobs")
    for op in ("insert", "delete", "update")
]


def _drop_triggers(store: Store) -> None:
    postgres = store.engine.dialect.name == "postgresql"
    with store.engine.begin() as conn:
        for table, trigger in _TRIGGERS:
            conn.exec_driver_sql(
                f"DROP TRIGGER {trigger} ON {table}" if postgres else f"DROP TRIGGER {trigger}"
            )


def _events(tag: str) -> Iterator[dict[str, Any]]:
    """COMPLETE events, each a run of a new job writing two new datasets."""
    i = 0
    while True:
        yield {
            "eventType": "COMPLETE",
            "eventTime": f"2026-11-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z",
            "run": {"runId": f"0195e0c5-0000-7000-8000-{i:012d}"},
            "job": {"namespace": "bench", "name": f"{tag}.job_{i}"},
            "inputs": [{"namespace": "warehouse", "name": "raw.orders"}],
            "outputs": [{"namespace": "warehouse", "name": f"{tag}.out_{i}_{k}"} for k in range(2)],
            "producer": "https://example.com/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
        i += 1


def _compare(label: str, urls: dict[str, str], batches: int, size: int) -> None:
    stores = {arm: Store.open(url, migrate=True) for arm, url in urls.items()}
    _drop_triggers(stores["off"])
    streams = {arm: _events(arm) for arm in stores}
    seconds: dict[str, list[float]] = {arm: [] for arm in stores}
    try:
        for number in range(batches + 2):
            arms = list(stores) if number % 2 == 0 else list(reversed(stores))
            for arm in arms:
                lot = [parse_event(next(streams[arm])) for _ in range(size)]
                started = time.perf_counter()
                stores[arm].record(lot)
                if number >= 2:  # warm-up
                    seconds[arm].append((time.perf_counter() - started) / size)
        # The kept count is the list's: the one input and every output.
        with stores["kept"].engine.connect() as conn:
            total = dataset_rows_page(conn, "warehouse", Page(limit=1))[1]
        assert total == 1 + 2 * size * (batches + 2), total
    finally:
        for store in stores.values():
            store.close()
    kept, off = (statistics.median(seconds[arm]) * 1e6 for arm in ("kept", "off"))
    print(
        f"{label}: {batches} batches of {size} events each way, 3 new rows per event; "
        f"wall per event p50: with the triggers {kept:.0f} us, without {off:.0f} us: "
        f"{kept / off:.3f}x  load {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    print(f"load average {'/'.join(f'{v:.2f}' for v in os.getloadavg())} at start")
    if args.only in (None, "sqlite"):
        with tempfile.TemporaryDirectory() as tmp:
            urls = {arm: f"sqlite:///{tmp}/{arm}.db" for arm in ("kept", "off")}
            _compare("SQLite", urls, args.batches, args.size)
    if args.only in (None, "postgresql"):
        from tests.support.pgcluster import find_pg_bin, start_cluster

        if find_pg_bin() is None:
            print("PostgreSQL: server binaries not installed; skipped")
            return
        cluster = start_cluster()
        try:
            urls = {arm: cluster.create_database(f"counts_{arm}") for arm in ("kept", "off")}
            _compare("PostgreSQL", urls, args.batches, args.size)
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
