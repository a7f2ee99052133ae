"""PySpark jobs equivalent to the OpenLineage Spark suite's scenarios (README table).

Each :class:`Scenario` names the job namespace and application name the suite
runs it with, the warehouse directory and the session profile (one JVM per
warehouse and profile: both are static Spark settings; profiles are in
``sessions.py``), extra ``spark.openlineage.*`` keys, and the expected files in
the order they must arrive. ``job(spark)`` is the PySpark written for headwater.

The session-catalog scenarios are here; each connector's scenarios live in a
module of their own (``scenarios_<connector>.py``), collected at the end.
"""

from __future__ import annotations

import random
from typing import Any

from tests.conformance.spark.scenario import Scenario, clean, drop
from tests.conformance.spark.scenarios_connectors import CONNECTOR_SCENARIOS

PARENT_RUN_ID = "bd9c2467-3ed7-4fdc-85c2-41ebf5c73b40"


def word_count(spark: Any) -> None:
    clean("/tmp/test_data/test_output")
    lines = spark.read.text("/test_data/data.txt")
    words = lines.selectExpr("explode(split(value, ' ')) AS value").where("value != ''")
    words.groupBy("value").count().write.mode("overwrite").csv("/tmp/test_data/test_output")


def rdd_to_table(spark: Any) -> None:
    clean("/tmp/test_data/rdd_to_csv_output", "/tmp/test_data/rdd_to_table")
    rows = [(random.choice(["ann", "bob", "cid"]), random.randint(1, 90)) for _ in range(50)]
    rdd = spark.sparkContext.parallelize(rows)
    rdd.setName("list of random words and numbers")
    rdd.map(lambda r: f"{r[0]},{r[1]}").saveAsTextFile("/tmp/test_data/rdd_to_csv_output/")
    people = spark.read.schema("name STRING, age INT").csv("/tmp/test_data/rdd_to_csv_output")
    people.createOrReplaceTempView("people")
    spark.sql("SELECT name, age FROM people WHERE age BETWEEN 20 AND 65").write.mode(
        "overwrite"
    ).parquet("/tmp/test_data/rdd_to_table")


