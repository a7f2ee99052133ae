"""What the headwater agent costs a PySpark job. Prints figures; not pass/fail.

A workload of joins, aggregations and writes (every action's optimized plan has
100+ nodes) runs in interleaved pairs — without the agent and with it, the order
alternating pair by pair — in one SparkSession, after one warm-up of each.
Printed:

* per-action capture time p50/p95/max, in two parts the agent records itself:
  - "listener thread": how long the agent's callback held Spark's listener-bus
    thread (which every other listener shares);
  - "build": how long the agent's worker thread took to capture the plan from the
    JVM (plan JSON, relation facts, metrics) and build the action's events
    (target p95 <= 30 ms). The warm-up round (cold JIT, first look-ups) is
    reported apart from the measured rounds; and the worker's CPU per action —
    its Python thread CPU plus the CPU of the JVM thread serving its py4j calls,
    read around each capture by this benchmark (``ThreadMXBean``, with the cost
    of the reads themselves subtracted) — with the JVM bytes that thread
    allocated per capture;
* the CPU the agent itself uses per action, thread by thread: the Python CPU of
  the listener callback and of the worker (``time.thread_time`` inside the
  agent), the emitter thread's CPU (``/proc/self/task/<tid>/schedstat``), the
  JVM CPU of the thread serving the worker's py4j calls (``ThreadMXBean``), and
  the JVM CPU the listener bus spends on the callback (its shared-queue thread,
  with minus without), py4j's finalizer thread (with minus without: it tells the
  JVM about each py4j object Python drops) — and their sum as a share of the
  workload's wall time and of its CPU (Python + JVM process CPU of the run
  without the agent). On a machine with spare cores this is the honest overhead:
  the agent's work runs beside the job and costs the job time only when it
  competes for a core;
* JVM garbage collection with minus without, per pair, with a bootstrap 90 %
  interval of the median: collections and collection time from the JVM's
  ``GarbageCollectorMXBeans`` and the GC threads' CPU, all read by this benchmark
  at each run's start and end (the agent reads none of it); the bytes allocated
  for the agent (its worker's JVM thread, the listener bus with minus without);
  and the overhead share twice more: with the measured GC difference, and with a
  modelled GC cost (the agent's allocation at the GC CPU per allocated MiB of the
  runs without it);
* wall time per pair and the ratio with/without: the median of the paired ratios
  with a bootstrap 90 % interval of that median, with and without the drain
  after the workload (what a job pays by its ``spark.stop()``), and whole-process
  CPU with/without as a cross-check;
* driver memory added (Python and JVM RSS) and the machine's load average.

Verdicts are drawn only from 5 pairs or more (``MIN_PAIRS``); each says whether the
whole 90 % interval is within the target, beyond it, or straddles it.

Run: ``SPARK_LOCAL_IP=127.0.0.1 .venv/bin/python benchmarks/agent_overhead.py [--pairs 8] [--warmup 1]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int | str = "self") -> int:
    """Resident set size of a process in KiB, from /proc."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def process_cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU of a whole process (all threads), from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def thread_cpu_seconds(native_id: int) -> float:
    """CPU time of one of this process's threads (ns precision from schedstat)."""
    try:
        with open(f"/proc/self/task/{native_id}/schedstat", encoding="ascii") as stat:
            return int(stat.read().split()[0]) / 1e9
    except (FileNotFoundError, ValueError, IndexError):
        return 0.0


def py4j_finalizer_cpu() -> float:
    """CPU of py4j's finalizer thread so far: it tells the JVM about every py4j object
    Python drops (one round trip each), the job's and the agent's alike."""
    import threading

    for thread in threading.enumerate():
        if type(thread).__name__ == "FinalizerWorker" and thread.native_id is not None:
            return thread_cpu_seconds(thread.native_id)
    return 0.0


