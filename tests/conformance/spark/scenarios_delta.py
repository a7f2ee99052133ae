"""The suite's Delta Lake scenarios: Delta owns ``spark_catalog`` (profile ``delta``) and
every table lives under the warehouse ``/tmp/delta``, so catalog tables are named in
``symlinks`` by ``file:/tmp/delta``.

Each job drops the tables and directories it uses first: the scenarios share one
JVM and one warehouse.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.spark.scenario import Scenario, clean, drop

NAMESPACE = "delta-namespace"
APP = "delta_integration_test"
WAREHOUSE = "/tmp/delta"


def _long_pairs(spark: Any, rows: list[tuple[int, int]]) -> Any:
    return spark.createDataFrame(rows, "a long NOT NULL, b long NOT NULL").repartition(1)


def _long_strings(spark: Any, rows: list[tuple[int, str]]) -> Any:
    return spark.createDataFrame(rows, "a long NOT NULL, b string NOT NULL").repartition(1)


def ctas(spark: Any) -> None:
    drop(spark, "tbl")
    clean(f"{WAREHOUSE}/tbl")
    _long_pairs(spark, [(1, 2), (3, 4)]).createOrReplaceTempView("temp")
    spark.sql(f"CREATE TABLE tbl USING delta LOCATION '{WAREHOUSE}/tbl' AS SELECT * FROM temp")


def filtered_writes(spark: Any) -> None:
    drop(spark, "delta_filter_t1", "delta_filter_t2", "delta_filter_temp")
    clean(*(f"{WAREHOUSE}/delta_filter_{name}" for name in ("t1", "t2", "temp")))
    spark.sql(f"CREATE TABLE delta_filter_t1 (a long, b long) USING delta LOCATION '{WAREHOUSE}/delta_filter_t1'")
    spark.createDataFrame([(1,), (2,)], "a long NOT NULL").repartition(1).write.saveAsTable("delta_filter_temp")
    spark.sql(
        f"CREATE TABLE delta_filter_t2 USING delta LOCATION '{WAREHOUSE}/delta_filter_t2' AS "
        "SELECT t1.* FROM delta_filter_temp t1 JOIN delta_filter_temp t2 ON t1.a = t2.a WHERE t1.a > 1"
    )
    spark.sql("INSERT INTO delta_filter_t1 VALUES (3, 4)")


MOVIES = [
    '{"title":"Feeding Sea Lions","year":1900,"cast":["Paul Boyton"],"genres":[]}',
    '{"title":"The Wonder, Ching Ling Foo","year":1900,"cast":["Ching Ling Foo"],"genres":["Short"]}',
]


def parquet_save_as_table(spark: Any) -> None:
    drop(spark, "movies")
    clean(f"{WAREHOUSE}/movies")
    schema = "title string, year int, cast array<string>, genres array<string>"
    lines = spark.createDataFrame([(m,) for m in MOVIES], "value string").repartition(1)
    parsed = lines.selectExpr(f"from_json(value, '{schema}') AS parsed").select("parsed.*")
    parsed.write.mode("overwrite").format("parquet").saveAsTable("movies")


def table_versions(spark: Any) -> None:
    drop(spark, "versioned_table", "versioned_input_table")
    clean(f"{WAREHOUSE}/versioned_table", f"{WAREHOUSE}/versioned_input_table")
    # versioned_table: version 0 created, 1 altered, 2 written below.
    spark.sql(f"CREATE TABLE versioned_table (a long, b long) USING delta LOCATION '{WAREHOUSE}/versioned_table'")
    spark.sql("ALTER TABLE versioned_table ADD COLUMNS (c long)")
    spark.createDataFrame([(1,), (2,)], "a long NOT NULL").repartition(1).createOrReplaceTempView("temp")
    # versioned_input_table: 0 created, 1 altered, 2 inserted into, 3 altered: read at 3.
    spark.sql(
        f"CREATE TABLE versioned_input_table USING delta LOCATION '{WAREHOUSE}/versioned_input_table' "
        "AS SELECT * FROM temp"
    )
    spark.sql("ALTER TABLE versioned_input_table ADD COLUMNS (b long)")
    spark.sql("INSERT INTO versioned_input_table VALUES (3, 4)")
    spark.sql("ALTER TABLE versioned_input_table ADD COLUMNS (c long)")
    spark.sql("INSERT INTO versioned_table SELECT * FROM versioned_input_table")


def merge_into(spark: Any) -> None:
    drop(spark, "t1", "t2")
    clean(f"{WAREHOUSE}/t1", f"{WAREHOUSE}/t2")
    _long_strings(spark, [(1, "bat"), (2, "mouse"), (3, "horse")]).createOrReplaceTempView("temp")
    spark.sql(f"CREATE TABLE t1 USING delta LOCATION '{WAREHOUSE}/t1' AS SELECT * FROM temp")
    spark.sql(f"CREATE TABLE t2 USING delta LOCATION '{WAREHOUSE}/t2' AS SELECT * FROM temp")
    spark.sql(
        "MERGE INTO t1 USING t2 ON t1.a = t2.a "
        "WHEN MATCHED THEN UPDATE SET t1.b = t2.b WHEN NOT MATCHED THEN INSERT *"
    )


def _events_and_updates(spark: Any) -> None:
    drop(spark, "events", "updates")
    clean(f"{WAREHOUSE}/events", f"{WAREHOUSE}/updates", f"{WAREHOUSE}/new-events")
    spark.sql("CREATE TABLE events (event_id long, last_updated_at long) USING delta")
    spark.sql("CREATE TABLE updates (event_id long, updated_at long) USING delta")
    spark.sql("INSERT INTO events VALUES (1, 1641290276)")
    spark.sql("INSERT INTO updates VALUES (1, 1641290277)")
    spark.sql("INSERT INTO updates VALUES (2, 1641290277)")


def merge_into_path(spark: Any) -> None:
    _events_and_updates(spark)
    spark.read.table("events").write.format("delta").save(f"{WAREHOUSE}/new-events")
    spark.sql(
        f"MERGE INTO delta.`{WAREHOUSE}/new-events` target USING updates "
        "ON target.event_id = updates.event_id "
        "WHEN MATCHED THEN UPDATE SET target.last_updated_at = updates.updated_at "
        "WHEN NOT MATCHED THEN INSERT (event_id, last_updated_at) VALUES (event_id, updated_at)"
    )


def merge_column_lineage(spark: Any) -> None:
    _events_and_updates(spark)
    spark.sql("SELECT event_id, coalesce(updated_at, 0) AS updated_at FROM updates").createOrReplaceTempView(
        "updates2"
    )
    spark.sql(
        "MERGE INTO events target USING updates2 updates "
        "ON target.event_id = updates.event_id "
        "WHEN MATCHED THEN UPDATE SET target.last_updated_at = updates.updated_at "
        "WHEN NOT MATCHED THEN INSERT (event_id, last_updated_at) VALUES (event_id, updated_at)"
    )


def group_by(spark: Any) -> None:
    drop(spark, "t1", "t2")
    clean(f"{WAREHOUSE}/t1", f"{WAREHOUSE}/t2")
    _long_strings(spark, [(1, "bat"), (3, "horse")]).write.format("delta").saveAsTable("t1")
    spark.sql("CREATE TABLE t2 USING delta AS SELECT sum(a) AS c, b AS d FROM t1 GROUP BY b")


def replace_table(spark: Any) -> None:
    drop(spark, "tbl")
    clean(f"{WAREHOUSE}/v2_replace_table")
    spark.sql(f"CREATE TABLE tbl (a long, b long) USING delta LOCATION '{WAREHOUSE}/v2_replace_table'")
    spark.sql(f"REPLACE TABLE tbl (c string, d string) USING delta LOCATION '{WAREHOUSE}/v2_replace_table'")


def save_into_data_source(spark: Any) -> None:
    clean(f"{WAREHOUSE}/save_into_data_source_target")
    frame = _long_strings(spark, [(1, "a"), (2, "b")])
    frame.write.format("delta").mode("overwrite").save(f"{WAREHOUSE}/save_into_data_source_target")


def _scenario(name: str, expected: tuple[str, ...], job: Any) -> Scenario:
    return Scenario(name, NAMESPACE, APP, WAREHOUSE, expected, job, session="delta")


DELTA_SCENARIOS: tuple[Scenario, ...] = (
    _scenario("delta ctas", ("pysparkDeltaCTASStart", "pysparkDeltaCTASComplete"), ctas),
    _scenario("delta filter", ("pysparkDeltaFilterStart",), filtered_writes),
    _scenario("delta save as table", ("pysparkDeltaSaveAsTableComplete",), parquet_save_as_table),
    _scenario(
        "delta table version",
        ("pysparkWriteDeltaTableVersionStart", "pysparkWriteDeltaTableVersionEnd"),
        table_versions,
    ),
    _scenario("delta merge into", ("pysparkDeltaMergeIntoStartEvent", "pysparkDeltaMergeIntoCompleteEvent"), merge_into),
    _scenario(
        "delta merge into path",
        ("pysparkV2MergeIntoDeltaTableStartEvent", "pysparkV2MergeIntoDeltaTableCompleteEvent"),
        merge_into_path,
    ),
    _scenario(
        "delta merge column lineage",
        ("deltaMergeCommandVerificationStart", "deltaMergeCommandVerificationComplete"),
        merge_column_lineage,
    ),
    _scenario("delta group by", ("pysparkDeltaGroupByCompleteEvent",), group_by),
    _scenario(
        "delta replace table",
        ("pysparkV2ReplaceTableStartEvent", "pysparkV2ReplaceTableCompleteEvent"),
        replace_table,
    ),
    _scenario("delta save into data source", ("pysparkSaveIntoDatasourceCompleteEvent",), save_into_data_source),
)
