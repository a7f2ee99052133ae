"""Ingestion throughput and latency of a real ``headwater serve`` process (prints figures).

What it measures, on SQLite and on PostgreSQL (a throwaway cluster from
tests/support/pgcluster.py):

- single: POST /api/v1/lineage, one event per request, from 16 concurrent
  keep-alive clients; events/s and per-request p50/p99 latency;
- batch: POST /api/v1/lineage/batch with 500 events per request from 2
  concurrent clients; events/s and per-request p50/p99 latency;
- where the time goes, in-process and without HTTP: thread CPU per event of
  each step (decode, validate, hash, gather facts, the transaction) for lots
  of 16 events (coalesced single POSTs) and of 500 (a batch);
- on SQLite, the issue's required minimum alone (decode, check, content hash,
  append to the raw event log, nothing else) against the CPU budget per event
  the batch target leaves on this machine's cores.

Events are realistic (~3 KB: a schema facet on input and output and a
columnLineage facet on the output), all distinct, START/COMPLETE pairs of
runs of 50 chained jobs. Run ids are time-ordered UUIDv7s, as OpenLineage's
clients (since 1.15) and headwater's agent generate them; ``--run-ids v4``
uses random UUIDv4s instead, the worst case for the store's run-keyed indexes
(every new run lands on another index page). The load generator is a minimal asyncio HTTP/1.1
client so that the client's own cost stays small next to the server's
(both share this machine's cores).

Targets (issue 2, SQLite on 2 cores): >= 10,000 events/s batched,
>= 2,000 events/s single.

    python benchmarks/ingest.py                # both databases
    python benchmarks/ingest.py --db sqlite --single-events 4000 --batches 20 --workers 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from headwater.agent.run_model import uuid7

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.support.pgcluster

TARGET_BATCH_EPS = 10_000
TARGET_SINGLE_EPS = 2_000
BATCH_SIZE = 500
SINGLE_CLIENTS = 16
BATCH_CLIENTS = 2
COLUMNS = 12
RUN_IDS = "v7"  # or "v4" (--run-ids)


# --- events ----------------------------------------------------------------------------


_next_run_ms = int(time.time() * 1000)


def new_run_id(kind: str) -> str:
    """A random UUIDv4, or a UUIDv7 one millisecond after the last (so runs are ordered)."""
    global _next_run_ms
    if kind == "v4":
        return str(uuid.uuid4())
    _next_run_ms += 1
    return uuid7(_next_run_ms)


def make_events(count: int, tag: str) -> list[dict[str, Any]]:
    """``count`` distinct ~3 KB RunEvents (START/COMPLETE pairs over 50 chained jobs)."""
    producer = "https://github.com/headwater/headwater/benchmarks"
    facet_base = {"_producer": producer}
    events = []
    run_id = ""
    for i in range(count):
        job_index = (i // 2) % 50
        if i % 2 == 0:
            run_id = new_run_id(RUN_IDS)
        source = f"/lake/{tag}/layer_{job_index}/table"
        target = f"/lake/{tag}/layer_{job_index + 1}/table"
        columns = [(f"column_{c}_{'amount' if c % 3 else 'id'}", "decimal(18,2)" if c % 3 else
                    "bigint") for c in range(COLUMNS)]
        schema = {**facet_base,
                  "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                  "fields": [{"name": n, "type": t} for n, t in columns]}
        lineage = {**facet_base,
                   "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/"
                                 "ColumnLineageDatasetFacet.json",
                   "fields": {n: {"inputFields": [{"namespace": "file", "name": source,
                                                   "field": n}]} for n, _ in columns}}
        completed = i % 2 == 1
        events.append({
            "eventType": "COMPLETE" if completed else "START",
            "eventTime": f"2026-11-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:"
                         f"{i % 60:02d}.{i % 1000:03d}Z",
            "run": {"runId": run_id, "facets": {}},
            "job": {"namespace": "bench", "name": f"bench.layer_{job_index}", "facets": {}},
            "inputs": [{"namespace": "file", "name": source, "facets": {"schema": schema}}],
            "outputs": [{"namespace": "file", "name": target,
                         "facets": {"schema": schema, **({"columnLineage": lineage}
                                                         if completed else {})}}],
            "producer": producer,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        })
    return events


# --- a minimal keep-alive HTTP/1.1 client ------------------------------------------------


class Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        self.writer.write(head + body)
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return status

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()


async def drive(
    port: int, path: str, bodies: list[bytes], clients: int
) -> tuple[float, list[float]]:
    """Send ``bodies`` from ``clients`` concurrent connections; (seconds, latencies)."""
    queue = list(reversed(bodies))
    latencies: list[float] = []

    async def worker() -> None:
        connection = Connection("127.0.0.1", port)
        try:
            while queue:
                body = queue.pop()
                started = time.perf_counter()
                status = await connection.post(path, body)
                latencies.append(time.perf_counter() - started)
                if status != 200:
                    raise RuntimeError(f"{path} answered {status}")
        finally:
            await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - started, latencies


# --- server process ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stat_cpu(path: Path) -> float:
    fields = path.read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out.extend(int(c) for c in (task / "children").read_text().split())
    return out


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(every server process, event-loop threads) user + system CPU seconds, from /proc.

    The event-loop (main) thread of a server process does HTTP parsing, body
    reading and JSON decoding; its thread pool does validation and the store's
    work. With ``--workers`` the worker processes are the supervisor's children.
    """
    whole = loop = 0.0
    for proc in [pid, *_children(pid)]:
        whole += _stat_cpu(Path(f"/proc/{proc}/stat"))
        loop += _stat_cpu(Path(f"/proc/{proc}/task/{proc}/stat"))
    return whole, loop