def cpu_by_thread_name(pid: int) -> dict[str, float]:
    """User + system CPU of a process's live threads, summed by thread name.

    The kernel keeps a JVM thread's name (truncated to 15 characters), so GC,
    JIT compiler and Spark's own threads can be told apart; digits are folded
    (``GC Thread#0`` and ``GC Thread#1`` are one group). Threads that exited
    are missing: their CPU shows only in the process total.
    """
    groups: dict[str, float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8", errors="replace") as comm:
                name = re.sub(r"\d+", "N", comm.read().strip())
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        groups[name] = groups.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return groups


#: JVM threads that collect garbage (G1 names its threads "G1 Conc#0", "GC Thread#0", ...).
_GC_THREADS = re.compile(r"^(GC |G\S* Conc|G\S* Refine|G\S* Service|G\S* Main|VM Thread)")


def gc_cpu(threads: dict[str, float]) -> float:
    """The part of a run's JVM CPU by thread name (cpu_by_thread_name) spent collecting garbage."""
    return sum(value for name, value in threads.items() if _GC_THREADS.match(name))


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of ``values`` (which need not be sorted): the smallest
    value with at least ``fraction`` of them at or below it."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


#: Fewer pairs than this give a bootstrap interval of the median that is one or two
#: of the pairs themselves: no verdict is drawn from it.
MIN_PAIRS = 5


def verdict(low: float, high: float, limit: float, pairs: int) -> str:
    """The claim "at most ``limit``" judged on a 90 % interval ``low``-``high``."""
    if pairs < MIN_PAIRS:
        return f"not settled: {pairs} pairs, at least {MIN_PAIRS} needed for an interval"
    if high <= limit:
        return "met (the whole interval is within it)"
    if low > limit:
        return "NOT met (the whole interval is beyond it)"
    return "not settled (the interval straddles it)"


def bootstrap_median(values: list[float], rounds: int = 4000, seed: int = 4) -> tuple[float, float]:
    """A 90 % percentile-bootstrap interval of the median of ``values``."""
    rng = random.Random(seed)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds)
    )
    return medians[int(0.05 * rounds)], medians[int(0.95 * rounds) - 1]


def build_sources(spark: Any, base: Path, rows: int) -> dict[str, Any]:
    from pyspark.sql import functions as F

    spark.range(rows).select(
        F.col("id"),
        (F.col("id") % 97).alias("customer"),
        (F.col("id") % 31).alias("product"),
        (F.col("id") % 1000 / 10.0).alias("amount"),
    ).write.mode("overwrite").parquet(str(base / "orders"))
    spark.range(97).select(
        F.col("id").alias("customer"), (F.col("id") % 5).alias("region")
    ).write.mode("overwrite").parquet(str(base / "customers"))
    spark.range(31).select(
        F.col("id").alias("product"), (F.col("id") % 7).alias("category")
    ).write.mode("overwrite").parquet(str(base / "products"))
    return {name: spark.read.parquet(str(base / name)) for name in ("orders", "customers", "products")}


