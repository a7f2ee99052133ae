"""What the headwater agent costs a PySpark job (issue 4). Prints figures; not pass/fail.

A workload of joins, aggregations and writes (every action's optimized plan has
100+ nodes) runs alternately without an agent and with headwater's agent in the
same SparkSession, after one warm-up of each. Printed:

* per-action capture time p50/p95/max, in two parts the agent records itself:
  - "listener thread": how long the agent's callback held Spark's listener-bus
    thread (which every other listener shares) — target p95 <= 30 ms;
  - "build": how long the agent's worker thread took to capture the plan from the
    JVM (plan JSON, relation facts, metrics) and build the action's events. This
    runs beside the job, so it shows up in the wall time only as CPU it takes;
* wall time of the workload with and without the agent and their ratio
  (target overhead <= 2 %), plus the time to drain the agent's queue afterwards
  and the ratio counting that drain (what a job pays by its ``spark.stop()``);
* driver memory added: Python process RSS and JVM RSS, before and after.

Run: ``SPARK_LOCAL_IP=127.0.0.1 .venv/bin/python benchmarks/agent_overhead.py [--rounds 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from functools import reduce
from pathlib import Path
from typing import Any

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def rss_kib(pid: int | str = "self") -> int:
    """Resident set size of a process in KiB, from /proc."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of ``values`` (which need not be sorted)."""
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.5)))
    return ordered[min(rank, len(ordered)) - 1]


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
    the agent's share of the wall time as visible as it can be.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds of each variant")
    parser.add_argument("--actions", type=int, default=24)
    parser.add_argument("--branches", type=int, default=12, help="union branches per action")
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    import headwater.agent
    from headwater.agent.config import AgentConfig

    load_at_start = os.getloadavg()[0]
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

    config = AgentConfig.from_sources(
        {
            "spark.openlineage.transport.type": "file",
            "spark.openlineage.transport.location": str(base / "events.jsonl"),
            "spark.headwater.spool.dir": str(base / "spool"),
        },
        {},
    )

    def with_agent(out: Path) -> tuple[float, float, list[float], list[float]]:
        agent = headwater.agent.attach(spark, config=config)
        if not agent.enabled:
            raise SystemExit("the agent did not attach; see the log")
        wall = run_workload(spark, sources, out, args.actions, args.branches)
        drain_started = time.perf_counter()
        agent.flush(60)
        drain = time.perf_counter() - drain_started
        captures = list(agent.emitter.metrics.capture_seconds)
        builds = list(agent.emitter.metrics.build_seconds)
        agent.close(10)
        return wall, drain, captures, builds

    # Warm-up of both variants: JIT, file system caches, Python imports.
    run_workload(spark, sources, base / "warm", args.actions, args.branches)
    # Memory before the agent was ever attached (but after a full workload without it).
    py_rss_before, jvm_rss_before = rss_kib(), rss_kib(jvm_pid)
    with_agent(base / "warm")

    baseline: list[float] = []
    instrumented: list[float] = []
    drains: list[float] = []
    captures: list[float] = []
    builds: list[float] = []
    for round_number in range(args.rounds):
        out = base / f"r{round_number}"
        # Alternate which variant goes first, so a drift in machine load hits both alike.
        if round_number % 2 == 0:
            baseline.append(run_workload(spark, sources, out, args.actions, args.branches))
        wall, drain, seconds, built = with_agent(out)
        instrumented.append(wall)
        drains.append(drain)
        captures.extend(seconds)
        builds.extend(built)
        if round_number % 2 == 1:
            baseline.append(run_workload(spark, sources, out, args.actions, args.branches))
    py_rss_after, jvm_rss_after = rss_kib(), rss_kib(jvm_pid)
    events = sum(1 for _ in open(base / "events.jsonl", encoding="utf-8"))
    spark.stop()

    ms = [s * 1000 for s in captures]
    build_ms = [s * 1000 for s in builds]
    base_median = statistics.median(baseline)
    agent_median = statistics.median(instrumented)
    print(f"workload: {args.actions} actions x {args.rounds} rounds, {nodes} optimized plan nodes "
          f"per action, {args.rows} order rows, local[2], {os.cpu_count()} CPUs "
          f"(load average {load_at_start:.1f} at start, {os.getloadavg()[0]:.1f} at end)")
    print(f"captures recorded: {len(ms)} (events written: {events})")
    print(f"capture per action, listener thread: p50 {percentile(ms, 0.50):.1f} ms, "
          f"p95 {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms   (target p95 <= 30 ms)")
    print(f"capture per action, build on the agent's worker: p50 {percentile(build_ms, 0.50):.1f} ms, "
          f"p95 {percentile(build_ms, 0.95):.1f} ms, max {max(build_ms):.1f} ms")
    print("wall time without agent: " + ", ".join(f"{w:.2f}" for w in baseline)
          + f" s (median {base_median:.2f} s)")
    print("wall time with agent:    " + ", ".join(f"{w:.2f}" for w in instrumented)
          + f" s (median {agent_median:.2f} s)")
    print(f"wall-time ratio (median with / without): {agent_median / base_median:.3f} "
          f"(overhead {100 * (agent_median / base_median - 1):+.1f} %, target <= 2 %)")
    print(f"drain after the workload (flush): median {statistics.median(drains) * 1000:.0f} ms")
    # The worker may still be capturing when the workload returns; a job pays that
    # at spark.stop(), so count it too.
    with_drain = statistics.median([w + d for w, d in zip(instrumented, drains, strict=True)])
    print(f"wall-time ratio including the drain: {with_drain / base_median:.3f} "
          f"(overhead {100 * (with_drain / base_median - 1):+.1f} %)")
    print(f"driver RSS added: python {(py_rss_after - py_rss_before) / 1024:+.1f} MiB "
          f"({py_rss_after / 1024:.0f} MiB now), JVM {(jvm_rss_after - jvm_rss_before) / 1024:+.1f} MiB "
          f"({jvm_rss_after / 1024:.0f} MiB now)")


if __name__ == "__main__":
    main()
