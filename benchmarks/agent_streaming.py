"""The agent on a Structured Streaming query over a Kafka topic: without and with it, side by side.

    SPARK_LOCAL_IP=127.0.0.1 .venv/bin/python benchmarks/agent_streaming.py \
        [--rounds 4] [--batches 200] [--rows-per-batch 50]

Each round runs the same query twice, each in a fresh driver process, the arms'
order alternating round by round: ``bare`` (no lineage) and ``headwater`` (the
agent, sending over HTTP to a recording server in this process). The query
reads a topic of one real broker (``tests/support/kafka_broker.py``) from the
earliest offset, ``maxOffsetsPerTrigger`` rows at a time, parses each value and
writes parquet files, ``Trigger.AvailableNow``: ``--batches`` micro-batches.
The topic is filled by the process before the query starts, outside the
measured span.

Printed per arm and round: the CPU seconds of the driver (Python + JVM) spent
while the query ran, its wall seconds and its micro-batches; then, per round:

* the CPU headwater adds per micro-batch, in milliseconds and as a share of the
  bare query's CPU (target ≤ 1 %);
* the events the agent sent for the query run, and the events one query-hour
  sends at the default ``progressInterval`` (60 s): START, one RUNNING per
  interval, COMPLETE (target ≤ 120).

Not pass/fail; the load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ARMS = ("bare", "headwater")
#: The agent's default seconds between two RUNNING events of one query run.
DEFAULT_INTERVAL = 60.0


class _Recorder(BaseHTTPRequestHandler):
    """Accepts every POST and counts the streaming events (by event type)."""

    counts: dict[str, int] = {}
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = []
        with self.lock:
            for event in parsed if isinstance(parsed, list) else [parsed]:
                job_type = event.get("job", {}).get("facets", {}).get("jobType", {})
                if job_type.get("processingType") == "STREAMING":
                    kind = str(event.get("eventType"))
                    self.counts[kind] = self.counts.get(kind, 0) + 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu(jvm_pid: int) -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + _proc_cpu(jvm_pid)


def run_arm(args: argparse.Namespace) -> None:
    """One driver process: fill the topic, run the query, print its figures as JSON."""
    from pyspark.sql import SparkSession

    from tests.support.spark_packages import KAFKA

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streaming arm")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.jars.packages", KAFKA)
    )
    if args.arm == "headwater":
        builder = (
            builder.config("spark.openlineage.transport.type", "http")
            .config("spark.openlineage.transport.url", args.url)
            .config("spark.openlineage.namespace", "streaming")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())
    if args.arm == "headwater":
        from headwater.agent import attach

        attach(spark)
    rows = args.batches * args.rows_per_batch
    spark.range(rows).selectExpr(
        "CAST(id AS STRING) AS key", "to_json(named_struct('id', id, 'amount', id * 1.5)) AS value"
    ).write.format("kafka").option("kafka.bootstrap.servers", args.kafka).option("topic", args.topic).save()
    began_cpu, began = _cpu(jvm_pid), time.perf_counter()
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.kafka)
        .option("subscribe", args.topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.rows_per_batch)
        .load()
        .selectExpr("from_json(CAST(value AS STRING), 'id long, amount double') AS o")
        .selectExpr("o.id", "o.amount * 2 AS doubled")
        .writeStream.format("parquet")
        .option("path", str(Path(args.root) / "out"))
        .option("checkpointLocation", str(Path(args.root) / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    wall, cpu = time.perf_counter() - began, _cpu(jvm_pid) - began_cpu
    last = query.lastProgress
    batches = int(last["batchId"]) + 1 if last else 0
    spark.stop()
    print(json.dumps({"arm": args.arm, "cpu_s": cpu, "wall_s": wall, "batches": batches}), flush=True)


def _run(arm: str, url: str, kafka: str, work: Path, round_: int, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable, str(Path(__file__).resolve()), "--arm", arm, "--url", url, "--kafka", kafka,
        "--topic", f"stream-{arm}-{round_}", "--root", str(work / f"{arm}-{round_}"),
        "--batches", str(args.batches), "--rows-per-batch", str(args.rows_per_batch),
    ]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=1800,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)},
    )
    if result.returncode != 0:
        raise SystemExit(f"{arm} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _spread(values: list[float], unit: str = "") -> str:
    return (f"median {statistics.median(values):.3f}{unit} "
            f"(min {min(values):.3f}, max {max(values):.3f}, n={len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--rows-per-batch", type=int, default=50)
    parser.add_argument("--arm", choices=ARMS)
    parser.add_argument("--url", default="http://127.0.0.1:9")
    parser.add_argument("--kafka")
    parser.add_argument("--topic")
    parser.add_argument("--root")
    args = parser.parse_args()
    if args.arm:
        run_arm(args)
        return
    print(f"load average at start: {os.getloadavg()}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    from tests.support.kafka_broker import start_broker

    broker = start_broker()
    results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    try:
        with tempfile.TemporaryDirectory(prefix="hw-streaming-") as work:
            for round_ in range(args.rounds):
                for arm in ARMS if round_ % 2 == 0 else ARMS[::-1]:
                    figures = _run(arm, url, broker.bootstrap, Path(work), round_, args)
                    results[arm].append(figures)
                    print(f"round {round_ + 1} {arm:9} cpu {figures['cpu_s']:7.2f} s  "
                          f"wall {figures['wall_s']:7.2f} s  micro-batches {figures['batches']}", flush=True)
    finally:
        broker.stop()
        server.shutdown()
    bare, agent = results["bare"], results["headwater"]
    rounds = range(args.rounds)
    per_batch = [(agent[i]["cpu_s"] - bare[i]["cpu_s"]) / max(agent[i]["batches"], 1) * 1000 for i in rounds]
    share = [(agent[i]["cpu_s"] - bare[i]["cpu_s"]) / bare[i]["cpu_s"] * 100 for i in rounds]
    print()
    print(f"CPU headwater adds per micro-batch: {_spread(per_batch, ' ms')}")
    print(f"CPU headwater adds, share of the bare query's CPU: {_spread(share, ' %')}")
    print(f"wall, headwater / bare: {_spread([agent[i]['wall_s'] / bare[i]['wall_s'] for i in rounds])}")
    sent = dict(_Recorder.counts)
    runs = sent.get("START", 0)
    print(f"streaming events sent by headwater over {runs} query runs: {sent}")
    hour = 2 + int(3600 // DEFAULT_INTERVAL)
    print(f"events per query-hour at the default interval ({DEFAULT_INTERVAL:.0f} s): at most {hour} "
          f"(START, one RUNNING per interval, COMPLETE); this run's queries lasted "
          f"{_spread([a['wall_s'] for a in agent], ' s')} and sent "
          f"{sum(sent.values()) / max(runs, 1):.1f} events each")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