def report_frame(sources: dict[str, Any], variant: int, branches: int) -> Any:
    """``branches`` filtered three-way joins, unioned, then aggregated: a plan of 100+ nodes.

    The joins hit small dimension tables (broadcast), so an action runs one shuffle:
    the plan is large for the agent while the job stays cheap to run, which makes
    the agent's share of the wall time as visible as it can be. Each action's
    ``variant`` changes the filters, so no two actions share a plan: every capture
    is of a plan not seen before.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    orders, customers, products = sources["orders"], sources["customers"], sources["products"]
    parts = []
    for k in range(branches):
        parts.append(
            orders.filter((F.col("id") + variant) % branches == k)
            .join(customers, "customer")
            .join(products, "product")
            .select("region", "category", (F.col("amount") * (k + 1)).alias("amount"),
                    F.lit(k).alias("branch"))
        )
    return (
        reduce(DataFrame.unionByName, parts)
        .groupBy("region", "category", "branch")
        .agg(F.sum("amount").alias("revenue"), F.count("*").alias("orders"))
    )


def plan_nodes(frame: Any) -> int:
    """Nodes of the optimized logical plan (toJSON lists one entry per node)."""
    return len(json.loads(frame._jdf.queryExecution().optimizedPlan().toJSON()))


def run_workload(spark: Any, sources: dict[str, Any], out: Path, actions: int,
                 branches: int) -> float:
    """Run ``actions`` actions (3 writes to 1 collect); return the wall time in seconds."""
    started = time.perf_counter()
    for i in range(actions):
        frame = report_frame(sources, i, branches)
        if i % 4 == 3:
            frame.orderBy("branch").limit(5).collect()
        else:
            frame.write.mode("overwrite").parquet(str(out / f"report_{i}"))
    return time.perf_counter() - started


class JvmClock:
    """CPU time of JVM threads, read over py4j outside the timed sections."""

    def __init__(self, spark: Any) -> None:
        management = spark._jvm.java.lang.management.ManagementFactory
        self._threads = management.getThreadMXBean()
        self._gcs = management.getGarbageCollectorMXBeans()
        self._bus_id: int | None = None
        self.find_bus()

    def find_bus(self) -> None:
        """Find the listener-bus thread that calls QueryExecutionListeners.

        Spark starts the shared queue's thread with the queue's first listener, which
        may be the agent's: so it is looked for again at each run's start.
        """
        if self._bus_id is not None:
            return
        ids = self._threads.getAllThreadIds()
        for index in range(len(ids)):
            info = self._threads.getThreadInfo(ids[index])
            if info is not None and str(info.getThreadName()) == "spark-listener-group-shared":
                self._bus_id = int(ids[index])

    def thread_seconds(self, thread_id: int | None) -> float:
        if thread_id is None:
            return 0.0
        nanos = int(self._threads.getThreadCpuTime(thread_id))
        return max(nanos, 0) / 1e9

    def bus_seconds(self) -> float:
        """CPU of the listener-bus thread that calls QueryExecutionListeners."""
        return self.thread_seconds(self._bus_id)

    def gc_seconds(self) -> float:
        """Wall time the JVM's collectors report (pauses and concurrent work)."""
        return self.gc_totals()[1]

    def gc_totals(self) -> tuple[int, float]:
        """Collections and their reported time (s), summed over the JVM's collectors."""
        count, millis = 0, 0
        for index in range(self._gcs.size()):
            bean = self._gcs.get(index)
            count += max(int(bean.getCollectionCount()), 0)
            millis += max(int(bean.getCollectionTime()), 0)
        return count, millis / 1000

    def thread_allocated(self, thread_id: int | None) -> int:
        """Bytes one JVM thread has allocated so far (``com.sun.management.ThreadMXBean``)."""
        if thread_id is None:
            return 0
        return max(int(self._threads.getThreadAllocatedBytes(thread_id)), 0)

    def live_allocated(self) -> int:
        """Bytes allocated by the JVM's live threads so far (threads that exited are missing)."""
        ids = self._threads.getAllThreadIds()
        allocated = self._threads.getThreadAllocatedBytes(ids)
        return sum(max(int(allocated[i]), 0) for i in range(len(allocated)))

    def bus_allocated(self) -> int:
        return self.thread_allocated(self._bus_id)


class WorkerMeter:
    """JVM CPU and allocation of each capture on the agent's worker, read around it.

    Wraps the agent's worker callable (benchmark only; the agent reads nothing of
    this itself). The reads go over the worker's own py4j connection, served by the
    very JVM thread they measure, so :meth:`calibrate` measures what an empty pair
    of reads costs and it is subtracted.
    """

    def __init__(self, clock: JvmClock) -> None:
        self._clock = clock
        #: Per capture in build order: (JVM CPU s, allocated bytes), None when not metered.
        self.records: list[tuple[float, int] | None] = []
        self.read_cpu = 0.0
        self.read_bytes = 0
        self._calibrated = False

    def calibrate(self, thread_id: int | None) -> None:
        """Measure an empty pair of reads; call it on the thread being metered."""
        cpu, allocated = [], []
        for _ in range(20):
            c0, a0 = self._clock.thread_seconds(thread_id), self._clock.thread_allocated(thread_id)
            c1, a1 = self._clock.thread_seconds(thread_id), self._clock.thread_allocated(thread_id)
            cpu.append(c1 - c0)
            allocated.append(a1 - a0)
        self.read_cpu, self.read_bytes = statistics.median(cpu), int(statistics.median(allocated))

    def wrap(self, agent: Any) -> None:
        from headwater.agent.listener import PendingAction

        worker = agent._worker
        handle = worker._handle
        clock = self._clock

        def measured_handle(item: Any) -> None:
            thread_id = agent._tuner.jvm_thread_id
            if not isinstance(item, PendingAction):
                handle(item)
                # DDL captured on the listener thread still records a build (RDD saves do not).
                if type(item).__name__ == "ActionCapture":
                    self.records.append(None)
                return
            if thread_id is None:
                handle(item)  # the first capture tunes the connection: not metered
                self.records.append(None)
                return
            if not self._calibrated:
                self.calibrate(thread_id)
                self._calibrated = True
            c0, a0 = clock.thread_seconds(thread_id), clock.thread_allocated(thread_id)
            handle(item)
            c1, a1 = clock.thread_seconds(thread_id), clock.thread_allocated(thread_id)
            self.records.append((max(c1 - c0 - self.read_cpu, 0.0), max(a1 - a0 - self.read_bytes, 0)))

        worker._handle = measured_handle


