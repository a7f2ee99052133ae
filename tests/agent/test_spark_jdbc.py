"""JDBC on a real SparkSession against a real PostgreSQL: reads with ``dbtable`` and
with ``query`` (one input dataset per table the SQL reads, column lineage through
the SQL), writes with ``df.write.jdbc`` and ``format("jdbc").save()``, and no
password in any event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.postgres]

PASSWORD = "s3cr3t-never-emitted"


class Database:
    """One fresh PostgreSQL database, as psycopg and as Spark's JDBC reader see it."""

    def __init__(self, sqlalchemy_url: str) -> None:
        parts = urlsplit(sqlalchemy_url)
        self.host, self.port, self.name = parts.hostname, parts.port, parts.path.lstrip("/")
        self.user = parts.username or "postgres"
        self.jdbc_url = f"jdbc:postgresql://{self.host}:{self.port}/{self.name}"
        self.namespace = f"postgres://{self.host}:{self.port}"

    def execute(self, *statements: str) -> None:
        import psycopg

        dsn = f"postgresql://{self.user}@{self.host}:{self.port}/{self.name}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def options(self, **extra: str) -> dict[str, str]:
        # The test cluster trusts local connections: the password is sent and ignored.
        return {"url": self.jdbc_url, "user": self.user, "password": PASSWORD, "driver": "org.postgresql.Driver", **extra}

    def read(self, spark: Any, **extra: str) -> Any:
        return spark.read.format("jdbc").options(**self.options(**extra)).load()


@pytest.fixture
def db(pg_url: str) -> Database:
    database = Database(pg_url)
    database.execute(
        "CREATE TABLE jdbc_source1 (k integer, j1 text)",
        "CREATE TABLE jdbc_source2 (k integer, j2 text)",
        "INSERT INTO jdbc_source1 VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO jdbc_source2 VALUES (1, 'c'), (2, 'd')",
    )
    return database


def _complete(events: list[dict[str, Any]]) -> dict[str, Any]:
    return [e for e in events if e["eventType"] == "COMPLETE"][-1]


def _input_fields(output: dict[str, Any], column: str) -> dict[tuple[str, str], set[tuple[str, str]]]:
    fields = output["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return {
        (item["name"], item["field"]): {(t["type"], t["subtype"]) for t in item["transformations"]}
        for item in fields
    }


def _dataset_fields(output: dict[str, Any]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """The columnLineage facet's ``dataset`` list (the agent tests' session keeps
    the listener's default, datasetLineageEnabled)."""
    return {
        (item["name"], item["field"]): {(t["type"], t["subtype"]) for t in item["transformations"]}
        for item in output["facets"]["columnLineage"]["dataset"]
    }


def _schema(dataset: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["name"], f["type"]) for f in dataset["facets"]["schema"]["fields"]]


def test_dbtable_and_query_reads_name_the_same_table(spark, lineage, db: Database, tmp_path: Path):
    db.read(spark, dbtable="jdbc_source1").write.parquet(str(tmp_path / "by_table"))
    by_table = _complete(lineage.action_events())
    db.read(spark, query="SELECT k, j1 FROM jdbc_source1 WHERE k > 0").write.parquet(str(tmp_path / "by_query"))
    by_query = _complete(lineage.action_events())

    expected = (db.namespace, f"{db.name}.jdbc_source1")
    for event in (by_table, by_query):
        (read,) = event["inputs"]
        assert (read["namespace"], read["name"]) == expected
        assert _schema(read) == [("k", "integer"), ("j1", "string")]
        assert read["facets"]["dataSource"]["uri"] == db.namespace
        assert read["facets"]["datasetType"]["datasetType"] == "TABLE"
    assert "SPARK_GEN_SUBQ" not in json.dumps(by_query)
    output = by_query["outputs"][0]
    assert _input_fields(output, "j1") == {(expected[1], "j1"): {("DIRECT", "IDENTITY")}}
    assert _dataset_fields(output) == {(expected[1], "k"): {("INDIRECT", "FILTER")}}


