"""Ingestion through a real ``headwater serve`` against the bare store path (prints figures).

One invocation measures, on SQLite and on PostgreSQL (a throwaway cluster
from tests/support/pgcluster.py), phase by phase with the two databases
interleaved (the order alternates from run to run):

- single x1, single x16: POST /api/v1/lineage, one event per request, from 1
  and from 16 concurrent keep-alive clients;
- batch: POST /api/v1/lineage/batch, 500 events per request, from 2 clients;
  for each: events/s, request p50/p99, and server CPU per event. On SQLite
  that is the headwater process; on PostgreSQL the headwater process plus
  the cluster's processes (client backends; walwriter, checkpointer,
  autovacuum and exited processes shown apart), from /proc before and after;
- bare: the store path without HTTP, in this process and thread:
  ``Store.record([parse_event(e) for e in lot])`` in lots of 500 (check,
  normalise, content hash, raw-log append, facts, derive), with the very
  events of the batch phase on a database of its own; events/s, and the
  thread CPU per event of each step (decode, parse, facts, transaction; on
  PostgreSQL the cluster's processes too);
- ratios against their targets: batch HTTP / bare >= 0.75, single x16 / bare
  >= 0.40, and PostgreSQL / SQLite CPU per event <= 1.5 for batches and for
  16 clients (the 1-client ratio is printed with no target);
- latency: one client posts a single 35,000-event batch while another posts
  one event every 100 ms until the batch is answered; p50/p95/max of those
  singles, target p95 <= 2 s.

Each throughput phase is cut into slices (``--slices``) that take turns with
the other phases and the other database, so that every figure of a run spans
the same stretch of time and a change of load hits them alike. ``--runs N``
repeats everything on fresh databases and prints each run's ratios and their
spread, which is the noise to quote with them. The load average is printed
at the start, per run and at the end: other work on the same cores moves the
rates much more than the CPU per event. Non-2xx answers, connection errors
and events a 200 batch answer lists as failed are counted and printed next
to the figures they affect.

Events are realistic (~3 KB: a schema facet on input and output and a
columnLineage facet on the output), all distinct within a database,
START/COMPLETE pairs of runs of 50 chained jobs. Run ids are time-ordered
UUIDv7s, as OpenLineage's clients (since 1.15) and headwater's agent generate
them; ``--run-ids v4`` uses random UUIDv4s, the worst case for the store's
run-keyed indexes. The load generator is a minimal asyncio HTTP/1.1 client so
that its own cost stays small next to the server's (both share this
machine's cores).

    python benchmarks/ingest.py                 # both databases, 3 runs
    python benchmarks/ingest.py --db sqlite --runs 1 --batches 10 --big-batch 0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from headwater.agent.run_model import uuid7
from headwater.events import parse_event
from headwater.server.body import decode_json
from headwater.server.run import tune_gc
from headwater.store import Store
from headwater.store.extract import Facts

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.support.pgcluster

BATCH_SIZE = 500
BATCH_CLIENTS = 2
COLUMNS = 12
SINGLE = "/api/v1/lineage"
BATCH = "/api/v1/lineage/batch"

TARGET_BATCH_OVER_BARE = 0.75
TARGET_SINGLE16_OVER_BARE = 0.40
TARGET_PG_OVER_SQLITE_CPU = 1.5
TARGET_P95_SECONDS = 2.0


# --- events ----------------------------------------------------------------------------


_next_run_ms = int(time.time() * 1000)


def new_run_id(kind: str) -> str:
    """A random UUIDv4, or a UUIDv7 one millisecond after the last (so runs are ordered)."""
    global _next_run_ms
    if kind == "v4":
        return str(uuid.uuid4())
    _next_run_ms += 1
    return uuid7(_next_run_ms)


def iter_events(tag: str, run_ids: str) -> Iterator[dict[str, Any]]:
    """Endless distinct ~3 KB RunEvents (START/COMPLETE pairs over 50 chained jobs)."""
    producer = "https://github.com/headwater/headwater/benchmarks"
    facet_base = {"_producer": producer}
    columns = [(f"column_{c}_{'amount' if c % 3 else 'id'}",
                "decimal(18,2)" if c % 3 else "bigint") for c in range(COLUMNS)]
    run_id = ""
    i = 0
    while True:
        job_index = (i // 2) % 50
        if i % 2 == 0:
            run_id = new_run_id(run_ids)
        source = f"/lake/{tag}/layer_{job_index}/table"
        target = f"/lake/{tag}/layer_{job_index + 1}/table"
        schema = {**facet_base,
                  "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                  "fields": [{"name": n, "type": t} for n, t in columns]}
        lineage = {**facet_base,
                   "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/"
                                 "ColumnLineageDatasetFacet.json",
                   "fields": {n: {"inputFields": [{"namespace": "file", "name": source,
                                                   "field": n}]} for n, _ in columns}}
        completed = i % 2 == 1
        yield {
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
        }
        i += 1


def single_bodies(count: int, tag: str, run_ids: str) -> list[bytes]:
    return [json.dumps(e).encode() for e in islice(iter_events(tag, run_ids), count)]


def batch_bodies(count: int, size: int, tag: str, run_ids: str) -> list[bytes]:
    """``count`` events as request bodies of ``size`` events each."""
    events = list(islice(iter_events(tag, run_ids), count))
    return [json.dumps(events[i : i + size]).encode() for i in range(0, count, size)]


# --- a minimal keep-alive HTTP/1.1 client ------------------------------------------------


class Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        self.writer.write(head)
        self.writer.write(body)
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
            self.writer = None


@dataclass
class Answers:
    """What the server answered: statuses, latencies, events a batch answer refused."""

    statuses: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    sent: list[float] = field(default_factory=list)  # perf_counter when each answered one left
    failed_events: int = 0

    def problems(self) -> str:
        """'' when every request got a 2xx and every event was stored, else what went wrong."""
        bad = {s: n for s, n in sorted(self.statuses.items()) if not s.startswith("2")}
        parts = [f"{n} x {s}" for s, n in bad.items()]
        if self.failed_events:
            parts.append(f"{self.failed_events} event(s) in failed_events of 200 answers")
        return "; ".join(parts)


async def timed_post(connection: Connection, path: str, body: bytes, answers: Answers) -> None:
    """Post ``body`` once and add the answer and its latency to ``answers``."""
    started = time.perf_counter()
    try:
        status, reply = await connection.post(path, body)
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
        # A dropped or garbled answer: counted, and the next request reconnects.
        answers.statuses[f"error {exc.__class__.__name__}"] += 1
        await connection.close()
        return
    answers.latencies.append(time.perf_counter() - started)
    answers.sent.append(started)
    answers.statuses[str(status)] += 1
    if path == BATCH and status == 200:
        answers.failed_events += int(json.loads(reply)["summary"]["failed"])


async def drive(port: int, path: str, bodies: list[bytes], clients: int,
                answers: Answers | None = None) -> tuple[float, Answers]:
    """Send ``bodies`` from ``clients`` concurrent connections; (seconds, answers)."""
    queue = list(reversed(bodies))
    answers = answers if answers is not None else Answers()

    async def worker() -> None:
        connection = Connection("127.0.0.1", port)
        try:
            while queue:
                await timed_post(connection, path, queue.pop(), answers)
        finally:
            await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - started, answers


async def singles_during_batch(port: int, big: bytes, singles: list[bytes],
                               interval: float) -> tuple[float, Answers, Answers, bool]:
    """Post ``big`` on one connection and one of ``singles`` every ``interval`` s on another.

    The singles stop when the batch is answered; (the batch's seconds, its
    answers, the singles' answers, whether ``singles`` ran out before that).
    """
    big_answers, small_answers = Answers(), Answers()
    big_connection = Connection("127.0.0.1", port)
    small_connection = Connection("127.0.0.1", port)
    pending = list(reversed(singles))
    started = time.perf_counter()
    batch = asyncio.create_task(timed_post(big_connection, BATCH, big, big_answers))
    try:
        tick = started
        while not batch.done() and pending:
            await timed_post(small_connection, SINGLE, pending.pop(), small_answers)
            tick += interval
            # A reply slower than the interval is followed by the next post at once.
            delay = tick - time.perf_counter()
            if delay > 0:
                await asyncio.wait({batch}, timeout=delay)
        ran_out = not batch.done()
        await batch
    finally:
        await big_connection.close()
        await small_connection.close()
    return time.perf_counter() - started, big_answers, small_answers, ran_out


# --- processes and their CPU -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def _own_cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid``'s threads (0 if it has exited)."""
    try:
        fields = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def _reaped_cpu(pid: int) -> float:
    """CPU seconds of ``pid``'s children that exited and were waited for."""
    fields = _stat_fields(pid)
    return (int(fields[13]) + int(fields[14])) / _TICK


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out.extend(int(c) for c in (task / "children").read_text().split())
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def server_cpu(pid: int) -> float:
    """CPU seconds of a ``headwater serve`` process and its workers (``--workers``)."""
    return _own_cpu(pid) + sum(_own_cpu(child) for child in _children(pid))


def cluster_cpu(postmaster: int) -> tuple[float, float]:
    """(client backends, every other process) CPU seconds of a PostgreSQL cluster.

    A client backend's command line names its client's address; the other
    processes are the postmaster, its background workers, and the children
    that exited (autovacuum workers, closed connections), whose CPU the
    postmaster's reaped-children counters hold once they are waited for.
    """
    backends = 0.0
    other = _own_cpu(postmaster) + _reaped_cpu(postmaster)
    for child in _children(postmaster):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if b"127.0.0.1(" in command:
            backends += _own_cpu(child)
        else:
            other += _own_cpu(child)
    return backends, other


@dataclass
class Database:
    """One database under test in one run: its served store and its bare store."""

    name: str
    http_url: str
    bare_url: str
    postmaster: int | None = None  # PostgreSQL's; its processes' CPU is counted too
    port: int = 0
    pid: int = 0

    def cpu(self) -> tuple[float, float, float]:
        """(headwater serve, database backends, other database processes) CPU seconds."""
        if self.postmaster is None:
            return server_cpu(self.pid), 0.0, 0.0
        return (server_cpu(self.pid), *cluster_cpu(self.postmaster))

    def database_cpu(self) -> float:
        return sum(cluster_cpu(self.postmaster)) if self.postmaster is not None else 0.0


@contextmanager
def headwater_serve(db_url: str, workers: int, max_body: int) -> Iterator[tuple[int, int]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "headwater", "serve", "--db", db_url, "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log",
         "--workers", str(workers), "--max-body-bytes", str(max_body)],
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
            _, errors = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            _, errors = process.communicate()
        # Warnings and tracebacks the server logged are part of the figures' story.
        logged = [line for line in (errors or b"").decode(errors="replace").splitlines()
                  if line.strip() and not line.startswith("headwater serving ")]
        if logged:
            print(f"    !! headwater serve --db {db_url.split('://')[0]} logged "
                  f"{len(logged)} line(s), the last ones:\n"
                  + "\n".join(f"    | {line}" for line in logged[-20:]))


# --- measurements --------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Http:
    """One HTTP phase on one database, summed over its slices."""

    events: int = 0
    seconds: float = 0.0
    answers: Answers = field(default_factory=Answers)
    headwater_cpu: float = 0.0
    backends_cpu: float = 0.0
    other_db_cpu: float = 0.0
    client_cpu: float = 0.0

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_us(self) -> float:
        """Server CPU per event: headwater plus, on PostgreSQL, the cluster's processes."""
        return (self.headwater_cpu + self.backends_cpu + self.other_db_cpu) / self.events * 1e6


@dataclass
class Bare:
    """The bare store path on one database, summed over its slices."""

    events: int = 0
    seconds: float = 0.0
    steps: dict[str, float] = field(  # thread CPU seconds per step
        default_factory=lambda: dict.fromkeys(("decode", "parse", "facts", "transaction"), 0.0))
    database_cpu: float = 0.0

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_us(self) -> float:
        """CPU per event: the steps' thread CPU plus, on PostgreSQL, the cluster's processes."""
        return (sum(self.steps.values()) + self.database_cpu) / self.events * 1e6


def measure_http(db: Database, path: str, bodies: list[bytes], clients: int, events: int,
                 into: Http) -> None:
    before, client = db.cpu(), time.process_time()
    seconds, _ = asyncio.run(drive(db.port, path, bodies, clients, into.answers))
    after, client = db.cpu(), time.process_time() - client
    headwater, backends, other = (b - a for a, b in zip(before, after, strict=True))
    into.events += events
    into.seconds += seconds
    into.headwater_cpu += headwater
    into.backends_cpu += backends
    into.other_db_cpu += other
    into.client_cpu += client


def print_http(label: str, db: Database, m: Http) -> None:
    lat = m.answers.latencies
    print(f"  {label:<16} {db.name:<10} {m.rate:>7,.0f} events/s   p50 "
          f"{percentile(lat, 0.5) * 1e3:7.1f} ms  p99 {percentile(lat, 0.99) * 1e3:7.1f} ms   "
          f"server CPU {m.cpu_us:4.0f} us/event", end="")
    per = 1e6 / m.events
    if db.postmaster is not None:
        print(f" (headwater {m.headwater_cpu * per:.0f} + backends {m.backends_cpu * per:.0f}"
              f" + other pg {m.other_db_cpu * per:.0f})", end="")
    print(f"; client {m.client_cpu * per:.0f}")
    if m.answers.problems():
        print(f"  {'':<16} {db.name:<10} !! {m.answers.problems()}")


def open_bare_store(db: Database, warm_up: bytes) -> Store:
    """The bare store of ``db``, with one lot written to warm it up."""
    store = Store.open(db.bare_url)
    store.record([parse_event(e) for e in decode_json(warm_up)])
    return store


def bare_lots(store: Store, db: Database, bodies: list[bytes], into: Bare) -> None:
    """``Store.record([parse_event(e) for e in lot])`` lot by lot in this thread, no HTTP.

    Decoding each body happens before the clock starts (the store path starts
    at a decoded event); its thread CPU is shown in the breakdown all the
    same. The facts are gathered inside ``record``; they are gathered once
    more, after the clock stops, to time them on their own, and the
    transaction is the rest of ``record`` (group commit, SQL, derive).
    """
    clock = time.thread_time
    steps = into.steps
    database = db.database_cpu()
    for body in bodies:
        t0 = clock()
        raw = decode_json(body)
        t1 = clock()
        started = time.perf_counter()
        parsed = [parse_event(e) for e in raw]
        t2 = clock()
        store.record(parsed)
        t3 = clock()
        into.seconds += time.perf_counter() - started
        Facts.of(parsed)
        t4 = clock()
        into.events += len(parsed)
        steps["decode"] += t1 - t0
        steps["parse"] += t2 - t1
        steps["facts"] += t4 - t3
        steps["transaction"] += (t3 - t2) - (t4 - t3)
    into.database_cpu += db.database_cpu() - database


def print_bare(db: Database, m: Bare) -> None:
    per = {step: seconds / m.events * 1e6 for step, seconds in m.steps.items()}
    line = ", ".join(f"{step} {us:.0f}" for step, us in per.items())
    print(f"  {'bare store 500':<16} {db.name:<10} {m.rate:>7,.0f} events/s   thread CPU "
          f"us/event: {line} = {sum(per.values()):.0f}", end="")
    if db.postmaster is not None:
        print(f"; pg processes {m.database_cpu / m.events * 1e6:.0f}", end="")
    print()


@dataclass
class Latency:
    events: int
    started: float  # perf_counter when the batch was sent
    batch_seconds: float
    batch: Answers
    singles: Answers
    ran_out: bool


def measure_latency(db: Database, big: bytes, events: int, singles: list[bytes],
                    interval: float) -> Latency:
    started = time.perf_counter()
    seconds, batch, small, ran_out = asyncio.run(
        singles_during_batch(db.port, big, singles, interval))
    return Latency(events, started, seconds, batch, small, ran_out)


def print_latency(db: Database, m: Latency) -> None:
    lat = m.singles.latencies
    p95 = percentile(lat, 0.95)
    verdict = "meets" if p95 <= TARGET_P95_SECONDS else "MISSES"
    slowest = max(range(len(lat)), key=lat.__getitem__, default=None)
    when = ("" if slowest is None else
            f", sent {m.singles.sent[slowest] - m.started:.1f} s after the batch")
    print(f"  {db.name:<10} batch of {m.events:,} answered in {m.batch_seconds:5.1f} s "
          f"({m.events / m.batch_seconds:,.0f} events/s); {len(lat)} singles meanwhile: "
          f"p50 {percentile(lat, 0.5) * 1e3:,.0f} ms, p95 {p95 * 1e3:,.0f} ms, "
          f"max {max(lat, default=float('nan')) * 1e3:,.0f} ms{when} "
          f"({verdict} p95 <= {TARGET_P95_SECONDS:g} s)")
    for what, answers in (("batch", m.batch), ("singles", m.singles)):
        if answers.problems():
            print(f"  {db.name:<10} !! {what}: {answers.problems()}")
    if m.ran_out:
        print(f"  {db.name:<10} !! ran out of single events before the batch was answered")


# --- one run -------------------------------------------------------------------------------


@dataclass
class Workload:
    warm_singles: list[bytes]
    warm_batches: list[bytes]
    single1: list[bytes]
    single16: list[bytes]
    batches: list[bytes]
    batch_events: int
    big: bytes
    big_events: int
    latency_singles: list[bytes]


@dataclass
class RunFigures:
    http: dict[tuple[str, str], Http] = field(default_factory=dict)  # (phase, db)
    bare: dict[str, Bare] = field(default_factory=dict)
    latency: dict[str, Latency] = field(default_factory=dict)


PHASES = (("single x1", SINGLE, 1), ("single x16", SINGLE, 16),
          (f"batch {BATCH_SIZE} x{BATCH_CLIENTS}", BATCH, BATCH_CLIENTS))


def one_run(number: int, dbs: list[Database], work: Workload, args: argparse.Namespace,
            max_body: int) -> RunFigures:
    """Serve each database, then run every phase on each, in slices.

    A ratio of two rates measured minutes apart on a shared machine mostly
    measures how the load changed in between. So each throughput phase is cut
    into ``args.slices`` slices, and slice k of every phase on every database
    runs before slice k + 1 of any: each figure spans the whole run.
    """
    # The database measured second gets a slightly warmer machine; alternate.
    order = dbs if number % 2 else list(reversed(dbs))
    figures = RunFigures()
    print(f"\nrun {number}: load average {os.getloadavg()[0]:.2f} at start; "
          f"order {' then '.join(d.name for d in order)}, {args.slices} slices")
    with ExitStack() as stack:
        bare_stores: dict[str, Store] = {}
        for db in order:
            db.port, db.pid = stack.enter_context(
                headwater_serve(db.http_url, args.workers, max_body))
            asyncio.run(drive(db.port, SINGLE, work.warm_singles, 16))
            asyncio.run(drive(db.port, BATCH, work.warm_batches, BATCH_CLIENTS))
            bare_stores[db.name] = stack.enter_context(
                open_bare_store(db, work.warm_batches[0]))
            figures.bare[db.name] = Bare()
            for label, _, _ in PHASES:
                figures.http[(label, db.name)] = Http()
        phase_bodies = {"single x1": work.single1, "single x16": work.single16}
        for k in range(args.slices):
            for label, path, clients in PHASES:
                bodies = _slice(phase_bodies.get(label, work.batches), k, args.slices)
                events = len(bodies) * (BATCH_SIZE if path == BATCH else 1)
                for db in order:
                    measure_http(db, path, bodies, clients, events,
                                 figures.http[(label, db.name)])
            for db in order:
                bare_lots(bare_stores[db.name], db, _slice(work.batches, k, args.slices),
                          figures.bare[db.name])
        for label, _, _ in PHASES:
            for db in order:
                print_http(label, db, figures.http[(label, db.name)])
        for db in order:
            print_bare(db, figures.bare[db.name])
        if work.big_events:
            print(f"  singles every {args.interval * 1e3:.0f} ms while a "
                  f"{work.big_events:,}-event batch ({len(work.big) / 1e6:.0f} MB) is written:")
            for db in order:
                figures.latency[db.name] = m = measure_latency(
                    db, work.big, work.big_events, work.latency_singles, args.interval)
                print_latency(db, m)
    return figures


def _slice(items: list[bytes], k: int, slices: int) -> list[bytes]:
    """The ``k``-th of ``slices`` consecutive, nearly equal parts of ``items``."""
    return items[k * len(items) // slices : (k + 1) * len(items) // slices]


# --- ratios --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ratio:
    label: str
    value: Callable[[RunFigures], float]
    target: float | None = None
    at_least: bool = True  # the target is a minimum (else a maximum)

    def verdict(self, value: float) -> str:
        if self.target is None:
            return ""
        ok = value >= self.target if self.at_least else value <= self.target
        sign = ">=" if self.at_least else "<="
        return f"{'meets' if ok else 'MISSES'} {sign} {self.target:g}"


def ratios(names: list[str]) -> list[Ratio]:
    batch = PHASES[2][0]
    out: list[Ratio] = []
    for name in names:
        out += [
            Ratio(f"{name}: batch HTTP / bare store events/s",
                  lambda f, n=name: f.http[(batch, n)].rate / f.bare[n].rate,
                  TARGET_BATCH_OVER_BARE),
            Ratio(f"{name}: single x16 / bare store events/s",
                  lambda f, n=name: f.http[("single x16", n)].rate / f.bare[n].rate,
                  TARGET_SINGLE16_OVER_BARE),
            Ratio(f"{name}: single x1 / bare store events/s",
                  lambda f, n=name: f.http[("single x1", n)].rate / f.bare[n].rate),
            # The same question as the first, asked of CPU time, which other
            # work on the machine moves much less than wall-clock rates.
            Ratio(f"{name}: bare store / batch HTTP CPU per event",
                  lambda f, n=name: f.bare[n].cpu_us / f.http[(batch, n)].cpu_us),
        ]
    if len(names) == 2:
        for label, target in ((batch, TARGET_PG_OVER_SQLITE_CPU),
                              ("single x16", TARGET_PG_OVER_SQLITE_CPU), ("single x1", None)):
            out.append(Ratio(
                f"PostgreSQL / SQLite server CPU per event, {label}",
                lambda f, p=label: f.http[(p, "PostgreSQL")].cpu_us / f.http[(p, "SQLite")].cpu_us,
                target, at_least=False))
    return out


def print_ratios(number: int, figures: RunFigures, names: list[str]) -> None:
    print(f"  ratios, run {number}:")
    for ratio in ratios(names):
        value = ratio.value(figures)
        print(f"    {ratio.label:<55} {value:5.2f}   {ratio.verdict(value)}")


def print_spread(runs: list[RunFigures], names: list[str]) -> None:
    print(f"\nacross {len(runs)} runs (each run's value; mean; spread = (max - min) / mean):")
    for ratio in ratios(names):
        values = [ratio.value(f) for f in runs]
        mean = statistics.fmean(values)
        print(f"  {ratio.label:<55} " + " ".join(f"{v:5.2f}" for v in values)
              + f"   mean {mean:5.2f}  spread {(max(values) - min(values)) / mean:4.0%}"
              f"   {ratio.verdict(mean)}")
    for name in names:
        p95s = [percentile(f.latency[name].singles.latencies, 0.95) for f in runs
                if name in f.latency]
        if p95s:
            label = f"{name}: p95 (s) of singles during the big batch"
            print(f"  {label:<55} " + " ".join(f"{v:5.2f}" for v in p95s)
                  + f"   max {max(p95s):5.2f}   "
                  + ("meets" if max(p95s) <= TARGET_P95_SECONDS else "MISSES")
                  + f" <= {TARGET_P95_SECONDS:g}")


# --- main ----------------------------------------------------------------------------------


def workload(args: argparse.Namespace) -> Workload:
    """Every request body, made before anything is timed.

    Each run writes to fresh databases, so the runs and the two databases
    share the bodies; the bare store writes the batch phase's very events.
    """
    big_events = args.big_batch
    # One single every interval for as long as the big batch could take at 300 events/s.
    latency_singles = (int(big_events / 300 / args.interval) + 50) if big_events else 0
    return Workload(
        warm_singles=single_bodies(200, "warm", args.run_ids),
        warm_batches=batch_bodies(2 * BATCH_SIZE, BATCH_SIZE, "warmbatch", args.run_ids),
        single1=single_bodies(args.single1_events, "single1", args.run_ids),
        single16=single_bodies(args.single16_events, "single16", args.run_ids),
        batches=batch_bodies(args.batches * BATCH_SIZE, BATCH_SIZE, "batch", args.run_ids),
        batch_events=args.batches * BATCH_SIZE,
        big=(batch_bodies(big_events, big_events, "big", args.run_ids)[0]
             if big_events else b""),
        big_events=big_events,
        latency_singles=single_bodies(latency_singles, "during", args.run_ids),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--runs", type=int, default=3,
                        help="repeat the whole comparison on fresh databases (default 3)")
    parser.add_argument("--single1-events", type=int, default=1_000,
                        help="events posted one per request by 1 client (default 1,000)")
    parser.add_argument("--single16-events", type=int, default=6_000,
                        help="events posted one per request by 16 clients (default 6,000)")
    parser.add_argument("--batches", type=int, default=40,
                        help=f"{BATCH_SIZE}-event batches posted by {BATCH_CLIENTS} clients, "
                             "and lots the bare store writes (default 40)")
    parser.add_argument("--big-batch", type=int, default=35_000,
                        help="events of the batch the latency test posts; 0 skips it")
    parser.add_argument("--interval", type=float, default=0.1,
                        help="seconds between singles during the big batch (default 0.1)")
    parser.add_argument("--slices", type=int, default=4,
                        help="slices each throughput phase is cut into, so that the phases "
                             "and databases alternate through a run (default 4)")
    parser.add_argument("--workers", type=int, default=1,
                        help="server processes (headwater serve --workers)")
    parser.add_argument("--run-ids", choices=["v7", "v4"], default="v7",
                        help="time-ordered UUIDv7 run ids (what OpenLineage clients send) "
                             "or random UUIDv4")
    args = parser.parse_args()

    # The bare store runs in this process, with the collector set up as served.
    tune_gc()
    began = time.perf_counter()
    print(f"headwater ingest benchmark: {os.cpu_count()} cores, load average "
          f"{'/'.join(f'{v:.2f}' for v in os.getloadavg())} (1/5/15 min) at start; "
          f"UUID{args.run_ids} run ids")
    work = workload(args)
    size = sum(len(body) for body in work.warm_batches) / (2 * BATCH_SIZE)
    print(f"events {size:,.0f} bytes on average; "
          f"per run and database: {len(work.single1):,} single x1, {len(work.single16):,} "
          f"single x16, {work.batch_events:,} batched (and the same through the bare store), "
          f"big batch {work.big_events:,}; headwater serve --workers {args.workers}")
    max_body = max(10 * 1024 * 1024, 2 * len(work.big))

    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="headwater-bench-"))
        cluster = None
        if args.db in ("postgresql", "both"):
            from tests.support.pgcluster import find_pg_bin, start_cluster

            if find_pg_bin() is None:
                print("PostgreSQL: server binaries not installed; skipped")
            else:
                cluster = start_cluster()
                stack.callback(cluster.stop)
                postmaster = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
        runs: list[RunFigures] = []
        names: list[str] = []
        for number in range(1, args.runs + 1):
            dbs: list[Database] = []
            if args.db in ("sqlite", "both"):
                dbs.append(Database("SQLite", f"sqlite:///{tmp}/http{number}.db",
                                    f"sqlite:///{tmp}/bare{number}.db"))
            if cluster is not None:
                dbs.append(Database("PostgreSQL", cluster.create_database(f"http{number}"),
                                    cluster.create_database(f"bare{number}"), postmaster))
            names = [d.name for d in dbs]
            figures = one_run(number, dbs, work, args, max_body)
            print_ratios(number, figures, names)
            runs.append(figures)
        if names:
            print_spread(runs, names)
    print(f"\nload average {'/'.join(f'{v:.2f}' for v in os.getloadavg())} (1/5/15 min) at end; "
          f"{time.perf_counter() - began:.0f} s in all")


if __name__ == "__main__":
    main()