@dataclass
class Run:
    """One run of the workload, with or without the agent."""

    wall: float
    python_cpu: float
    jvm_cpu: float
    bus_cpu: float
    gc: float
    drain: float = 0.0
    #: JVM CPU by thread name over the run (see cpu_by_thread_name).
    jvm_threads: dict[str, float] = field(default_factory=dict)
    captures: list[float] = field(default_factory=list)
    capture_cpu: list[float] = field(default_factory=list)
    builds: list[float] = field(default_factory=list)
    build_cpu: list[float] = field(default_factory=list)
    emitter_cpu: float = 0.0
    worker_jvm_cpu: float = 0.0
    #: CPU of py4j's finalizer thread during the run (see py4j_finalizer_cpu).
    finalizer_cpu: float = 0.0
    #: Collections the JVM's GarbageCollectorMXBeans counted during the run.
    gc_count: int = 0
    #: Bytes allocated during the run: by the JVM's live threads, by the listener-bus
    #: thread, and by the JVM thread serving the agent's worker (its whole life).
    allocated: int = 0
    bus_allocated: int = 0
    worker_allocated: int = 0
    #: Per capture (build order): the worker's JVM CPU and allocation (WorkerMeter).
    worker_jvm: list[tuple[float, int] | None] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8, help="measured pairs (one run of each variant)")
    parser.add_argument("--actions", type=int, default=24)
    parser.add_argument("--branches", type=int, default=12, help="union branches per action")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured runs of each variant first")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    import headwater.agent
    from headwater.agent.config import AgentConfig

    load_at_start = os.getloadavg()
    base = Path(tempfile.mkdtemp(prefix="headwater-overhead-"))
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("headwater_agent_overhead")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = spark.sparkContext._gateway.proc.pid
    sources = build_sources(spark, base / "src", args.rows)
    nodes = plan_nodes(report_frame(sources, 0, args.branches))
    clock = JvmClock(spark)

    config = AgentConfig.from_sources(
        {
            "spark.openlineage.transport.type": "file",
            "spark.openlineage.transport.location": str(base / "events.jsonl"),
            "spark.headwater.spool.dir": str(base / "spool"),
        },
        {},
    )

    def measured(out: Path, with_agent: bool) -> Run:
        agent = headwater.agent.attach(spark, config=config) if with_agent else None
        if agent is not None and not agent.enabled:
            raise SystemExit("the agent did not attach; see the log")
        clock.find_bus()
        meter = WorkerMeter(clock)
        if agent is not None:
            meter.wrap(agent)
        gc_count0, gc0 = clock.gc_totals()
        alloc0, bus_alloc0 = clock.live_allocated(), clock.bus_allocated()
        py0, jvm0, bus0 = process_cpu_seconds(), process_cpu_seconds(jvm_pid), clock.bus_seconds()
        finalizer0 = py4j_finalizer_cpu()
        threads0 = cpu_by_thread_name(jvm_pid)
        wall = run_workload(spark, sources, out, args.actions, args.branches)
        run = Run(wall, 0.0, 0.0, 0.0, 0.0)
        if agent is not None:
            drain_started = time.perf_counter()
            agent.flush(120)
            run.drain = time.perf_counter() - drain_started
        # CPU up to here: the workload plus, with the agent, everything it did for it.
        run.python_cpu = process_cpu_seconds() - py0
        run.jvm_cpu = process_cpu_seconds(jvm_pid) - jvm0
        run.bus_cpu = clock.bus_seconds() - bus0
        run.finalizer_cpu = py4j_finalizer_cpu() - finalizer0
        gc_count1, gc1 = clock.gc_totals()
        run.gc, run.gc_count = gc1 - gc0, gc_count1 - gc_count0
        run.allocated = clock.live_allocated() - alloc0
        run.bus_allocated = clock.bus_allocated() - bus_alloc0
        threads1 = cpu_by_thread_name(jvm_pid)
        run.jvm_threads = {name: threads1.get(name, 0.0) - threads0.get(name, 0.0)
                           for name in set(threads0) | set(threads1)}
        if agent is not None:
            metrics = agent.emitter.metrics
            stats = metrics.snapshot()
            run.captures, run.capture_cpu = stats["capture_seconds"], stats["capture_cpu_seconds"]
            run.builds, run.build_cpu = stats["build_seconds"], stats["build_cpu_seconds"]
            # Both threads were started by this attach: all their CPU is this run's.
            run.emitter_cpu = thread_cpu_seconds(stats["threads"].get("emitter", 0))
            # The meter's own reads ran on that thread too: 2 pairs per metered capture,
            # 40 to calibrate.
            reads = 2 * sum(1 for r in meter.records if r is not None) + (40 if meter.records else 0)
            worker_thread = stats["jvm_threads"].get("capture")
            run.worker_jvm_cpu = max(clock.thread_seconds(worker_thread) - reads * meter.read_cpu, 0.0)
            run.worker_allocated = max(clock.thread_allocated(worker_thread) - reads * meter.read_bytes, 0)
            run.worker_jvm = list(meter.records)
            agent.close(10)
        return run

    # Warm-up of both variants: JIT, file system caches, Python imports.
    started = time.perf_counter()
    for _ in range(args.warmup):
        measured(base / "warm", with_agent=False)
    # Memory before the agent was ever attached (but after a full workload without it).
    py_rss_before, jvm_rss_before = rss_kib(), rss_kib(jvm_pid)
    cold = measured(base / "warm", with_agent=True)
    for _ in range(args.warmup - 1):
        measured(base / "warm", with_agent=True)
    print(f"warm-up: {time.perf_counter() - started:.0f} s", flush=True)

    pairs: list[tuple[Run, Run]] = []
    for number in range(args.pairs):
        out = base / f"p{number}"
        # Alternate which variant goes first, so a drift in machine load hits both alike.
        if number % 2 == 0:
            without = measured(out / "a", with_agent=False)
            with_ = measured(out / "b", with_agent=True)
        else:
            with_ = measured(out / "b", with_agent=True)
            without = measured(out / "a", with_agent=False)
        pairs.append((without, with_))
        # Progress, so a run can be sized to the time there is.
        print(f"pair {number + 1}/{args.pairs}: without {without.wall:.1f} s, with {with_.wall:.1f} s; "
              f"{time.perf_counter() - started:.0f} s since the warm-up began", flush=True)
    py_rss_after, jvm_rss_after = rss_kib(), rss_kib(jvm_pid)
    events = sum(1 for _ in open(base / "events.jsonl", encoding="utf-8"))
    spark.stop()
    report(args, nodes, load_at_start, cold, pairs, events,
           (py_rss_before, jvm_rss_before, py_rss_after, jvm_rss_after))


