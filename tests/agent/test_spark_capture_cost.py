"""What the agent costs, as far as it can be tested: its py4j connection and its own timings.

Speed itself is measured in ``benchmarks/agent_overhead.py``; these tests check the
mechanisms the figures rest on.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from headwater.agent.py4j.connection import ConnectionTuner, set_no_delay_for_this_thread
from tests.support.spark_packages import SPARK_LINE, needs_connectors

pytestmark = pytest.mark.spark


def _java_socket_of_this_thread(spark: Any) -> Any:
    """The JVM end of the calling thread's py4j connection (found as the agent finds it)."""
    from py4j.java_gateway import JavaObject

    gateway = spark.sparkContext._gateway
    client = gateway._gateway_client
    gateway.jvm.java.lang.System.nanoTime()  # make sure this thread has its connection
    port = client.get_thread_connection().socket.getsockname()[1]
    server = JavaObject("GATEWAY_SERVER", client)
    field = gateway.jvm.java.lang.Class.forName("py4j.GatewayServer").getDeclaredField(
        "connections"
    )
    field.setAccessible(True)
    for connection in field.get(server).toArray():
        if connection.getSocket().getPort() == port:
            return connection.getSocket()
    raise AssertionError("no JVM connection for this thread")


def _no_delay_seen_from(spark: Any, run: Any) -> bool:
    """``TCP_NODELAY`` of the JVM end of a fresh thread's connection after ``run()`` on it."""
    result: list[Any] = []

    def body() -> None:
        try:
            run()
            result.append(bool(_java_socket_of_this_thread(spark).getTcpNoDelay()))
        except Exception as exc:  # reported by the assertion below
            result.append(exc)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(60)
    assert len(result) == 1 and isinstance(result[0], bool), result
    return result[0]


def test_no_delay_is_set_on_the_calling_threads_connection_only(spark: Any) -> None:
    gateway = spark.sparkContext._gateway
    main_before = bool(_java_socket_of_this_thread(spark).getTcpNoDelay())
    assert _no_delay_seen_from(spark, lambda: set_no_delay_for_this_thread(gateway)) is True
    # A thread that did not ask keeps py4j's default, and so does this one.
    assert _no_delay_seen_from(spark, lambda: None) is False
    assert bool(_java_socket_of_this_thread(spark).getTcpNoDelay()) == main_before


def test_tuner_names_the_jvm_thread_and_tunes_once_per_connection(spark: Any) -> None:
    gateway = spark.sparkContext._gateway
    outcomes: list[Any] = []

    def body() -> None:
        tuner = ConnectionTuner(gateway)
        outcomes.extend(
            [
                tuner.ensure(),
                tuner.ensure(),
                tuner.tuned_count,
                tuner.jvm_thread_id,
                int(gateway.jvm.java.lang.Thread.currentThread().getId()),
            ]
        )

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(60)
    first, second, count, named, actual = outcomes
    assert (first, second, count) == (True, False, 1)
    assert named == actual


def test_tuner_does_nothing_without_per_thread_connections() -> None:
    class SharedConnections:  # py4j's older mode: no get_thread_connection
        _gateway_client = object()

    tuner = ConnectionTuner(SharedConnections())
    assert tuner.ensure() is False and tuner.tuned_count == 0


