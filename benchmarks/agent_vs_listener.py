"""headwater's agent against the OpenLineage Spark listener jar: three arms, side by side.

    SPARK_LOCAL_IP=127.0.0.1 .venv/bin/python benchmarks/agent_vs_listener.py \
        [--rounds 6] [--workload-rounds 4] [--formats files,tables,delta,iceberg,kafka]

Each round runs the same workload (``tests/support/spark_arms.py``: per
workload round a 100+ node plan of joins and aggregates written as parquet
files, a parquet table, a Delta table, an Iceberg table and a Kafka topic)
three times, each in a fresh driver process: ``bare`` (no lineage),
``headwater`` (the agent) and ``listener`` (the jar,
``io.openlineage:openlineage-spark`` 1.53.0 via ``spark.jars.packages``). The
arms' order rotates round by round. Both producers send over HTTP to one
recording server in this process; Kafka writes go to one real broker
(``tests/support/kafka_broker.py``). The listener jar is a download for this
benchmark only, never a dependency of headwater.

Printed per arm and round: the driver process tree's CPU seconds (Python +
JVM), wall seconds of the workload, peak resident memory (Python + JVM); then
the paired ratios per round with their median and spread:

* CPU headwater adds ÷ CPU the listener adds, each against the same round's
  bare run (target ≤ 0.25);
* peak driver memory, headwater ÷ listener (target ≤ 0.9);
* wall, headwater ÷ bare and listener ÷ bare;
* the listener-thread time per action under headwater, p50/p95 (target p95 ≤ 5 ms).

Not pass/fail. The machine's load average is printed at the start and end:
on a shared 2-core machine a round's figures move with its neighbours' work,
which is why the arms alternate and only paired ratios are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ARMS = ("bare", "headwater", "listener")


class _Recorder(BaseHTTPRequestHandler):
    """Accepts every POST (single events and batches) and counts the events."""

    counts: dict[str, int] = {}
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            parsed = json.loads(body)
            events = parsed if isinstance(parsed, list) else [parsed]
            namespace = str(events[0].get("job", {}).get("namespace", "?")) if events else "?"
        except ValueError:
            events, namespace = [], "?"
        with self.lock:
            self.counts[namespace] = self.counts.get(namespace, 0) + len(events)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


def _run(arm: str, url: str, work: Path, args: argparse.Namespace, kafka: str | None) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "tests.support.spark_arms", "--arm", arm, "--root", str(work / arm),
        "--url", url, "--namespace", arm, "--rounds", str(args.workload_rounds), "--formats", args.formats,
    ]
    if kafka:
        command += ["--kafka", kafka]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=1800,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)},
    )
    if result.returncode != 0:
        raise SystemExit(f"{arm} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--workload-rounds", type=int, default=4)
    parser.add_argument("--formats", default="files,tables,delta,iceberg,kafka")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    broker = None
    if "kafka" in args.formats.split(","):
        from tests.support.kafka_broker import start_broker

        broker = start_broker()
    results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    try:
        with tempfile.TemporaryDirectory(prefix="hw-arms-") as work:
            for round_ in range(args.rounds):
                order = ARMS[round_ % 3 :] + ARMS[: round_ % 3]
                for arm in order:
                    figures = _run(arm, url, Path(work), args, broker.bootstrap if broker else None)
                    results[arm].append(figures)
                    cpu = figures["python_cpu_s"] + figures["jvm_cpu_s"]
                    rss = (figures["python_peak_rss"] + figures["jvm_peak_rss"]) / 2**20
                    print(f"round {round_ + 1} {arm:9} actions {figures['actions']:3}  cpu {cpu:7.2f} s  "
                          f"wall {figures['wall_s']:7.2f} s  peak rss {rss:7.0f} MiB", flush=True)
    finally:
        if broker is not None:
            broker.stop()
        server.shutdown()

    def cpu(figures: dict[str, Any]) -> float:
        return figures["python_cpu_s"] + figures["jvm_cpu_s"]

    def rss(figures: dict[str, Any]) -> float:
        return figures["python_peak_rss"] + figures["jvm_peak_rss"]

    rounds = range(args.rounds)
    bare, agent, listener = (results[arm] for arm in ARMS)
    added = [(cpu(agent[i]) - cpu(bare[i])) / (cpu(listener[i]) - cpu(bare[i]))
             for i in rounds if cpu(listener[i]) > cpu(bare[i])]
    print()
    print(f"events recorded per arm: {dict(_Recorder.counts)}")
    print(f"CPU headwater adds / CPU the listener adds: {_spread(added) if added else 'the listener added none'}")
    print(f"  CPU added, headwater: {_spread([cpu(agent[i]) - cpu(bare[i]) for i in rounds])} s")
    print(f"  CPU added, listener:  {_spread([cpu(listener[i]) - cpu(bare[i]) for i in rounds])} s")
    print(f"peak driver memory, headwater / listener: {_spread([rss(agent[i]) / rss(listener[i]) for i in rounds])}")
    print(f"wall, headwater / bare: {_spread([agent[i]['wall_s'] / bare[i]['wall_s'] for i in rounds])}")
    print(f"wall, listener / bare:  {_spread([listener[i]['wall_s'] / bare[i]['wall_s'] for i in rounds])}")
    held = [s * 1000 for figures in agent for s in figures["listener_thread_s"]]
    if held:
        print(f"listener thread per action under headwater: p50 {_percentile(held, 0.5):.2f} ms, "
              f"p95 {_percentile(held, 0.95):.2f} ms, max {max(held):.2f} ms (n={len(held)})")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