def agent_allocated(without: Run, with_: Run) -> int:
    """JVM bytes allocated for the agent in one run: its worker's JVM thread, and the
    listener-bus thread's allocation with minus without (the callback's share)."""
    return with_.worker_allocated + max(with_.bus_allocated - without.bus_allocated, 0)


def _interval(values: list[float], scale: float, unit: str, digits: int = 1) -> str:
    low, high = bootstrap_median(values)
    return (f"median {statistics.median(values) * scale:+.{digits}f} {unit} "
            f"(90 % interval {low * scale:+.{digits}f} to {high * scale:+.{digits}f})")


def report_gc(pairs: list[tuple[Run, Run]], per_action: int) -> float:
    """Print the JVM's collections with minus without; return GC CPU s per MiB allocated
    in the runs without the agent (for the modelled share)."""
    print("\n-- JVM garbage collection, with minus without, per pair (GarbageCollectorMXBeans, read "
          "by this benchmark over py4j at each run's start and end; GC threads' CPU from /proc)")
    counts = [float(w.gc_count - b.gc_count) for b, w in pairs]
    times = [w.gc - b.gc for b, w in pairs]
    gc_threads = [gc_cpu(w.jvm_threads) - gc_cpu(b.jvm_threads) for b, w in pairs]
    allocated = [float(w.allocated - b.allocated) for b, w in pairs]
    print(f"collections per run:            without {statistics.median(b.gc_count for b, _ in pairs):.0f}; "
          f"difference {_interval(counts, 1, '', 1)}")
    print(f"collection time per run:        without {statistics.median(b.gc for b, _ in pairs) * 1000:.0f} ms; "
          f"difference {_interval(times, 1000, 'ms', 0)}")
    print(f"GC threads' CPU per run:        without "
          f"{statistics.median(gc_cpu(b.jvm_threads) for b, _ in pairs) * 1000:.0f} ms; "
          f"difference {_interval(gc_threads, 1000, 'ms', 0)}; per action "
          f"{_interval([g / per_action for g in gc_threads], 1000, 'ms', 2)}")
    print(f"allocated by live JVM threads:  without "
          f"{statistics.median(b.allocated for b, _ in pairs) / 2**20:.0f} MiB; "
          f"difference {_interval(allocated, 1 / 2**20, 'MiB', 0)}")
    agent_bytes = [float(agent_allocated(b, w)) for b, w in pairs]
    print(f"allocated for the agent:        {statistics.median(agent_bytes) / 2**20:.0f} MiB per run, "
          f"{statistics.median(agent_bytes) / per_action / 1024:.0f} KiB per action "
          "(its worker's JVM thread + the listener bus, with minus without)")
    per_mib = [gc_cpu(b.jvm_threads) / (b.allocated / 2**20) for b, _ in pairs if b.allocated > 0]
    gc_per_mib = statistics.median(per_mib) if per_mib else 0.0
    modelled = gc_per_mib * statistics.median(agent_bytes) / 2**20
    print(f"GC CPU per allocated MiB without the agent: {gc_per_mib * 1e6:.0f} us; so the agent's allocation "
          f"would cost {modelled * 1000:.0f} ms of GC CPU per run ({modelled / per_action * 1000:.2f} ms per action)")
    return gc_per_mib


