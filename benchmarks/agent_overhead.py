"""What the headwater agent costs a PySpark job (issue 4). Prints figures; not pass/fail.

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
    reported apart from the measured rounds;
* the CPU the agent itself uses per action, thread by thread: the Python CPU of
  the listener callback and of the worker (``time.thread_time`` inside the
  agent), the emitter thread's CPU (``/proc/self/task/<tid>/schedstat``), the
  JVM CPU of the thread serving the worker's py4j calls (``ThreadMXBean``), and
  the JVM CPU the listener bus spends on the callback (its shared-queue thread,
  with minus without) — and their sum as a share of the workload's wall time and
  of its CPU (Python + JVM process CPU of the run without the agent). On a machine
  with spare cores this is the honest overhead: the agent's work runs beside the
  job and costs the job time only when it competes for a core;
* wall time per pair and the ratio with/without: the median of the paired ratios
  with a bootstrap 90 % interval of that median, with and without the drain
  after the workload (what a job pays by its ``spark.stop()``), and whole-process
  CPU with/without as a cross-check;
* driver memory added (Python and JVM RSS) and the machine's load average.

Run: ``SPARK_LOCAL_IP=127.0.0.1 .venv/bin/python benchmarks/agent_overhead.py [--pairs 8]``
"""

from __future__ import annotations

import argparse
import json
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
    """Nearest-rank percentile of ``values`` (which need not be sorted)."""
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.5)))
    return ordered[min(rank, len(ordered)) - 1]


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
        return sum(int(self._gcs.get(i).getCollectionTime()) for i in range(self._gcs.size())) / 1000


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=8, help="measured pairs (one run of each variant)")
    parser.add_argument("--actions", type=int, default=24)
    parser.add_argument("--branches", type=int, default=12, help="union branches per action")
    parser.add_argument("--rows", type=int, default=20_000)
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
        py0, jvm0, bus0, gc0 = process_cpu_seconds(), process_cpu_seconds(jvm_pid), clock.bus_seconds(), clock.gc_seconds()
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
        run.gc = clock.gc_seconds() - gc0
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
            run.worker_jvm_cpu = clock.thread_seconds(stats["jvm_threads"].get("capture"))
            agent.close(10)
        return run

    # Warm-up of both variants: JIT, file system caches, Python imports.
    measured(base / "warm", with_agent=False)
    # Memory before the agent was ever attached (but after a full workload without it).
    py_rss_before, jvm_rss_before = rss_kib(), rss_kib(jvm_pid)
    cold = measured(base / "warm", with_agent=True)

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
    py_rss_after, jvm_rss_after = rss_kib(), rss_kib(jvm_pid)
    events = sum(1 for _ in open(base / "events.jsonl", encoding="utf-8"))
    spark.stop()
    report(args, nodes, load_at_start, cold, pairs, events,
           (py_rss_before, jvm_rss_before, py_rss_after, jvm_rss_after))


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
    print(f"warm-up run (cold JIT, first look-ups), build wall: {_ms(cold.builds)}; "
          f"first action {cold.builds[0] * 1000:.1f} ms")

    print("\n-- CPU the agent uses, per captured action (median over the measured runs)")
    per_action = max(captured // max(len(agent_runs), 1), 1)
    listener_py = statistics.median(sum(r.capture_cpu) for r in agent_runs) / per_action
    worker_py = statistics.median(sum(r.build_cpu) for r in agent_runs) / per_action
    emitter_py = statistics.median(r.emitter_cpu for r in agent_runs) / per_action
    worker_jvm = statistics.median(r.worker_jvm_cpu for r in agent_runs) / per_action
    bus_delta = statistics.median(w.bus_cpu - b.bus_cpu for b, w in pairs) / per_action
    if not any(r.bus_cpu for b_w in pairs for r in b_w):
        print("  (the listener-bus thread was not found: its line reads 0)")
    total = listener_py + worker_py + emitter_py + worker_jvm + max(bus_delta, 0.0)
    for name, value in (
        ("listener callback, Python", listener_py),
        ("worker, Python", worker_py),
        ("emitter thread, Python", emitter_py),
        ("JVM thread serving the worker", worker_jvm),
        ("JVM listener bus, with - without", bus_delta),
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
                     + max(w.bus_cpu - b.bus_cpu, 0.0))
        shares_wall.append(agent_cpu / b.wall)
        shares_cpu.append(agent_cpu / (b.python_cpu + b.jvm_cpu))
    low, high = bootstrap_median(shares_wall)
    print(f"of its wall time: median {100 * statistics.median(shares_wall):.2f} % "
          f"(90 % interval {100 * low:.2f}-{100 * high:.2f} %, pairs min {100 * min(shares_wall):.2f} / "
          f"max {100 * max(shares_wall):.2f} %)")
    low_c, high_c = bootstrap_median(shares_cpu)
    print(f"of its CPU (Python + JVM processes): median {100 * statistics.median(shares_cpu):.2f} % "
          f"(90 % interval {100 * low_c:.2f}-{100 * high_c:.2f} %)")
    shares_gc = [share + max(gc_cpu(w.jvm_threads) - gc_cpu(b.jvm_threads), 0.0) / b.wall
                 for share, (b, w) in zip(shares_wall, pairs, strict=True)]
    low_g, high_g = bootstrap_median(shares_gc)
    print(f"of its wall time, counting the extra JVM GC CPU too: median {100 * statistics.median(shares_gc):.2f} % "
          f"(90 % interval {100 * low_g:.2f}-{100 * high_g:.2f} %)")

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
    share_high = 100 * high
    print("\n-- verdict")
    print(f"build p95 {build_p95:.1f} ms: target <= 30 ms {'met' if build_p95 <= 30 else 'NOT met'}")
    print(f"agent CPU {100 * statistics.median(shares_wall):.2f} % of the workload's wall time "
          f"(upper end of the 90 % interval {share_high:.2f} %): <= 2 % "
          f"{'met' if share_high <= 2 else 'NOT shown'}")
    print(f"with the extra JVM GC CPU: {100 * statistics.median(shares_gc):.2f} % (upper end {100 * high_g:.2f} %): "
          f"<= 2 % {'met' if 100 * high_g <= 2 else 'NOT shown'}")
    low_r, high_r = bootstrap_median(drained)
    if high_r - low_r > 0.04:
        print(f"wall-time ratio with the drain: interval {low_r:.3f}-{high_r:.3f} is wider than 4 points: "
              "the wall-time A/B cannot resolve 2 % on this machine now")
    else:
        print(f"wall-time ratio with the drain: interval {low_r:.3f}-{high_r:.3f}: <= 1.02 "
              f"{'shown' if high_r <= 1.02 else 'NOT shown'}")


if __name__ == "__main__":
    main()
