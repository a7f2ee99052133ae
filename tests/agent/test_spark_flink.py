"""Flink and PySpark in one graph, with a real PyFlink job and the OpenLineage Flink
integration (the Flink 2 job-status listener) sending to a real ``headwater serve``.

A PyFlink SQL job (``tests/support/flink_job.py``, in its own ``.venv-flink``) reads
orders from one topic of the session broker and writes them to another; a PySpark
batch job (headwater's agent on the session SparkSession, HTTP transport to the same
server) reads that topic into a table. The server's v1 lineage then holds one path
topic -> Flink job -> topic -> Spark job -> table: both producers name the topics
alike (``kafka://host:port`` + topic).

The Flink run's state follows its producer: START, a RUNNING per checkpoint, and
when the job is cancelled the integration's ABORT ends it ABORTED. In between, the
job's JVM is frozen (SIGSTOP): the producer goes silent, the run shows stale
(``GET /api/v2/runs/{id}``) while its state stays RUNNING, and once the JVM runs
again its next RUNNING makes it fresh.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.live import free_port, running_server
from tests.support.flink_env import flink_classpath, flink_python
from tests.support.kafka_topics import create_topic, produce, read_messages
from tests.support.lineage_graph import downstream_path
from tests.support.spark_packages import needs_connectors

# The first run on a machine builds .venv-flink (PyFlink's wheels from PyPI) in setup.
pytestmark = [
    pytest.mark.spark,
    pytest.mark.kafka,
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.timeout(1200),
]

JOB = Path(__file__).resolve().parents[1] / "support" / "flink_job.py"
FLINK_JOB = "job:flink:enrich_orders"
ORDERS = 6


def _wait(what: str, check: Callable[[], Any], timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


def _flink_events(server: str) -> list[dict[str, Any]]:
    """The Flink job's events as stored, oldest first."""
    answer = httpx.get(
        f"{server}/api/v1/events/lineage",
        params={"limit": 1000, "sortDirection": "asc"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return [e for e in answer.json()["events"] if e["job"]["namespace"] == "flink"]


def _jvms(pid: int) -> list[int]:
    """The processes below ``pid`` (PyFlink's gateway JVM runs the mini-cluster)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *_jvms(child)]
    return found


@pytest.fixture
def flink_job(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    python, jars = flink_python(), flink_classpath()
    started: list[subprocess.Popen[str]] = []

    def start(source: str, sink: str, server: str) -> subprocess.Popen[str]:
        log = (tmp_path / "flink.log").open("w")
        process = subprocess.Popen(
            [
                str(python),
                str(JOB),
                kafka_bootstrap,
                source,
                sink,
                server,
                str(free_port()),
                ";".join(Path(jar).as_uri() for jar in jars),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        for jvm in _jvms(process.pid) if process.poll() is None else []:
            os.kill(jvm, signal.SIGCONT)
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log_text = (tmp_path / "flink.log").read_text() if (tmp_path / "flink.log").exists() else ""
    assert "Traceback" not in log_text, log_text[-3000:]


@needs_connectors("kafka")
def test_flink_job_then_spark_job_is_one_connected_graph(
    spark, kafka_bootstrap: str, flink_job, tmp_path: Path
) -> None:
    from headwater.agent import attach
    from headwater.agent.config import AgentConfig, DeliveryConfig
    from headwater.agent.emitter import build_emitter

    source = create_topic(kafka_bootstrap, 1, prefix="orders")
    sink = create_topic(kafka_bootstrap, 1, prefix="enriched")
    table = f"enriched_{uuid.uuid4().hex[:8]}"
    produce(
        kafka_bootstrap,
        source,
        [(None, json.dumps({"id": i, "amount": i * 40.0}).encode()) for i in range(ORDERS)],
    )
    store = f"sqlite:///{tmp_path / 'lineage.db'}"
    # A Flink run silent for 2 s (or three of its own RUNNING intervals) is stale.
    with running_server("--db", store, "--stale-producer", "*/integration/flink=2s") as server:
        job = flink_job(source, sink, server)
        assert job.stdout is not None
        first = job.stdout.readline()
        assert first.startswith("JOB "), first
        assert len(read_messages(kafka_bootstrap, sink, ORDERS, timeout=180)) == ORDERS

        # START with the topics, then a RUNNING per checkpoint.
        start = _wait(
            "the Flink START",
            lambda: [e for e in _flink_events(server) if e["eventType"] == "START"],
        )[0]
        run_id = start["run"]["runId"]
        assert start["producer"].endswith("/integration/flink"), start["producer"]
        assert [(d["namespace"], d["name"]) for d in start["inputs"]] == [
            (f"kafka://{kafka_bootstrap}", source)
        ]
        assert [(d["namespace"], d["name"]) for d in start["outputs"]] == [
            (f"kafka://{kafka_bootstrap}", sink)
        ]
        liveness = f"{server}/api/v2/runs/{run_id}"
        beating = _wait(
            "two checkpoint RUNNING events",
            lambda: (a := httpx.get(liveness, timeout=10).json())["heartbeat"] and a,
        )
        assert beating["state"] == "RUNNING"
        assert beating["stale"] is False

        # The job's JVM frozen: its producer is silent, the run stale but still RUNNING.
        jvms = _jvms(job.pid)
        assert jvms, "PyFlink started no JVM"
        for jvm in jvms:
            os.kill(jvm, signal.SIGSTOP)
        try:
            stale = _wait(
                "the silent run to show stale",
                lambda: (a := httpx.get(liveness, timeout=10).json())["stale"] and a,
                timeout=60,
            )
        finally:
            for jvm in jvms:
                os.kill(jvm, signal.SIGCONT)
        assert stale["state"] == "RUNNING"
        assert stale["endedAt"] is None
        record = httpx.get(f"{server}/api/v1/jobs/runs/{run_id}", timeout=10).json()
        assert record["state"] == "RUNNING"
        # Running again: its next checkpoint RUNNING makes it fresh.
        fresh = _wait(
            "the run to beat again",
            lambda: not (a := httpx.get(liveness, timeout=10).json())["stale"] and a,
            timeout=60,
        )
        assert fresh["heartbeat"]["runningEvents"] > stale["heartbeat"]["runningEvents"]

        # The PySpark job downstream reads the Flink job's topic.
        config = dataclasses.replace(
            AgentConfig.from_sources(dict(spark.sparkContext.getConf().getAll()), {}),
            transport={"type": "http", "url": server},
            delivery=DeliveryConfig(spool_enabled=False),
        )
        agent = attach(spark, config=config, emitter=build_emitter(config))
        try:
            (
                spark.read.format("kafka")
                .option("kafka.bootstrap.servers", kafka_bootstrap)
                .option("subscribe", sink)
                .load()
                .selectExpr("CAST(value AS STRING) AS body")
                .write.mode("overwrite")
                .saveAsTable(table)
            )
            assert agent.flush(30.0)
        finally:
            agent.close(10.0)

        # Cancelled: the integration's ABORT ends the run ABORTED.
        assert job.stdin is not None
        job.stdin.write("cancel\n")
        job.stdin.flush()
        assert job.stdout.readline().startswith("CANCELLED"), "the job did not cancel"
        ended = _wait(
            "the Flink ABORT",
            lambda: (a := httpx.get(liveness, timeout=10).json())["state"] == "ABORTED" and a,
        )
        assert ended["stale"] is False
        assert ended["endedAt"] is not None
        kinds = [e["eventType"] for e in _flink_events(server)]
        assert kinds[0] == "START" and kinds[-1] == "ABORT", kinds

        topic_in = f"dataset:kafka://{kafka_bootstrap}:{source}"
        graph = httpx.get(
            f"{server}/api/v1/lineage", params={"nodeId": topic_in, "depth": 10}, timeout=30
        )
        assert graph.status_code == 200, graph.text
        came_from = downstream_path(graph.json()["graph"], topic_in)

    (table_node,) = [n for n in came_from if n.startswith("dataset:") and n.endswith(f"/{table}")]
    path, node = [], table_node
    while node is not None:
        path.append(node)
        node = came_from[node]
    path.reverse()
    assert path[:3] == [topic_in, FLINK_JOB, f"dataset:kafka://{kafka_bootstrap}:{sink}"], path
    assert len(path) == 5 and path[3].startswith("job:"), path