def hive(spark: Any) -> None:
    drop(spark, "test", "target")
    spark.sql("CREATE TABLE test (key INT, value STRING) USING hive")
    spark.sql("INSERT INTO test VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql("CREATE TABLE target (key INT, value STRING) USING hive")
    spark.sql("INSERT INTO target SELECT key, value FROM test WHERE key > 1")


def hadoop_fs(spark: Any) -> None:
    drop(spark, "test", "target")
    spark.sql("CREATE TABLE test (key INT, value STRING) USING parquet")
    spark.sql("INSERT INTO test VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql("CREATE TABLE target (key INT, value STRING) USING parquet")
    spark.sql("INSERT INTO target SELECT key, value FROM test WHERE key > 1")


def overwrite_dir(spark: Any) -> None:
    drop(spark, "test")
    clean("/tmp/overwrite/table")
    spark.sql("CREATE TABLE test (key INT, value STRING) USING hive")
    spark.sql("INSERT OVERWRITE DIRECTORY '/tmp/overwrite/table' USING hive VALUES (1, 'a')")
    spark.sql("SELECT count(*) FROM test").collect()


def ctas_load(spark: Any) -> None:
    drop(spark, "temp", "tbl1")
    clean("/tmp/ctas_load/temp", "/tmp/ctas_load/tbl1")
    spark.createDataFrame([(1, 2), (3, 4)], ["a", "b"]).write.saveAsTable("temp")
    spark.sql("CREATE TABLE tbl1 USING hive LOCATION '/tmp/ctas_load/tbl1' AS SELECT a, b FROM temp")
    spark.sql("LOAD DATA LOCAL INPATH '/test_data/test_data.csv' INTO TABLE tbl1")


def optimized_ctas(spark: Any) -> None:
    drop(spark, "temp", "tbl2")
    clean("/tmp/ctas_load/temp", "/tmp/ctas_load/tbl2")
    spark.createDataFrame([(1, 2), (3, 4)], ["a", "b"]).write.saveAsTable("temp")
    spark.sql("CREATE TABLE tbl2 STORED AS PARQUET AS SELECT a, b FROM temp")


def column_lineage(spark: Any) -> None:
    drop(spark, "cll_source1", "cll_source2", "tbl1")
    clean("/tmp/cll_test/cll_source1", "/tmp/cll_test/cll_source2", "/tmp/cll_test/tbl1")
    spark.sql("CREATE TABLE cll_source1 (a INT, b STRING) USING parquet")
    spark.sql("CREATE TABLE cll_source2 (a INT, c INT) USING parquet")
    spark.sql(
        """CREATE TABLE tbl1 USING parquet AS
           SELECT t1.a AS ident, concat(t1.b, 'test') AS trans, SUM(t2.c) AS agg
           FROM cll_source1 t1
           JOIN (SELECT a, c FROM cll_source2 WHERE a > 1) t2 ON t1.a = t2.a
           GROUP BY t1.a, t1.b"""
    )


def cached(spark: Any) -> None:
    drop(spark, "temp", "target")
    clean("/tmp/caching/temp", "/tmp/caching/target")
    spark.createDataFrame([(1, 2), (3, 4)], ["a", "b"]).write.saveAsTable("temp")
    df = spark.table("temp").cache()
    df.count()
    df.select("a").write.saveAsTable("target")
    df.unpersist()


def create_table(spark: Any) -> None:
    drop(spark, "create_table_test")
    clean("/tmp/create_test/create_table_test")
    spark.sql("CREATE TABLE create_table_test (a STRING, b STRING) USING hive")


def hive_catalog_symlink(spark: Any) -> None:
    # The suite runs this with spark.sql.hive.metastore.uris set: Spark does not
    # read that key (it stays on its embedded metastore), the listener names tables by it.
    drop(spark, "test")
    spark.sql("CREATE TABLE IF NOT EXISTS test (key INT, value STRING) USING hive")


def drop_table(spark: Any) -> None:
    clean("/tmp/drop_test/drop_table_test")
    spark.sql("CREATE TABLE IF NOT EXISTS drop_table_test (a STRING, b STRING) USING hive")
    spark.sql("DROP TABLE drop_table_test")


def truncate_table(spark: Any) -> None:
    drop(spark, "truncate_table_test")
    clean("/tmp/truncate_test/truncate_table_test")
    spark.sql("CREATE TABLE truncate_table_test (a STRING, b STRING) USING hive")
    spark.sql("TRUNCATE TABLE truncate_table_test")


def alter_table(spark: Any) -> None:
    drop(spark, "alter_table_test", "alter_table_test_new")
    clean("/tmp/alter_test/alter_table_test", "/tmp/alter_test/alter_table_test_new")
    spark.sql("CREATE TABLE alter_table_test (a STRING, b STRING) USING hive")
    spark.sql("ALTER TABLE alter_table_test ADD COLUMNS (c STRING, d STRING)")
    spark.sql("ALTER TABLE alter_table_test RENAME TO alter_table_test_new")


def hive_ctas_commands(spark: Any) -> None:
    clean("/tmp/hive-metastore/hive3.db")
    spark.sql("DROP DATABASE IF EXISTS hive3 CASCADE")
    spark.sql("CREATE DATABASE hive3 LOCATION '/tmp/hive-metastore/hive3.db'")
    spark.sql("CREATE TABLE hive3.table1 (city STRING) USING parquet")
    spark.sql("INSERT INTO hive3.table1 VALUES ('Warsaw')")
    spark.sql("CREATE TABLE hive3.table2 USING parquet AS SELECT city FROM hive3.table1")
    spark.sql("DROP TABLE hive3.table2")
    spark.sql("CREATE TABLE hive3.table2 USING hive AS SELECT city FROM hive3.table1")


def single_rdd_statistics(spark: Any) -> None:
    clean("/tmp/rdd_input", "/tmp/rdd_output")
    spark.createDataFrame([(i, f"v{i}") for i in range(4)], ["k", "v"]).write.parquet("/tmp/rdd_input")
    rows = spark.read.parquet("/tmp/rdd_input").rdd.map(lambda row: (row[0] * 2, row[1]))
    rows.toDF(["k", "v"]).write.mode("overwrite").parquet("/tmp/rdd_output")


def emit_metrics(spark: Any) -> None:
    drop(spark, "create_table_emit_test")
    clean("/tmp/emit_test/create_table_emit_test")
    spark.sql("CREATE TABLE create_table_emit_test (a STRING, b STRING) USING hive")


def rdd_with_parquet(spark: Any) -> None:
    clean("/tmp/rdd_a", "/tmp/rdd_b", "/tmp/rdd_c")
    spark.createDataFrame([("a",), ("b",)], ["value"]).write.parquet("/tmp/rdd_a")
    spark.createDataFrame([("c",)], ["value"]).write.parquet("/tmp/rdd_b")
    first = spark.read.parquet("/tmp/rdd_a").rdd.map(lambda row: (row[0],))
    second = spark.read.parquet("/tmp/rdd_b").rdd.map(lambda row: (row[0],))
    first.union(second).toDF().write.mode("overwrite").parquet("/tmp/rdd_c")


def application_level(spark: Any) -> None:
    clean("/tmp/app_level")
    spark.createDataFrame([(1, "a")], ["k", "v"]).write.parquet("/tmp/app_level")


_PLAN_FACETS = {
    "spark.openlineage.facets.spark_unknown.disabled": "false",
    "spark.openlineage.facets.spark.logicalPlan.disabled": "false",
}

_PARENT_CONF = {
    "spark.openlineage.parentJobNamespace": "parent-namespace",
    "spark.openlineage.parentJobName": "parent-job",
    "spark.openlineage.parentRunId": PARENT_RUN_ID,
}

_SESSION_CATALOG: tuple[Scenario, ...] = (
    Scenario(
        "single rdd statistics",
        "testSingleRDDStatistics",
        "Open Lineage Integration Single RDD Statistics",
        "/tmp/warehouse",
        ("pysparkSingleRDDStatistics",),
        single_rdd_statistics,
    ),
    Scenario(
        "debug facet",
        "testEmitMetrics",
        "Open Lineage Integration Emit Metrics",
        "/tmp/emit_test",
        ("pysparkMetricsEnd",),
        emit_metrics,
        conf={"spark.openlineage.facets.debug.disabled": "false"},
    ),
    Scenario(
        "word count",
        "testPysparkWordCountWithCliArgs",
        "Open Lineage Integration Word Count",
        "/tmp/warehouse",
        (
            "pysparkWordCountWithCliArgsStartEvent",
            "pysparkWordCountWithCliArgsRunningEvent",
            "pysparkWordCountWithCliArgsCompleteEvent",
        ),
        word_count,
    ),
    Scenario(
        "rdd to table",
        "testPysparkRddToTable",
        "Spark RDD to Table",
        "/tmp/warehouse",
        (
            "pysparkRddToCsvStartEvent",
            "pysparkRddToCsvCompleteEvent",
            "pysparkRddToTableStartEvent",
            "pysparkRddToTableRunningEvent",
            "pysparkRddToTableCompleteEvent",
        ),
        rdd_to_table,
    ),
    Scenario(
        "hive",
        "testPysparkSQLHiveTest",
        "Open Lineage Integration Hive",
        "/tmp/warehouse",
        (
            "pysparkHiveStartEvent",
            "pysparkHiveRunningEvent",
            "pysparkHiveCompleteEvent",
            "pysparkHiveSelectStartEvent",
            "pysparkHiveSelectEndEvent",
        ),
        hive,
        conf=_PLAN_FACETS,
    ),
    Scenario(
        "hadoop fs relation",
        "testPysparkSQLHadoopFSTest",
        "Open Lineage Integration Hadoop FS Relation",
        "/tmp/warehouse",
        ("pysparkHadoopFSStartEvent", "pysparkHadoopFSEndEvent"),
        hadoop_fs,
    ),
    Scenario(
        "overwrite app name",
        "testPysparkSQLHiveTest",
        "app_name",
        "/tmp/warehouse",
        (
            "pysparkOverwriteNameStartEvent",
            "pysparkOverwriteNameRunningEvent",
            "pysparkOverwriteNameCompleteEvent",
        ),
        hive,
        conf=_PLAN_FACETS,
    ),
    Scenario(
        "rdd with parquet",
        "testRddWithParquet",
        "Open Lineage Integration RDD With Parquet",
        "/tmp/warehouse",
        ("pysparkRDDWithParquet",),
        rdd_with_parquet,
    ),
    Scenario(
        "application level",
        "generic-namespace",
        "Generic Integration Test",
        "/tmp/warehouse",
        (
            "applicationLevelStartApplication",
            "applicationLevelStartJob",
            "applicationLevelCompleteJob",
            "applicationLevelCompleteApplication",
        ),
        application_level,
        conf={
            **_PARENT_CONF,
            "spark.openlineage.job.tags": "spark;key:value",
            "spark.openlineage.run.tags": "run;set:up:SERVICE",
        },
    ),
    Scenario(
        "hive ctas commands",
        "default",
        "Hive Metastore Integration Test",
        "/tmp/warehouse",
        (
            "hiveCreateDataSourceAsSelectCommandStartEvent",
            "hiveCreateDataSourceAsSelectCommandCompleteEvent",
            "hiveCreateHiveTableAsSelectCommandStartEvent",
            "hiveCreateHiveTableAsSelectCommandCompleteEvent",
        ),
        hive_ctas_commands,
    ),
    Scenario(
        "insert overwrite directory",
        "testPysparkSQLHiveOverwriteDirTest",
        "Open Lineage Integration Overwrite Hive",
        "/tmp/overwrite",
        ("pysparkHiveOverwriteDirStartEvent", "pysparkHiveOverwriteDirCompleteEvent"),
        overwrite_dir,
    ),
    Scenario(
        "ctas + load",
        "testCreateAsSelectAndLoad",
        "Open Lineage Integration CTAS Load",
        "/tmp/ctas_load",
        (
            "pysparkCTASStart",
            "pysparkCTASEnd",
            "pysparkCTASWithColumnLineageEnd",
            "pysparkLoadStart",
            "pysparkLoadComplete",
        ),
        ctas_load,
    ),
    Scenario(
        "optimized ctas",
        "testOptimizedCreateAsSelectAndLoad",
        "Open Lineage Integration OCTAS",
        "/tmp/ctas_load",
        ("pysparkOCTASStart", "pysparkOCTASEnd"),
        optimized_ctas,
    ),
    Scenario(
        "column lineage",
        "testColumnLevelLineage",
        "Open Lineage Integration Column Lineage",
        "/tmp/cll_test",
        ("pysparkCLLStart", "pysparkCLLEnd"),
        column_lineage,
    ),
    Scenario(
        "cached",
        "cachedDataset",
        "Open Lineage Integration Cached",
        "/tmp/caching",
        ("pysparkCachedDatasetComplete",),
        cached,
    ),
    Scenario(
        "hive catalog symlink",
        "symlinks",
        "Open Lineage Integration Hive",
        "/tmp/warehouse",
        ("pysparkSymlinksComplete",),
        hive_catalog_symlink,
        session_conf={"spark.sql.hive.metastore.uris": "http://metastore"},
    ),
    Scenario(
        "create table",
        "testCreateTable",
        "Open Lineage Integration Create Table",
        "/tmp/create_test",
        ("pysparkCreateTableStartEvent", "pysparkCreateTableCompleteEvent"),
        create_table,
    ),
    Scenario(
        "drop table",
        "testDropTable",
        "Open Lineage Integration Drop Table",
        "/tmp/drop_test",
        ("pysparkDropTableEvent",),
        drop_table,
    ),
    Scenario(
        "truncate table",
        "testTruncateTable",
        "Open Lineage Integration Truncate Table",
        "/tmp/truncate_test",
        ("pysparkTruncateTableCompleteEvent",),
        truncate_table,
    ),
    Scenario(
        "alter table",
        "testAlterTable",
        "Open Lineage Integration Alter Table",
        "/tmp/alter_test",
        ("pysparkAlterTableAddColumnsEnd", "pysparkAlterTableRenameEnd"),
        alter_table,
    ),
)


SCENARIOS: tuple[Scenario, ...] = (*_SESSION_CATALOG, *CONNECTOR_SCENARIOS)


def by_name(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)
