"""How long the agent spends per action, on the listener thread and on its worker.

    .venv/bin/python benchmarks/agent_capture.py            # worker side, from recorded plans
    .venv/bin/python benchmarks/agent_capture.py --spark 1 25 50
        # also the listener-thread capture on a real SparkSession, for plans that
        # union 1, 25 and 50 file reads (SPARK_LOCAL_IP=127.0.0.1)

The worker-side figure is the time to turn one captured action (plan tree,
JVM facts) into its START/RUNNING/COMPLETE events: visitors, column lineage,
facets. On a live session two figures per action: "listener" is what Spark's
listener bus waits for (the callback reads the plan's class and queues the
action); "capture" is the JVM part of the worker's job — one ``toJSON`` of the
optimized plan, one ``collectLeaves`` per plan, the ``semanticHash`` of all its
file relations in one chain of calls, the relation look-ups (each union branch
here reads the same directory anew: after the first, found by that hash), the
executed plan's metrics and the SQL text — on a py4j connection with
``TCP_NODELAY``, as the agent's worker makes them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))


def worker_side(repeat: int) -> None:
    from headwater.agent.actions import ActionCapture, action_events
    from headwater.agent.config import AgentConfig
    from headwater.agent.capture import PlanCapture
    from headwater.agent.run_model import RunModel
    from headwater.agent.sources import VisitContext

    model = RunModel(AgentConfig.from_sources({}, {}), "bench", "4.0.1", "0.1.0")
    print(f"{'fixture':28} {'plan KB':>8} {'ms/action':>10}")
    for path in sorted((ROOT / "tests" / "agent" / "fixtures" / "plans").glob("*.json")):
        data = json.loads(path.read_text())
        size_kb = len(json.dumps(data["plan"]["plans"])) / 1024
        timings = []
        for _ in range(repeat):
            began = time.perf_counter()
            plan = PlanCapture.from_json(data["plan"])
            capture = ActionCapture(data["func_name"], plan, data["tables"], data["executed"], 1.0, 2.0)
            ctx = VisitContext(tree=plan.tree, node_facts=plan.facts, tables=data["tables"], warehouse_uri="file:/w")
            action_events(capture, model, ctx)
            timings.append(time.perf_counter() - began)
        print(f"{path.stem:28} {size_kb:8.1f} {statistics.median(timings) * 1000:10.2f}")


def listener_side(widths: list[int]) -> None:
    import os

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from headwater.agent.listener import ActionListener, LogOnce, PendingAction
    from headwater.agent.py4j.connection import ConnectionTuner
    from headwater.agent.py4j.handles import callback_gateway, java_context, java_session

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    seconds: list[float] = []
    pending: list[PendingAction] = []
    gateway = callback_gateway(spark.sparkContext)
    ConnectionTuner(gateway).ensure()  # this thread captures, as the agent's worker does
    listener = ActionListener(
        java_session(spark), gateway.jvm, pending.append, LogOnce(),
        record_seconds=lambda wall, cpu: seconds.append(wall),
    )
    java_session(spark).listenerManager().register(listener)
    base = Path(tempfile.mkdtemp())
    spark.range(10).write.parquet(str(base / "src"))
    java_context(spark.sparkContext).sc().listenerBus().waitUntilEmpty(60_000)
    for item in pending:  # the first capture loads classes on both sides: not measured
        listener.capture_pending(item)
    print(f"{'unioned reads':>14} {'listener ms':>12} {'capture ms':>11} {'job ms':>8}")
    for width in widths:
        seconds.clear()
        pending.clear()
        df = spark.read.parquet(str(base / "src"))
        for _ in range(width - 1):
            df = df.union(spark.read.parquet(str(base / "src")))
        began = time.perf_counter()
        df.write.mode("overwrite").parquet(str(base / f"out{width}"))
        job = time.perf_counter() - began
        java_context(spark.sparkContext).sc().listenerBus().waitUntilEmpty(60_000)
        captured = time.perf_counter()
        for item in pending:
            listener.capture_pending(item)
        capture = time.perf_counter() - captured
        print(f"{width:14} {sum(seconds) * 1000:12.1f} {capture * 1000:11.1f} {job * 1000:8.0f}")
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--spark", type=int, nargs="*", help="union widths to capture live")
    args = parser.parse_args()
    worker_side(args.repeat)
    if args.spark:
        listener_side(args.spark)


if __name__ == "__main__":
    main()