def test_query_over_two_tables_gives_one_input_per_table(spark, lineage, db: Database, tmp_path: Path):
    query = "select js1.k, CONCAT(js1.j1, js2.j2) as j from jdbc_source1 js1 join jdbc_source2 js2 on js1.k = js2.k"
    db.read(spark, query=query).write.parquet(str(tmp_path / "joined"))
    event = _complete(lineage.action_events())
    source1, source2 = f"{db.name}.jdbc_source1", f"{db.name}.jdbc_source2"
    inputs = {d["name"]: d for d in event["inputs"]}
    assert set(inputs) == {source1, source2}
    assert {d["namespace"] for d in event["inputs"]} == {db.namespace}
    assert _schema(inputs[source1]) == [("k", "integer"), ("j1", "string")]
    assert _schema(inputs[source2]) == [("j2", "string")]

    output = event["outputs"][0]
    assert _input_fields(output, "j") == {
        (source1, "j1"): {("DIRECT", "TRANSFORMATION")},
        (source2, "j2"): {("DIRECT", "TRANSFORMATION")},
    }
    assert _input_fields(output, "k") == {(source1, "k"): {("DIRECT", "IDENTITY")}}
    assert _dataset_fields(output) == {(source1, "k"): {("INDIRECT", "JOIN")}, (source2, "k"): {("INDIRECT", "JOIN")}}


def test_spark_transformations_compose_with_the_sql_ones(spark, lineage, db: Database, tmp_path: Path):
    from pyspark.sql import functions as F

    df = db.read(spark, query="SELECT k, upper(j1) AS u FROM jdbc_source1")
    df.groupBy("u").agg(F.sum("k").alias("total")).write.parquet(str(tmp_path / "agg"))
    output = _complete(lineage.action_events())["outputs"][0]
    source = f"{db.name}.jdbc_source1"
    assert _input_fields(output, "total") == {(source, "k"): {("DIRECT", "AGGREGATION")}}
    assert _input_fields(output, "u") == {(source, "j1"): {("DIRECT", "TRANSFORMATION")}}
    # Spark groups by u, which the SQL computes from j1.
    assert _dataset_fields(output) == {(source, "j1"): {("INDIRECT", "GROUP_BY")}}


def test_dbtable_subquery_reads_its_tables(spark, lineage, db: Database, tmp_path: Path):
    db.read(spark, dbtable="(SELECT k AS key FROM public.jdbc_source2 WHERE j2 <> 'x') AS sub").write.parquet(
        str(tmp_path / "sub")
    )
    event = _complete(lineage.action_events())
    assert [(d["namespace"], d["name"]) for d in event["inputs"]] == [(db.namespace, f"{db.name}.public.jdbc_source2")]
    table = f"{db.name}.public.jdbc_source2"
    assert _input_fields(event["outputs"][0], "key") == {(table, "k"): {("DIRECT", "IDENTITY")}}
    assert _dataset_fields(event["outputs"][0]) == {(table, "j2"): {("INDIRECT", "FILTER")}}


def test_jdbc_writes_name_the_table_with_schema_and_lineage(spark, lineage, db: Database):
    source = db.read(spark, dbtable="jdbc_source1").select("k", "j1")
    source.write.jdbc(db.jdbc_url, "public.target", mode="overwrite", properties=db.options())
    event = _complete(lineage.action_events())
    assert event["job"]["name"] == "headwater_agent_tests.execute_save_into_data_source_command.public_target"
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == (db.namespace, f"{db.name}.public.target")
    assert _schema(output) == [("k", "integer"), ("j1", "string")]
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert _input_fields(output, "j1") == {(f"{db.name}.jdbc_source1", "j1"): {("DIRECT", "IDENTITY")}}
    assert "catalog" not in output["facets"]

    source.write.format("jdbc").options(**db.options(dbtable="target")).mode("append").save()
    event = _complete(lineage.action_events())
    (output,) = event["outputs"]
    assert output["name"] == f"{db.name}.target"
    assert "lifecycleStateChange" not in output["facets"]
    assert event["job"]["name"].endswith(".execute_save_into_data_source_command.target")


def test_no_password_in_any_event(spark, db: Database, tmp_path: Path):
    from tests.agent.conftest import Lineage

    # With the plan facet too: the plan's JSON carries the write's options.
    lineage = Lineage(spark, tmp_path / "events.jsonl", disabled_facets=frozenset())
    try:
        _read_and_write_with_password(spark, lineage, db)
    finally:
        lineage.close()


def _read_and_write_with_password(spark: Any, lineage: Any, db: Database) -> None:
    url = f"{db.jdbc_url}?user={db.user}&password={PASSWORD}"
    df = spark.read.jdbc(url, "jdbc_source1", properties={"password": PASSWORD, "driver": "org.postgresql.Driver"})
    df.write.jdbc(url, "copy1", mode="overwrite", properties={"password": PASSWORD, "driver": "org.postgresql.Driver"})
    events = lineage.action_events()
    event = _complete(events)
    assert [d["name"] for d in event["inputs"]] == [f"{db.name}.jdbc_source1"]
    assert [d["name"] for d in event["outputs"]] == [f"{db.name}.copy1"]
    assert "spark.logicalPlan" in event["run"]["facets"]
    assert PASSWORD not in lineage.path.read_text()
