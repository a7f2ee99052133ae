"""One PySpark workload under one lineage producer, in a process of its own.

    python -m tests.support.spark_arms --arm {bare,headwater,listener} --root DIR \
        [--url http://127.0.0.1:PORT] [--namespace NS] [--app NAME] [--rounds N] \
        [--formats files,tables,delta,iceberg,kafka] [--kafka HOST:PORT]

The arms share everything but the producer: ``bare`` runs the workload with no
lineage; ``headwater`` attaches headwater's agent; ``listener`` starts the JVM
with the OpenLineage Spark listener jar (``spark.extraListeners``). Both
producers send their events over HTTP to ``--url`` under ``--namespace``.
A listener is a static setting of the JVM, so each arm is a process.

On its last line the process prints a JSON object: wall seconds of the
workload (session start excluded), the CPU seconds of the driver's Python
process and of its JVM, each one's peak resident memory (``VmHWM``), the
number of actions run, and under headwater how long each action's callback
held Spark's listener bus. CPU and memory are read after ``spark.stop()``, so they
include each producer's work at application end.

Used by ``benchmarks/agent_vs_listener.py`` (three arms, interleaved) and by
``tests/e2e/test_mixed_runtimes.py`` (the two producers into one server).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import time
from pathlib import Path
from typing import Any

from tests.support.spark_packages import DELTA, ICEBERG, KAFKA, SPARK_LINE

__all__ = ["LISTENER", "run_workload"]

#: The OpenLineage Spark listener of the same release line as headwater's conformance data.
LISTENER = {
    "4.1": "io.openlineage:openlineage-spark_2.13:1.53.0",
    "4.0": "io.openlineage:openlineage-spark_2.13:1.53.0",
    "3.5": "io.openlineage:openlineage-spark_2.12:1.53.0",
}[SPARK_LINE]

_FORMATS = ("files", "tables", "delta", "iceberg", "kafka")


def _wide_frame(spark: Any, source: str, branches: int) -> Any:
    """A frame whose plan has 100+ nodes: joins and aggregates in a union of branches."""
    base = spark.read.parquet(source)
    parts = []
    for index in range(branches):
        left = base.where(f"k % {branches} = {index}").selectExpr("k", f"v * {index + 1} AS v")
        right = base.groupBy("k").agg({"v": "sum"}).withColumnRenamed("sum(v)", "total")
        parts.append(left.join(right, "k").selectExpr("k", "v + total AS v"))
    frame = parts[0]
    for part in parts[1:]:
        frame = frame.unionByName(part)
    return frame


def run_workload(spark: Any, root: Path, rounds: int, formats: tuple[str, ...], kafka: str | None) -> int:
    """Run the workload; the number of actions it ran (each writes once)."""
    source = str(root / "source")
    spark.range(0, 2000).selectExpr("id AS k", "id % 97 AS v").write.mode("overwrite").parquet(source)
    actions = 1
    if "tables" in formats:
        spark.sql("DROP TABLE IF EXISTS arm_table")
    if "delta" in formats:
        spark.sql("DROP TABLE IF EXISTS arm_delta")
    if "iceberg" in formats:
        spark.sql("DROP TABLE IF EXISTS ice.arms.arm_iceberg")
    for round_ in range(rounds):
        frame = _wide_frame(spark, source, 6)
        if "files" in formats:
            frame.write.mode("overwrite").parquet(str(root / f"out_{round_ % 3}"))
            actions += 1
        if "tables" in formats:
            frame.write.mode("append").format("parquet").saveAsTable("arm_table")
            actions += 1
        if "delta" in formats:
            frame.write.mode("append").format("delta").saveAsTable("arm_delta")
            actions += 1
        if "iceberg" in formats:
            frame.writeTo("ice.arms.arm_iceberg").using("iceberg").createOrReplace()
            actions += 1
        if "kafka" in formats and kafka:
            frame.selectExpr("CAST(k AS STRING) AS key", "CAST(v AS STRING) AS value").write.format(
                "kafka"
            ).option("kafka.bootstrap.servers", kafka).option("topic", "arms").save()
            actions += 1
    return actions


def _builder(args: argparse.Namespace) -> Any:
    from pyspark.sql import SparkSession

    packages = [p for f, p in (("delta", DELTA), ("iceberg", ICEBERG), ("kafka", KAFKA)) if f in args.formats]
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(args.app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(args.root / "warehouse"))
    )
    extensions = []
    if "delta" in args.formats:
        extensions.append("io.delta.sql.DeltaSparkSessionExtension")
        builder = builder.config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    if "iceberg" in args.formats:
        extensions.append("org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        builder = (
            builder.config("spark.sql.catalog.ice", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.ice.type", "hadoop")
            .config("spark.sql.catalog.ice.warehouse", str(args.root / "iceberg"))
        )
    if extensions:
        builder = builder.config("spark.sql.extensions", ",".join(extensions))
    if args.arm == "listener":
        packages.append(LISTENER)
        builder = builder.config("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener")
    if packages:
        builder = builder.config("spark.jars.packages", ",".join(packages))
    if args.arm != "bare":
        builder = (
            builder.config("spark.openlineage.transport.type", "http")
            .config("spark.openlineage.transport.url", args.url)
            .config("spark.openlineage.namespace", args.namespace)
        )
    return builder


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arm", choices=("bare", "headwater", "listener"), required=True)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--url", default="http://127.0.0.1:9")
    parser.add_argument("--namespace", default="arms")
    parser.add_argument("--app", default="lineage arms")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--formats", default="files,tables")
    parser.add_argument("--kafka", default=None)
    args = parser.parse_args(argv)
    args.formats = tuple(f for f in args.formats.split(",") if f)
    unknown = set(args.formats) - set(_FORMATS)
    if unknown:
        parser.error(f"unknown formats: {sorted(unknown)}")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    shutil.rmtree(args.root, ignore_errors=True)
    args.root.mkdir(parents=True)
    spark = _builder(args).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())
    agent = None
    if args.arm == "headwater":
        from headwater.agent import attach

        agent = attach(spark)
    began = time.perf_counter()
    actions = run_workload(spark, args.root, args.rounds, args.formats, args.kafka)
    wall = time.perf_counter() - began
    spark.stop()  # the producers' application-end work happens here
    metrics = getattr(getattr(agent, "emitter", None), "metrics", None)
    listener_thread = metrics.snapshot()["capture_seconds"] if metrics is not None else []
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "arm": args.arm,
                "actions": actions,
                "wall_s": wall,
                "python_cpu_s": usage.ru_utime + usage.ru_stime,
                "jvm_cpu_s": _proc_cpu(jvm_pid),
                "python_peak_rss": _proc_peak_rss(os.getpid()),
                "jvm_peak_rss": _proc_peak_rss(jvm_pid),
                # headwater only: how long each action's callback held Spark's listener bus.
                "listener_thread_s": listener_thread,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