def test_agent_records_wall_and_cpu_time_and_names_its_threads(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    for number in range(2):
        spark.range(50).selectExpr("id", "id * 2 AS twice").write.parquet(
            str(tmp_path / f"out{number}")
        )
    lineage.events()
    stats = lineage.agent.emitter.metrics.snapshot()
    assert len(stats["build_seconds"]) == len(stats["build_cpu_seconds"]) == 2
    assert len(stats["capture_seconds"]) == len(stats["capture_cpu_seconds"]) >= 2
    for wall, cpu in zip(stats["build_seconds"], stats["build_cpu_seconds"], strict=True):
        assert 0 < cpu and 0 < wall
    # The named Python threads are the process's own, alive while the agent is open.
    tasks = {int(t) for t in os.listdir("/proc/self/task")}
    assert {"capture", "emitter"} <= stats["threads"].keys()
    assert set(stats["threads"].values()) <= tasks
    # The JVM thread serving the worker's calls is a live JVM thread that used CPU.
    mx = spark._jvm.java.lang.management.ManagementFactory.getThreadMXBean()
    assert mx.getThreadCpuTime(stats["jvm_threads"]["capture"]) > 0
    # ...and its connection has TCP_NODELAY: it is the worker's, found by the agent.
    assert lineage.agent._tuner.tuned_count == 1


def test_relation_hashes_come_in_one_chain_and_match_each_leafs_own(
    spark: Any, tmp_path: Path
) -> None:
    from headwater.agent.jvm import RelationHashes

    for name in ("a", "b"):
        spark.createDataFrame([(1, "x")], ["k", "v"]).write.parquet(str(tmp_path / name))
    a, b = spark.read.parquet(str(tmp_path / "a")), spark.read.parquet(str(tmp_path / "b"))
    frame = a.union(spark.range(1).selectExpr("id AS k", "'y' AS v")).union(b).union(a)
    leaves = frame._jdf.queryExecution().optimizedPlan().collectLeaves()
    own = [
        int(leaves.apply(i).semanticHash())
        for i in range(leaves.size())
        if str(leaves.apply(i).getClass().getSimpleName()) == "LogicalRelation"
    ]
    assert len(own) == 3
    hashes = RelationHashes(spark._jvm)
    assert hashes(leaves) == own
    # The same relation read twice hashes alike; another directory does not.
    assert own[0] == own[2] != own[1]


def test_relation_hashes_give_up_quietly_when_the_jvm_cannot(spark: Any) -> None:
    from headwater.agent.jvm import RelationHashes

    class NotASeq:
        def filter(self, function: Any) -> Any:
            raise RuntimeError("no such method")

    hashes = RelationHashes(spark._jvm)
    assert hashes(NotASeq()) is None
    assert hashes(NotASeq()) is None  # and does not try again


def test_capture_with_batched_hashes_equals_capture_leaf_by_leaf(
    spark: Any, tmp_path: Path
) -> None:
    from headwater.agent.capture import RelationCache, capture_plan
    from headwater.agent.jvm import RelationHashes

    for name in ("a", "b"):
        spark.createDataFrame([(1, "x")], ["k", "v"]).write.parquet(str(tmp_path / name))
    a, b = spark.read.parquet(str(tmp_path / "a")), spark.read.parquet(str(tmp_path / "b"))
    jplan = a.union(b).union(a).union(b)._jdf.queryExecution().optimizedPlan()
    batched = capture_plan(
        jplan, relations=RelationCache(), relation_hashes=RelationHashes(spark._jvm)
    )
    alone = capture_plan(jplan, relations=RelationCache())
    assert batched.facts == alone.facts
    paths = sorted(f["root_paths"][0] for f in batched.facts.values())
    assert [p.rsplit("/", 1)[1] for p in paths] == ["a", "a", "b", "b"]


def _reported_writes(spark: Any, write: Any) -> list[tuple[Any, Any]]:
    """Run ``write()``; return the QueryExecution and optimized plan of each action
    Spark reported for it."""
    from headwater.agent.listener import ActionListener, LogOnce
    from headwater.agent.py4j.handles import callback_gateway, java_context, java_session

    pending: list[Any] = []
    gateway = callback_gateway(spark.sparkContext)
    listener = ActionListener(java_session(spark), gateway.jvm, pending.append, LogOnce())
    java_session(spark).listenerManager().register(listener)
    try:
        write()
        java_context(spark.sparkContext).sc().listenerBus().waitUntilEmpty(60_000)
    finally:
        java_session(spark).listenerManager().unregister(listener)
    return [(item.qe, item.jplan) for item in pending]


def test_chains_answer_as_the_calls_step_by_step(spark: Any, tmp_path: Path) -> None:
    from headwater.agent.py4j.chains import JvmChain
    from headwater.agent.jvm import RelationHashes, _write_metrics
    from headwater.agent.sources.files import insert_fs_facts

    spark.range(30).selectExpr("id", "id % 3 AS k").write.parquet(str(tmp_path / "src"))
    src = spark.read.parquet(str(tmp_path / "src"))
    frame = src.union(src).join(src.select("id"), "id")
    [(qe, jplan)] = _reported_writes(
        spark, lambda: frame.write.mode("append").parquet(str(tmp_path / "out"))
    )

    facts = insert_fs_facts(jplan)
    assert facts["output_path"] == str(jplan.outputPath().toString()).rstrip("/")
    assert facts["output_path"].endswith("/out") and facts["mode"] == "Append"
    assert facts["query_schema"]["fields"][0]["name"] == "id"

    to_string = JvmChain(("java.lang.Object", "toString", ()))
    assert to_string(jplan.outputPath()) == str(jplan.outputPath().toString())

    plan = qe.executedPlan()
    while str(plan.nodeName()) == "AdaptiveSparkPlan" or str(plan.nodeName()).endswith(
        "QueryStage"
    ):
        plan = plan.executedPlan() if str(plan.nodeName()) == "AdaptiveSparkPlan" else plan.plan()
    metrics = plan.cmd().metrics()
    one_by_one = {
        key: int(metrics.apply(key).value())
        for key in ("numOutputRows", "numOutputBytes", "numFiles")
    }
    found = _write_metrics(plan)
    # One metric's id, which names the write's execution in Spark's status store.
    assert found.pop("write_metric_id") in {int(metrics.apply(key).id()) for key in one_by_one}
    assert found == one_by_one and one_by_one["numOutputRows"] == 60

    # The leaf count and the relations' hashes in one call, as leaf by leaf.
    hashes = RelationHashes(spark._jvm)
    count, found = hashes.of_plan(jplan)
    leaves = jplan.collectLeaves()
    assert count == int(leaves.size()) == 3
    assert found == hashes(leaves) == [int(leaves.apply(i).semanticHash()) for i in range(3)]


def test_a_chain_the_jvm_cannot_build_falls_back_and_is_not_retried(spark: Any) -> None:
    from headwater.agent.py4j.chains import ChainUnavailable, JvmChain, chained

    missing = JvmChain(("java.lang.Object", "noSuchMethod", ()))
    target = spark._jvm.java.lang.StringBuilder("abc")
    with pytest.raises(ChainUnavailable):
        missing(target)
    assert missing._unavailable
    assert chained(missing, lambda t: str(t.toString()), target) == "abc"
    # A chain that runs but fails inside the JVM raises as py4j does, and stays usable.
    from py4j.protocol import Py4JJavaError

    length = JvmChain(("java.lang.CharSequence", "length", ()))
    with pytest.raises(Py4JJavaError):
        length(spark._jvm.java.util.ArrayList())
    assert length(target) == 3 and not length._unavailable


def test_sql_text_comes_from_the_origin_in_one_call(spark: Any, tmp_path: Path) -> None:
    from headwater.agent.sql_calls import statement_text

    spark.range(3).createOrReplaceTempView("sql_text_src")
    statement = (
        f"INSERT OVERWRITE DIRECTORY '{tmp_path / 'dir'}' USING parquet SELECT id FROM sql_text_src"
    )
    reported = _reported_writes(spark, lambda: spark.sql(statement))
    assert statement in [statement_text(qe) for qe, _ in reported]
    [(qe, _)] = _reported_writes(
        spark, lambda: spark.range(2).write.parquet(str(tmp_path / "plain"))
    )
    assert statement_text(qe) is None


#: py4j method names that load a table from a catalog (a v2 catalog's, the session catalog's).
_CATALOG_LOADS = ("\nloadTable\n", "\ngetTableMetadata\n", "\ngetTableRawMetadata\n")


class _ListenerThreadCalls:
    """Counts, per listener callback, the py4j calls made on Spark's listener thread and
    how many of them load a table from a catalog, by the class of the plan's root."""

    def __init__(self, spark: Any, agent: Any) -> None:
        self._listener = agent._listener
        self._client = spark.sparkContext._gateway._gateway_client
        self._local = threading.local()
        self.seen: list[tuple[str, int, int]] = []
        on_action_scoped = self._listener._on_action_scoped
        send_command = self._client.send_command

        def counted_callback(func_name: str, qe: Any, *rest: Any) -> None:
            self._local.counts = [0, 0]
            try:
                on_action_scoped(func_name, qe, *rest)
            finally:
                (calls, loads), self._local.counts = self._local.counts, None
                self.seen.append((str(qe.optimizedPlan().getClass().getSimpleName()), calls, loads))

        def counted_send(command: str, *args: Any, **kwargs: Any) -> Any:
            counts = getattr(self._local, "counts", None)
            if counts is not None:
                counts[0] += 1
                counts[1] += any(name in command for name in _CATALOG_LOADS)
            return send_command(command, *args, **kwargs)

        self._listener._on_action_scoped = counted_callback
        self._client.send_command = counted_send

    def run(self, spark: Any, statement: str) -> dict[str, tuple[int, int]]:
        """Run ``statement``; the (calls, catalog loads) of each callback by root class."""
        before = len(self.seen)
        spark.sql(statement)
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
        return {root: (calls, loads) for root, calls, loads in self.seen[before:]}

    def close(self) -> None:
        del self._listener._on_action_scoped
        del self._client.send_command


@needs_connectors("delta", "iceberg")
def test_listener_thread_calls_and_catalog_loads_per_action_kind(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    """What each kind of action costs Spark's listener thread, in py4j calls and catalog
    loads (``benchmarks/listener_thread.py`` times them): a write or an atomic Iceberg
    CTAS/RTAS loads no table; a create that wrote no Iceberg staged table, and an
    ALTER, load one."""
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ice.cost")
    names = ("cost_d", "cost_dc", "ice.cost.t", "ice.cost.c")
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    meter = _ListenerThreadCalls(spark, lineage.agent)
    rows = "SELECT id, CAST(id AS STRING) AS v FROM range(5)"
    statements = {
        "files": f"INSERT OVERWRITE DIRECTORY '{tmp_path}/files' USING parquet {rows}",
        "d_create": "CREATE TABLE cost_d (id BIGINT, v STRING) USING delta",
        "d_insert": f"INSERT INTO cost_d {rows}",
        "d_alter": "ALTER TABLE cost_d ADD COLUMNS (extra INT)",
        "d_ctas": f"CREATE TABLE cost_dc USING delta AS {rows}",
        "d_rtas": f"CREATE OR REPLACE TABLE cost_dc USING delta AS {rows}",
        "i_create": "CREATE TABLE ice.cost.t (id BIGINT, v STRING) USING iceberg",
        "i_insert": f"INSERT INTO ice.cost.t {rows}",
        "i_alter": "ALTER TABLE ice.cost.t ADD COLUMNS (extra INT)",
        "i_ctas": f"CREATE TABLE ice.cost.c USING iceberg AS {rows}",
        "i_rtas": f"CREATE OR REPLACE TABLE ice.cost.c USING iceberg AS {rows}",
    }
    if SPARK_LINE == "3.5":
        # Delta 3.x on Spark 3.5 refuses an RTAS on a session-catalog table ("does not
        # support truncate in batch mode"): the statement never runs there.
        del statements["d_rtas"]
    try:
        for statement in statements.values():  # once to build the listener thread's chains
            meter.run(spark, statement)
        lineage.events()
        for name in names:
            spark.sql(f"DROP TABLE {name}")
        by_kind = {kind: meter.run(spark, statement) for kind, statement in statements.items()}
    finally:
        meter.close()
        for name in names:
            spark.sql(f"DROP TABLE IF EXISTS {name}")
    counted = list(by_kind.values())
    files, d_create, d_insert, d_ctas = (
        by_kind[k] for k in ("files", "d_create", "d_insert", "d_ctas")
    )
    i_create, i_insert, i_ctas, i_rtas = (
        by_kind[k] for k in ("i_create", "i_insert", "i_ctas", "i_rtas")
    )
    assert files["InsertIntoDataSourceDirCommand"] == (3, 0), counted
    # A write pins the table its plan holds: no catalog load.
    assert d_insert["AppendData"][0] <= 6 and d_insert["AppendData"][1] == 0, counted
    assert i_insert["AppendData"][0] <= 7 and i_insert["AppendData"][1] == 0, counted
    # An atomic Iceberg CTAS/RTAS pins the staged table its write held.
    for created, root in ((i_ctas, "CreateTableAsSelect"), (i_rtas, "ReplaceTableAsSelect")):
        assert created[root][0] <= 7 and created[root][1] == 0, counted
    # A plain create wrote nothing to take its table from, and a Delta CTAS/RTAS's staged
    # table holds no committed state: one catalog load each, and no more (a Delta table
    # loaded also has its log's newest snapshot held: one call).
    assert i_create["CreateTable"][0] <= 9 and i_create["CreateTable"][1] == 1, counted
    delta_creates = [(d_create, "CreateTable"), (d_ctas, "CreateTableAsSelect")]
    if "d_rtas" in by_kind:
        delta_creates.append((by_kind["d_rtas"], "ReplaceTableAsSelect"))
    for created, root in delta_creates:
        assert created[root][0] <= 9 and created[root][1] == 1, counted
    # An ALTER pins the table it left, loaded from its catalog (the plan holds the table
    # as it was before); the columns it added are read on the capture thread.
    i_alter, d_alter = by_kind["i_alter"], by_kind["d_alter"]
    assert i_alter["AddColumns"][0] <= 9 and i_alter["AddColumns"][1] == 1, counted
    assert d_alter["AddColumns"][0] <= 9 and d_alter["AddColumns"][1] == 1, counted
    # Every other callback (Delta's own executions, read-only plans) reads a plan class only.
    for callbacks in counted:
        for calls, loads in callbacks.values():
            assert loads <= 1 and calls <= 9, counted
