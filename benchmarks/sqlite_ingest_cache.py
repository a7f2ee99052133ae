"""Single-event ingest on a grown SQLite store against an empty one, by page-cache setting.

``graph_growth.py --db sqlite`` measures single-event ingest on the big store right after
its load; this benchmark asks what that rate depends on. On an existing grown store
(``graph.py --bulk --scale 3 --runs-per-job 4 --db sqlite:///PATH`` makes one) and a new
empty one, it records new runs of the grown store's jobs one event at a time, alternating
between the stores, in windows of ``--events`` events, and prints per window the grown
store's rate as a share of the empty store's and the bytes the process read from disk per
grown-store event (``/proc/self/io``, so pages the OS page cache already held cost none).

Each setting (``--configs``: SQLite ``cache_size`` in KiB and ``mmap_size`` in bytes, set
on every connection of both stores, and the new runs' ids: ``v4``, random as in
``graph_growth.py`` and the loaded graph, or ``v7``, time-ordered as the OpenLineage
listener and headwater's agent make them) opens both stores afresh; ``--rounds`` repeats the
settings in turn, so an order effect shows. ``--evict`` first drops the grown file's pages
from the OS page cache (``posix_fadvise(DONTNEED)`` on that file only), as after a load
whose pages memory pressure pushed out.

    .venv/bin/python benchmarks/sqlite_ingest_cache.py PATH [--evict] [--windows 5]
        [--events 200] [--rounds 2] [--configs 65536:0:v4,1048576:0:v4,65536:0:v7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sqlalchemy as sa  # noqa: E402
import synthetic  # noqa: E402

from headwater.agent.run_model import uuid7  # noqa: E402
from headwater.events import ParsedEvent, parse_event  # noqa: E402
from headwater.store import Store  # noqa: E402

SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _job_io(store: Store) -> list[tuple[str, list[str], list[str]]]:
    """About 2,000 of the store's jobs with their current inputs and outputs."""
    with store.engine.connect() as conn:
        jobs = conn.exec_driver_sql("SELECT count(*) FROM jobs").scalar() or 1
        io: dict[str, tuple[list[str], list[str]]] = {}
        for job, direction, dataset in conn.exec_driver_sql(
            "SELECT j.name, c.direction, d.name FROM job_current_io c JOIN jobs j "
            "ON j.id = c.job_id JOIN datasets d ON d.id = c.dataset_id "
            f"WHERE c.job_id % {max(1, jobs // 2000)} = 0"
        ):
            io.setdefault(job, ([], []))[direction == "output"].append(dataset)
    return [(job, inputs, outputs) for job, (inputs, outputs) in io.items()]


def _events(
    io: list[tuple[str, list[str], list[str]]],
    count: int,
    rng: random.Random,
    day: int,
    run_ids: str,
) -> list[ParsedEvent]:
    """START and COMPLETE of ``count // 2`` new runs of the grown store's jobs."""
    out = []
    when = synthetic.START + timedelta(days=day)
    for k in range(count // 2):
        name, inputs, outputs = rng.choice(io)
        started = when + timedelta(seconds=2 * k)
        run_id = (
            uuid7(int(started.timestamp() * 1000))
            if run_ids == "v7"
            else str(uuid.UUID(int=rng.getrandbits(128), version=4))
        )
        run = {"runId": run_id}
        for offset, kind in ((0, "START"), (1, "COMPLETE")):
            out.append(
                parse_event(
                    {
                        "eventType": kind,
                        "eventTime": (when + timedelta(seconds=2 * k + offset)).isoformat(),
                        "run": run,
                        "job": {"namespace": synthetic.NAMESPACE, "name": name},
                        "inputs": [{"namespace": synthetic.NAMESPACE, "name": d} for d in inputs],
                        "outputs": [{"namespace": synthetic.NAMESPACE, "name": o} for o in outputs],
                        "producer": synthetic.PRODUCER,
                        "schemaURL": SCHEMA_URL,
                    }
                )
            )
    return out


def _disk_read_bytes() -> int:
    with open("/proc/self/io") as handle:
        for line in handle:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


def _evict(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _open(url: str, cache_kb: int, mmap_bytes: int, *, migrate: bool) -> Store:
    store = Store.open(url, migrate=migrate)

    @sa.event.listens_for(store.engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:  # after the store's own settings
        dbapi_conn.execute(f"PRAGMA cache_size=-{cache_kb}")
        dbapi_conn.execute(f"PRAGMA mmap_size={mmap_bytes}")

    store.engine.dispose()  # the connections opened so far lack them
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "path",
        help="a grown SQLite store (migrated to the newest schema "
        "first; no server may have it open)",
    )
    parser.add_argument(
        "--evict",
        action="store_true",
        help="drop the grown file from the OS page cache before each setting",
    )
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--events", type=int, default=200, help="events per store per window")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--configs",
        default="65536:0:v4,1048576:0:v4,65536:0:v7",
        help="cache_size KiB:mmap_size bytes:run ids (v4 or v7), comma-separated",
    )
    args = parser.parse_args()
    configs = [
        (int(c.split(":")[0]), int(c.split(":")[1]), (c.split(":") + ["v4"])[2])
        for c in args.configs.split(",")
    ]
    print(
        f"{args.path}: {os.path.getsize(args.path) / 1e9:.2f} GB; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rng = random.Random()  # new run ids on every invocation: none is a stored duplicate
    day = 400  # after the synthetic graph's runs
    with tempfile.TemporaryDirectory(prefix="headwater-ingest-cache-") as scratch:
        for round_ in range(args.rounds):
            for cache_kb, mmap_bytes, run_ids in configs:
                if args.evict:
                    _evict(args.path)
                empty_url = f"sqlite:///{scratch}/empty-{uuid.uuid4().hex[:8]}.db"
                stores = {
                    "empty": _open(empty_url, cache_kb, mmap_bytes, migrate=True),
                    "grown": _open(f"sqlite:///{args.path}", cache_kb, mmap_bytes, migrate=True),
                }
                io = _job_io(stores["grown"])
                cells, starts = [], []
                try:
                    for _ in range(args.windows):
                        day += 1
                        seconds: dict[str, list[float]] = {"empty": [], "grown": []}
                        disk = 0
                        for i, event in enumerate(_events(io, args.events, rng, day, run_ids)):
                            for name in ("empty", "grown") if i % 2 else ("grown", "empty"):
                                read_before = _disk_read_bytes()
                                began = time.perf_counter()
                                stores[name].record([event])
                                took = time.perf_counter() - began
                                seconds[name].append(took)
                                if name == "grown":
                                    disk += _disk_read_bytes() - read_before
                                    if event.event_type == "START":
                                        starts.append(took)
                        rate = {name: len(s) / sum(s) for name, s in seconds.items()}
                        cells.append(
                            f"{rate['grown'] / rate['empty']:.0%} "
                            f"({disk / args.events / 1024:.0f} KiB)"
                        )
                finally:
                    for store in stores.values():
                        store.close()
                print(
                    f"round {round_ + 1}, cache_size {cache_kb >> 10} MB, mmap_size "
                    f"{mmap_bytes >> 20} MB, run ids {run_ids}: grown / empty rate per window "
                    f"of {args.events} "
                    f"(disk read per grown-store event): {', '.join(cells)}; grown START mean "
                    f"{statistics.mean(starts) * 1000:.1f} ms; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