def _ms(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"p50 {percentile(ms, 0.50):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms"


def report(args: Any, nodes: int, load_at_start: tuple[float, float, float], cold: Run,
           pairs: list[tuple[Run, Run]], events: int, rss: tuple[int, int, int, int]) -> None:
    agent_runs = [w for _, w in pairs]
    base_runs = [b for b, _ in pairs]
    captured = sum(len(r.builds) for r in agent_runs)
    load_now = os.getloadavg()
    print(f"workload: {args.actions} actions x {args.pairs} pairs, {nodes} optimized plan nodes per action, "
          f"{args.rows} order rows, local[2], {os.cpu_count()} CPUs")
    print(f"load average at start {load_at_start[0]:.1f} / {load_at_start[1]:.1f} / {load_at_start[2]:.1f}, "
          f"at end {load_now[0]:.1f} / {load_now[1]:.1f} / {load_now[2]:.1f} (1/5/15 min)")
    print(f"captures: {captured} in the measured runs ({captured // max(len(agent_runs), 1)} per run; "
          f"events written in all: {events})")

    print("\n-- time per captured action")
    print(f"listener thread, wall:       {_ms([s for r in agent_runs for s in r.captures])}")
    print(f"listener thread, Python CPU: {_ms([s for r in agent_runs for s in r.capture_cpu])}")
    print(f"build on the worker, wall:   {_ms([s for r in agent_runs for s in r.builds])}   (target p95 <= 30 ms)")
    print(f"build, worker's Python CPU:  {_ms([s for r in agent_runs for s in r.build_cpu])}")
    metered = [(py, rec) for r in agent_runs for py, rec in zip(r.build_cpu, r.worker_jvm, strict=False)
               if rec is not None]
    if metered:
        print(f"build, worker's JVM CPU:     {_ms([rec[0] for _, rec in metered])}   "
              "(the JVM thread serving the worker's py4j calls)")
        print(f"build, worker's CPU in all:  {_ms([py + rec[0] for py, rec in metered])}   "
              f"(Python + JVM; {len(metered)} captures metered, the first of each run is not)")
        kib = [rec[1] / 1024 for _, rec in metered]
        print(f"JVM bytes the worker's calls allocate per capture: p50 {percentile(kib, 0.5):.0f} KiB, "
              f"p95 {percentile(kib, 0.95):.0f} KiB")
    print(f"warm-up run (cold JIT, first look-ups), build wall: {_ms(cold.builds)}; "
          f"first action {cold.builds[0] * 1000:.1f} ms")

    print("\n-- CPU the agent uses, per captured action (median over the measured runs)")
    per_action = max(captured // max(len(agent_runs), 1), 1)
    listener_py = statistics.median(sum(r.capture_cpu) for r in agent_runs) / per_action
    worker_py = statistics.median(sum(r.build_cpu) for r in agent_runs) / per_action
    emitter_py = statistics.median(r.emitter_cpu for r in agent_runs) / per_action
    worker_jvm = statistics.median(r.worker_jvm_cpu for r in agent_runs) / per_action
    bus_delta = statistics.median(w.bus_cpu - b.bus_cpu for b, w in pairs) / per_action
    finalizer_delta = statistics.median(w.finalizer_cpu - b.finalizer_cpu for b, w in pairs) / per_action
    if not any(r.bus_cpu for b_w in pairs for r in b_w):
        print("  (the listener-bus thread was not found: its line reads 0)")
    total = listener_py + worker_py + emitter_py + worker_jvm + max(bus_delta, 0.0) + max(finalizer_delta, 0.0)
    for name, value in (
        ("listener callback, Python", listener_py),
        ("worker, Python", worker_py),
        ("emitter thread, Python", emitter_py),
        ("JVM thread serving the worker", worker_jvm),
        ("JVM listener bus, with - without", bus_delta),
        ("py4j finalizer, with - without", finalizer_delta),
    ):
        print(f"  {name:34} {value * 1000:7.2f} ms")
    print(f"  {'sum':34} {total * 1000:7.2f} ms")
    gc_extra = statistics.median(gc_cpu(w.jvm_threads) - gc_cpu(b.jvm_threads) for b, w in pairs) / per_action
    print(f"  {'JVM GC threads, with - without':34} {gc_extra * 1000:7.2f} ms   (garbage the agent's calls leave; "
          "a difference of two runs, so noisy)")

    print("\n-- the agent's CPU as a share of the workload (per pair: agent CPU / the run without it)")
    shares_wall, shares_cpu = [], []
    for b, w in pairs:
        agent_cpu = (sum(w.capture_cpu) + sum(w.build_cpu) + w.emitter_cpu + w.worker_jvm_cpu
                     + max(w.bus_cpu - b.bus_cpu, 0.0) + max(w.finalizer_cpu - b.finalizer_cpu, 0.0))
        shares_wall.append(agent_cpu / b.wall)
        shares_cpu.append(agent_cpu / (b.python_cpu + b.jvm_cpu))
    low, high = bootstrap_median(shares_wall)
    print(f"of its wall time: median {100 * statistics.median(shares_wall):.2f} % "
          f"(90 % interval {100 * low:.2f}-{100 * high:.2f} %, pairs min {100 * min(shares_wall):.2f} / "
          f"max {100 * max(shares_wall):.2f} %)")
    low_c, high_c = bootstrap_median(shares_cpu)
    print(f"of its CPU (Python + JVM processes): median {100 * statistics.median(shares_cpu):.2f} % "
          f"(90 % interval {100 * low_c:.2f}-{100 * high_c:.2f} %)")
    gc_per_mib = report_gc(pairs, per_action)
    # Two ways to count the garbage the agent leaves: the measured difference of the
    # GC threads' CPU (signed: a pair where the run with the agent collected less
    # counts as less) and a model — the agent's JVM allocation (worker thread, and
    # the listener bus with minus without) at the GC CPU per allocated MiB the runs
    # without the agent paid. The model is an upper estimate for young-generation
    # collection, whose cost grows with what survives, not with short-lived garbage.
    shares_gc = [share + (gc_cpu(w.jvm_threads) - gc_cpu(b.jvm_threads)) / b.wall
                 for share, (b, w) in zip(shares_wall, pairs, strict=True)]
    low_g, high_g = bootstrap_median(shares_gc)
    print(f"of its wall time, with the measured GC difference (signed): median "
          f"{100 * statistics.median(shares_gc):.2f} % (90 % interval {100 * low_g:.2f}-{100 * high_g:.2f} %)")
    shares_model = [share + gc_per_mib * agent_allocated(b, w) / 2**20 / b.wall
                    for share, (b, w) in zip(shares_wall, pairs, strict=True)]
    low_m, high_m = bootstrap_median(shares_model)
    print(f"of its wall time, with the modelled GC cost of its allocation: median "
          f"{100 * statistics.median(shares_model):.2f} % (90 % interval {100 * low_m:.2f}-{100 * high_m:.2f} %)")

    print("\n-- wall time, paired (with / without, interleaved)")
    print("without: " + ", ".join(f"{b.wall:.2f}" for b in base_runs) + " s")
    print("with:    " + ", ".join(f"{w.wall:.2f}" for w in agent_runs) + " s")
    ratios = [w.wall / b.wall for b, w in pairs]
    drained = [(w.wall + w.drain) / b.wall for b, w in pairs]
    for name, values in (("workload", ratios), ("including the drain", drained)):
        low_r, high_r = bootstrap_median(values)
        print(f"ratio, {name}: median {statistics.median(values):.3f} "
              f"(90 % interval {low_r:.3f}-{high_r:.3f}; pairs min {min(values):.3f} / max {max(values):.3f})")
    print(f"drain after the workload: median {statistics.median(w.drain for w in agent_runs) * 1000:.0f} ms")
    cpu_ratios = [(w.python_cpu + w.jvm_cpu) / (b.python_cpu + b.jvm_cpu) for b, w in pairs]
    low_p, high_p = bootstrap_median(cpu_ratios)
    print(f"process CPU (Python + JVM) ratio: median {statistics.median(cpu_ratios):.3f} "
          f"(90 % interval {low_p:.3f}-{high_p:.3f}); JVM GC time per run: without "
          f"{statistics.median(b.gc for b in base_runs) * 1000:.0f} ms, "
          f"with {statistics.median(w.gc for w in agent_runs) * 1000:.0f} ms")

    print("JVM CPU by thread name, median over pairs of (with - without), largest first (s per run):")
    names = {name for b, w in pairs for name in (*b.jvm_threads, *w.jvm_threads)}
    differences = {
        name: statistics.median(w.jvm_threads.get(name, 0.0) - b.jvm_threads.get(name, 0.0) for b, w in pairs)
        for name in names
    }
    accounted = [sum(w.jvm_threads.values()) - sum(b.jvm_threads.values()) for b, w in pairs]
    process = [w.jvm_cpu - b.jvm_cpu for b, w in pairs]
    for name, value in sorted(differences.items(), key=lambda item: -abs(item[1]))[:8]:
        without = statistics.median(b.jvm_threads.get(name, 0.0) for b, _ in pairs)
        print(f"  {name:18} {value:+7.2f} s   (without the agent {without:6.2f} s)")
    print(f"  live threads in all {statistics.median(accounted):+7.2f} s, the JVM process "
          f"{statistics.median(process):+7.2f} s (the rest ran on threads that exited)")

    py_before, jvm_before, py_after, jvm_after = rss
    print(f"\ndriver RSS added: python {(py_after - py_before) / 1024:+.1f} MiB ({py_after / 1024:.0f} MiB now), "
          f"JVM {(jvm_after - jvm_before) / 1024:+.1f} MiB ({jvm_after / 1024:.0f} MiB now)")

    build_p95 = percentile([s for r in agent_runs for s in r.builds], 0.95) * 1000
    print("\n-- verdict (targets: build p95 <= 30 ms; whole-workload overhead <= 2 %)")
    print(f"build p95 {build_p95:.1f} ms: target <= 30 ms {'met' if build_p95 <= 30 else 'NOT met'}")
    count = len(pairs)
    print(f"agent CPU {100 * statistics.median(shares_wall):.2f} % of the workload's wall time "
          f"(90 % interval {100 * low:.2f}-{100 * high:.2f} %): <= 2 % {verdict(low, high, 0.02, count)}")
    print(f"with the measured GC difference: {100 * statistics.median(shares_gc):.2f} % "
          f"(interval {100 * low_g:.2f}-{100 * high_g:.2f} %): <= 2 % {verdict(low_g, high_g, 0.02, count)}")
    print(f"with the modelled GC cost: {100 * statistics.median(shares_model):.2f} % "
          f"(interval {100 * low_m:.2f}-{100 * high_m:.2f} %): <= 2 % {verdict(low_m, high_m, 0.02, count)}")
    low_r, high_r = bootstrap_median(drained)
    print(f"wall-time ratio with the drain: median {statistics.median(drained):.3f} "
          f"(interval {low_r:.3f}-{high_r:.3f}, {high_r - low_r:.3f} wide): <= 1.02 "
          f"{verdict(low_r, high_r, 1.02, count)}")
    if count % 2:
        print(f"  ({count} pairs: one more ran without the agent first than with it; order effects "
              "(JIT, caches, machine load) fall evenly only on an even count)")


if __name__ == "__main__":
    main()