@contextmanager
def headwater_serve(db_url: str, workers: int = 1) -> Iterator[tuple[int, int]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "headwater", "serve", "--db", db_url, "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log",
         "--workers", str(workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(process.stderr.read().decode() if process.stderr else "died")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("headwater serve did not start") from None
                time.sleep(0.1)
        yield port, process.pid
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- measurements --------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(label: str, events: int, seconds: float, latencies: list[float], target: int,
           before: tuple[float, float], after: tuple[float, float]) -> None:
    rate = events / seconds
    verdict = "meets" if rate >= target else "BELOW"
    print(f"  {label:<28} {rate:>9,.0f} events/s   p50 {percentile(latencies, 0.5) * 1e3:7.1f} ms"
          f"   p99 {percentile(latencies, 0.99) * 1e3:7.1f} ms   ({verdict} target {target:,})")
    # CPU per event is steadier than wall-clock rates when other work shares the cores.
    server_cpu, loop_cpu = after[0] - before[0], after[1] - before[1]
    print(f"  {'':<28} server CPU {server_cpu / events * 1e6:,.0f} us/event "
          f"(event loop {loop_cpu / events * 1e6:,.0f}, thread pool "
          f"{(server_cpu - loop_cpu) / events * 1e6:,.0f}; "
          f"= {events / max(server_cpu, 1e-9):,.0f} events per server CPU-second)")


def bench_http(db_url: str, single_events: int, batches: int, workers: int) -> None:
    single = [json.dumps(e).encode() for e in make_events(single_events, "single")]
    batch_events = make_events(batches * BATCH_SIZE, "batch")
    batch_bodies = [json.dumps(batch_events[i : i + BATCH_SIZE]).encode()
                    for i in range(0, len(batch_events), BATCH_SIZE)]
    warm = [json.dumps(e).encode() for e in make_events(200, "warmup")]
    with headwater_serve(db_url, workers) as (port, pid):
        asyncio.run(drive(port, "/api/v1/lineage", warm, SINGLE_CLIENTS))
        cpu = cpu_seconds(pid)
        seconds, latencies = asyncio.run(drive(port, "/api/v1/lineage", single, SINGLE_CLIENTS))
        report(f"single x{SINGLE_CLIENTS} clients", len(single), seconds, latencies,
               TARGET_SINGLE_EPS, cpu, cpu_seconds(pid))
        cpu = cpu_seconds(pid)
        seconds, latencies = asyncio.run(
            drive(port, "/api/v1/lineage/batch", batch_bodies, BATCH_CLIENTS))
        report(f"batch {BATCH_SIZE} x{BATCH_CLIENTS} clients", len(batch_events), seconds,
               latencies, TARGET_BATCH_EPS, cpu, cpu_seconds(pid))


def _tune_gc_as_served() -> None:
    """Set the collector up as ``headwater serve`` does (if this checkout does)."""
    try:
        from headwater.server.app import tune_gc
    except ImportError:  # a checkout from before the server tuned its collector
        return
    tune_gc()


def _lot_bodies(count: int, lot: int, tag: str) -> list[bytes]:
    """Request bodies of ``lot`` events each: ``count`` events and one lot to warm up."""
    events = make_events(count + lot, tag)
    return [json.dumps(events[i : i + lot]).encode() for i in range(0, len(events), lot)]


def _print_steps(lot: int, spent: dict[str, float], count: int) -> float:
    """Print the thread CPU per event of each step; return their sum (us/event)."""
    per = {step: seconds / count * 1e6 for step, seconds in spent.items()}
    total = sum(per.values())
    print(f"  lots of {lot:<3} (thread CPU)      " + ", ".join(
        f"{step} {us:.0f}" for step, us in per.items())
        + f" = {total:.0f} us/event ({1e6 / total:,.0f} events per CPU-second)")
    return total


def _timed_parse(body: bytes) -> tuple[list[Any], tuple[float, float, float]]:
    """Decode, check and parse one body as the server does; the parsed events and
    the thread CPU of each of the three steps."""
    from headwater.server.body import decode_json
    from headwater.server.ingest import check_event
    from headwater.store.parsing import parse_event

    clock = time.thread_time
    t0 = clock()
    decoded = decode_json(body)
    t1 = clock()
    checked = [check_event(e) for e in decoded]
    t2 = clock()
    parsed = [parse_event(e) for e in checked]
    return parsed, (t1 - t0, t2 - t1, clock() - t2)


def bench_breakdown(db_url: str, batches: int) -> None:
    """Where the CPU goes per event, without HTTP, step by step, lot by lot.

    Each lot (the events of one batch request, or one coalesced lot of single
    POSTs) is decoded, checked and stored before the next, as the server does,
    with this thread's CPU time per step. Hashing and gathering facts happen
    inside ``record_events``; they are timed on their own first, and the
    transaction is the rest of ``record_events``. The collector is set up as
    ``headwater serve`` sets it up.
    """
    from headwater.server.body import decode_json
    from headwater.server.ingest import check_event
    from headwater.store import Store
    from headwater.store.extract import Facts

    _tune_gc_as_served()
    clock = time.thread_time
    for lot, count in ((16, 2_000), (BATCH_SIZE, max(batches, 4) * BATCH_SIZE)):
        bodies = _lot_bodies(count, lot, f"breakdown{lot}")
        spent = dict.fromkeys(("decode", "validate", "hash", "facts", "transaction"), 0.0)
        store = Store.open(db_url, migrate=True)
        try:
            store.record_events([check_event(e) for e in decode_json(bodies[0])])  # warm up
            for body in bodies[1:]:
                parsed, (decode, validate, hashing) = _timed_parse(body)
                t0 = clock()
                Facts.of(parsed)
                facts = clock() - t0
                del parsed
                again = [check_event(e) for e in decode_json(body)]
                t1 = clock()
                store.record_events(again)
                recorded = clock() - t1
                spent["decode"] += decode
                spent["validate"] += validate
                spent["hash"] += hashing
                spent["facts"] += facts
                spent["transaction"] += recorded - hashing - facts
        finally:
            store.close()
        _print_steps(lot, spent, count)


def bench_floor(db_url: str, batches: int) -> None:
    """What the issue's required minimum alone costs per event here, lot by lot.

    Every stored event must at least be decoded, checked, hashed (content-hash
    dedupe) and appended to the raw event log; this times exactly that, with
    the store's own functions and the store's own ``events`` rows and insert,
    in ``BEGIN IMMEDIATE`` transactions of one lot each, and no other table.
    Set against the target's CPU budget per event, it shows how much is left
    for everything else (facts, the model's tables, derivation, HTTP).
    """
    from datetime import UTC, datetime

    from headwater.store import Store
    from headwater.store import tables as t
    from headwater.store.transactions import write_transaction
    from headwater.store.writer import Writer, event_rows

    _tune_gc_as_served()
    clock = time.thread_time
    count = max(batches, 4) * BATCH_SIZE
    bodies = _lot_bodies(count, BATCH_SIZE, "floor")
    spent = dict.fromkeys(("decode", "validate", "hash", "raw-log append"), 0.0)
    store = Store.open(db_url, migrate=True)
    writer = Writer(store.dialect)
    insert = t.events.insert()
    try:
        for number, body in enumerate(bodies):
            parsed, steps = _timed_parse(body)
            t0 = clock()
            rows = event_rows(parsed, datetime.now(UTC).replace(tzinfo=None))
            with write_transaction(store.engine) as conn:
                writer.bulk(conn, "events", t.events, insert, rows)
            append = clock() - t0
            if number == 0:
                continue  # warm-up
            for step, seconds in zip(spent, (*steps, append), strict=True):
                spent[step] += seconds
    finally:
        store.close()
    total = _print_steps(BATCH_SIZE, spent, count)
    cores = os.cpu_count() or 1
    budget = cores * 1e6 / TARGET_BATCH_EPS
    print(f"  the batch target ({TARGET_BATCH_EPS:,} events/s on {cores} cores) allows at most "
          f"{budget:.0f} us of CPU per event for all the work (HTTP, the benchmark's client "
          f"and the server's processes share the cores); the minimum above takes "
          f"{total / budget:.0%} of it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--single-events", type=int, default=6_000)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="server processes (headwater serve --workers); each count is run")
    parser.add_argument("--run-ids", choices=["v7", "v4"], default="v7",
                        help="time-ordered UUIDv7 run ids (what OpenLineage clients send) "
                             "or random UUIDv4")
    args = parser.parse_args()
    global RUN_IDS
    RUN_IDS = args.run_ids

    sample = json.dumps(make_events(2, "size")[1])
    print(f"headwater ingest benchmark: events ~{len(sample):,} bytes, UUID{RUN_IDS} run ids, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")

    if args.db in ("sqlite", "both"):
        with tempfile.TemporaryDirectory(prefix="headwater-bench-") as tmp:
            for workers in args.workers:
                print(f"SQLite (WAL), through `headwater serve --workers {workers}`:")
                bench_http(f"sqlite:///{tmp}/http{workers}.db", args.single_events, args.batches,
                           workers)
            print("SQLite, in-process breakdown:")
            bench_breakdown(f"sqlite:///{tmp}/direct.db", max(4, args.batches // 4))
            print("SQLite, the required minimum alone (decode, check, hash, append to the raw "
                  "log; no other table):")
            bench_floor(f"sqlite:///{tmp}/floor.db", max(4, args.batches // 4))

    if args.db in ("postgresql", "both"):
        from tests.support.pgcluster import find_pg_bin, start_cluster

        if find_pg_bin() is None:
            print("PostgreSQL: server binaries not installed; skipped")
            return
        cluster = start_cluster()
        try:
            for workers in args.workers:
                print(f"PostgreSQL, through `headwater serve --workers {workers}`:")
                bench_http(cluster.create_database(f"bench_http{workers}"), args.single_events,
                           args.batches, workers)
            print("PostgreSQL, in-process breakdown:")
            bench_breakdown(cluster.create_database("bench_direct"), max(4, args.batches // 4))
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
