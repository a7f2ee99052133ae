"""The ``sql`` job facet of statements run through ``spark.sql``, on every Spark line:
from the plan's origin where Spark keeps it there, else from the ``spark.sql`` call
that ran the command (Spark 4.3 builds a CREATE TABLE's or a CTAS's command anew,
without the text)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

_TABLES = ("hw_sqltext_a", "hw_sqltext_b", "hw_sqltext_c")


@pytest.fixture
def clean_tables(spark: Any) -> Any:
    for name in _TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    yield
    for name in _TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


class _Reported:
    """A ``QueryExecutionListener`` keeping each action's ``QueryExecution``."""

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]

    def __init__(self) -> None:
        self.actions: list[tuple[str, Any, float]] = []
        self._lock = threading.Lock()

    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:  # noqa: N802,N803
        with self._lock:
            self.actions.append((funcName, qe, time.time()))

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:  # noqa: N802,N803
        pass


def _reported(spark: Any, run: Any) -> list[tuple[str, Any, float]]:
    from headwater.agent.py4j.handles import callback_gateway, java_context, java_session

    callback_gateway(spark.sparkContext)
    listener = _Reported()
    java_session(spark).listenerManager().register(listener)
    try:
        run()
        java_context(spark.sparkContext).sc().listenerBus().waitUntilEmpty(60_000)
    finally:
        java_session(spark).listenerManager().unregister(listener)
    return listener.actions


def _root_class(qe: Any) -> str:
    from headwater.agent.plan import short_class

    return short_class(str(qe.logical().getClass().getName()))


def test_a_command_finds_its_text_through_the_spark_sql_call_that_ran_it(
    spark: Any, clean_tables: Any, tmp_path: Path
) -> None:
    from headwater.agent.sql_calls import SqlCalls

    create = "CREATE TABLE hw_sqltext_a (k INT, v STRING) USING parquet"
    ctas = "CREATE TABLE hw_sqltext_b USING parquet AS SELECT 1 AS k, 'x' AS v"
    calls = SqlCalls()
    calls.wrap(spark)
    try:
        assert "sql" in vars(spark)

        def run() -> None:
            spark.sql("SELECT 1 AS one").collect()
            spark.sql(create)
            spark.sql(ctas)
            spark.range(2).write.parquet(str(tmp_path / "plain"))

        reported = _reported(spark, run)
        found = {
            _root_class(qe): calls.text_for(qe, _root_class(qe), when)
            for name, qe, when in reported
            if name != "collect"
        }
    finally:
        calls.unwrap()
    assert "sql" not in vars(spark)  # the session's own method again
    assert create in found.values() and ctas in found.values()
    # A DataFrame write ran through no spark.sql call, and gets no text.
    assert found["InsertIntoHadoopFsRelationCommand"] is None


def test_spark_sql_answers_and_fails_as_without_the_agent(spark: Any) -> None:
    from headwater.agent.sql_calls import SqlCalls

    own = spark.sql
    with pytest.raises(Exception) as without:
        own("SELEC 1")
    calls = SqlCalls()
    calls.wrap(spark)
    try:
        assert spark.sql("SELECT {n} AS n", n=3).collect()[0]["n"] == 3
        with pytest.raises(Exception) as under:
            spark.sql("SELEC 1")
    finally:
        calls.unwrap()
    assert type(under.value) is type(without.value)
    assert str(under.value) == str(without.value)


def test_create_and_ctas_through_spark_sql_carry_the_sql_facet(
    spark: Any, lineage: Any, clean_tables: Any
) -> None:
    create = "CREATE TABLE hw_sqltext_a (k INT, v STRING) USING parquet"
    ctas = "CREATE TABLE hw_sqltext_c USING parquet AS SELECT k, v FROM hw_sqltext_a"
    spark.sql(create)
    spark.sql(ctas)
    spark.table("hw_sqltext_a").write.mode("append").saveAsTable("hw_sqltext_b")
    events = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE"]
    by_query = {e["job"]["facets"].get("sql", {}).get("query"): e["job"]["name"] for e in events}
    assert create in by_query and ctas in by_query, by_query
    assert "create_data_source_table_as_select" in by_query[ctas]
    (save,) = [e for e in events if e["job"]["name"].endswith("hw_sqltext_b")]
    assert "sql" not in save["job"]["facets"]
