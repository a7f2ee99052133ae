"""Where the agent's time on Spark's listener thread goes, per action kind.

One SparkSession with Delta as ``spark_catalog`` and Iceberg as the Hadoop catalog
``ice`` (the agent tests' session), one agent attached, and a workload of every
kind of action the listener thread treats differently: file writes (handed to the
worker), session-catalog DDL (captured at once), Delta and Iceberg creates, CTAS,
RTAS and writes (their table pinned), v2 ALTER (captured at once) and DROP.
Each listener callback is wrapped to count, on the listener thread only, the py4j
round trips it makes and how many of them load a table from a catalog
(``loadTable`` of a v2 catalog, ``getTableMetadata`` of the session catalog), and
how long it held the thread. Prints one row per action kind: calls and catalog
loads (median, max) and wall ms p50 / p95, with the load average.

    .venv/bin/python benchmarks/listener_thread.py --rounds 8
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.spark_packages import lakehouse_conf  # noqa: E402

#: py4j method names that load a table from a catalog.
CATALOG_LOADS = ("\nloadTable\n", "\ngetTableMetadata\n", "\ngetTableRawMetadata\n")


class CallbackMeter:
    """Counts each listener callback's py4j round trips and catalog loads, and its wall time."""

    def __init__(self, spark: Any, agent: Any) -> None:
        self._listener = agent._listener
        self._client = spark.sparkContext._gateway._gateway_client
        self._local = threading.local()
        self.rows: list[tuple[str, int, int, float]] = []  # (root class, calls, loads, ms)
        on_action_scoped = self._listener._on_action_scoped
        send_command = self._client.send_command

        def metered(func_name: str, qe: Any, *rest: Any) -> None:
            self._local.counts = [0, 0]
            began = time.perf_counter()
            try:
                on_action_scoped(func_name, qe, *rest)
            finally:
                elapsed = (time.perf_counter() - began) * 1000
                calls, loads = self._local.counts
                self._local.counts = None
                root = str(qe.optimizedPlan().getClass().getSimpleName())  # not counted
                self.rows.append((root, calls, loads, elapsed))

        def counted(command: str, *args: Any, **kwargs: Any) -> Any:
            counts = getattr(self._local, "counts", None)
            if counts is not None:
                counts[0] += 1
                counts[1] += any(name in command for name in CATALOG_LOADS)
            return send_command(command, *args, **kwargs)

        self._listener._on_action_scoped = metered
        self._client.send_command = counted


def workload(spark: Any, out: Path, round_no: int) -> list[tuple[str, str]]:
    """One round: (kind, statement or write) pairs, run in order."""
    r = round_no
    src = "SELECT id, CAST(id % 7 AS STRING) AS v FROM range(200)"
    matched = "s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.v = s.v"
    return [
        ("parquet file write", f"INSERT OVERWRITE DIRECTORY '{out}/files{r}' USING parquet {src}"),
        ("parquet table CTAS", f"CREATE TABLE lt_pq{r} USING parquet AS {src}"),
        ("parquet table DROP", f"DROP TABLE lt_pq{r}"),
        ("delta CREATE", f"CREATE TABLE lt_d{r} (id BIGINT, v STRING) USING delta"),
        ("delta INSERT", f"INSERT INTO lt_d{r} {src}"),
        (
            "delta MERGE",
            f"MERGE INTO lt_d{r} t USING ({src}) {matched}",
        ),
        ("delta CTAS", f"CREATE TABLE lt_dc{r} USING delta AS {src}"),
        ("delta RTAS", f"CREATE OR REPLACE TABLE lt_dc{r} USING delta AS {src}"),
        ("delta DROP", f"DROP TABLE lt_dc{r}"),
        ("iceberg CREATE", f"CREATE TABLE ice.lt.t{r} (id BIGINT, v STRING) USING iceberg"),
        ("iceberg INSERT", f"INSERT INTO ice.lt.t{r} {src}"),
        (
            "iceberg MERGE",
            f"MERGE INTO ice.lt.t{r} t USING ({src}) {matched}",
        ),
        ("iceberg ALTER", f"ALTER TABLE ice.lt.t{r} ADD COLUMN extra INT"),
        ("iceberg CTAS", f"CREATE TABLE ice.lt.c{r} USING iceberg AS {src}"),
        ("iceberg RTAS", f"CREATE OR REPLACE TABLE ice.lt.c{r} USING iceberg AS {src}"),
        ("iceberg DROP", f"DROP TABLE ice.lt.c{r}"),
    ]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from headwater.agent import attach
    from headwater.agent.config import AgentConfig, DeliveryConfig
    from headwater.agent.emitter import build_emitter

    base = Path(tempfile.mkdtemp(prefix="hw-listener-thread-"))
    builder = SparkSession.builder
    for key, value in lakehouse_conf(str(base / "iceberg")).items():
        builder = builder.config(key, value)
    spark = (
        builder.master("local[2]")
        .appName("listener thread")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(base / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={base / 'derby'}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ice.lt")
    conf = dict(spark.sparkContext.getConf().getAll())
    config = AgentConfig.from_sources(conf, {})
    import dataclasses

    config = dataclasses.replace(
        config,
        transport={"type": "file", "location": str(base / "events.jsonl")},
        delivery=DeliveryConfig(spool_enabled=False),
    )
    agent = attach(spark, config=config, emitter=build_emitter(config))
    meter = CallbackMeter(spark, agent)
    bus = spark.sparkContext._jsc.sc().listenerBus()
    load_start = os.getloadavg()
    by_kind: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for round_no in range(args.rounds):
        for kind, statement in workload(spark, base / "out", round_no):
            before = len(meter.rows)
            spark.sql(statement)
            bus.waitUntilEmpty(60_000)
            for root, calls, loads, ms in meter.rows[before:]:
                by_kind[f"{kind} ({root})"].append((calls, loads, ms))
        agent.flush(60.0)
    load_end = os.getloadavg()
    out = sys.stdout.write
    out(
        f"Spark {spark.version}, {args.rounds} rounds, "
        f"load {load_start[0]:.1f} at start, {load_end[0]:.1f} at end\n"
    )
    out(
        "| action kind (callback's plan root) | py4j calls | catalog loads "
        "| ms p50 | ms p95 | n |\n"
    )
    out("|---|---|---|---|---|---|\n")
    for kind, rows in by_kind.items():
        calls = [c for c, _, _ in rows[1:] or rows]  # the first round builds the chains
        loads = [n for _, n, _ in rows[1:] or rows]
        ms = [m for _, _, m in rows[1:] or rows]
        out(
            f"| {kind} | {statistics.median(calls):g} (max {max(calls)}) | {max(loads)} "
            f"| {_pct(ms, 0.5):.2f} | {_pct(ms, 0.95):.2f} | {len(ms)} |\n"
        )
    agent.close(10.0)
    spark.stop()
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
