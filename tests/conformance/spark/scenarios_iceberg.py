"""The suite's Iceberg (DSv2) scenarios: ``spark_catalog`` is an Iceberg Hadoop
catalog at ``/tmp/iceberg`` (session profile ``iceberg``), so plain table names
are Iceberg tables under ``/tmp/iceberg/default``.

Each scenario drops and creates its own tables first; the statement the
expected files describe comes last (the files before it in a scenario are
matched in order, and set-up statements only add events before them).
"""

from __future__ import annotations

from typing import Any

from tests.conformance.spark.scenario import Scenario, drop

_COW = (
    "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='copy-on-write', "
    "'write.update.mode'='copy-on-write', 'write.merge.mode'='copy-on-write')"
)
_MOR = (
    "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
)


def _table(spark: Any, name: str, columns: str, rows: str | None = None, extra: str = "") -> None:
    drop(spark, name)
    spark.sql(f"CREATE TABLE {name} ({columns}) USING iceberg {extra}")
    if rows:
        spark.sql(f"INSERT INTO {name} VALUES {rows}")


def create_table(spark: Any) -> None:
    drop(spark, "create_table_test")
    spark.sql("CREATE TABLE create_table_test (a string, b string) USING iceberg")


def create_table_as_select(spark: Any) -> None:
    drop(spark, "target")
    _table(spark, "source1", "a long, b long", "(1, 2), (3, 4)")
    _table(spark, "source2", "a long, b long", "(5, 6)")
    spark.sql("CREATE TABLE target USING iceberg AS SELECT * FROM source1 UNION SELECT * FROM source2")


def append_data(spark: Any) -> None:
    _table(spark, "append_source1", "a long", "(1), (2)")
    _table(spark, "append_source2", "a long", "(3)")
    _table(spark, "append_table", "a long")
    spark.sql("INSERT INTO append_table SELECT * FROM append_source1 UNION SELECT * FROM append_source2")


def overwrite_by_expression(spark: Any) -> None:
    _table(spark, "tbl", "a long, b long", "(1, 2)")
    _table(spark, "source", "a long, b long", "(3, 4)")
    spark.sql("INSERT OVERWRITE tbl SELECT * FROM source")


def overwrite_partitions(spark: Any) -> None:
    _table(spark, "source", "a long, b long, c long", "(1, 2, 1), (3, 4, 2)")
    _table(spark, "partitioned_tbl", "a long, b long, c long", "(5, 6, 1)", "PARTITIONED BY (c)")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.sql("INSERT OVERWRITE partitioned_tbl SELECT * FROM source")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")


def replace_table_as_select(spark: Any) -> None:
    _table(spark, "source", "a long, b long", "(1, 2)")
    _table(spark, "tbl_replace", "c string")
    spark.sql("REPLACE TABLE tbl_replace USING iceberg AS SELECT * FROM source")


def append_with_rdd_processing(spark: Any) -> None:
    _table(spark, "source_table", "a long", "(1), (2)")
    _table(spark, "target_table", "a long")
    rows = spark.table("source_table").rdd.map(lambda row: (row.a * 10,))
    spark.createDataFrame(rows, "a long").writeTo("target_table").append()


def append_with_rdd_transformations(spark: Any) -> None:
    _table(spark, "src_table", "a long, b long", "(1, 2), (3, 4)")
    _table(spark, "resulting_table", "c string")
    rows = spark.table("src_table").rdd.filter(lambda row: row.a > 1).map(lambda row: (f"{row.a}-{row.b}",))
    spark.createDataFrame(rows, "c string").writeTo("resulting_table").append()


def _row_level(table: str, properties: str, statement: str) -> Any:
    def job(spark: Any) -> None:
        # One data file, so the DELETE rewrites rows (a file of its rows alone
        # would be dropped whole, a metadata-only delete).
        _table(spark, table, "a long, b long", None, properties)
        spark.sql(f"INSERT INTO {table} SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 2), (3, 4), (5, 6)")
        spark.sql(statement.format(table=table))

    return job


def _merge(target: str, source: str, properties: str) -> Any:
    def job(spark: Any) -> None:
        _table(spark, target, "event_id long, last_updated_at long", "(1, 10), (2, 20)", properties)
        _table(spark, source, "event_id long, updated_at long", "(2, 21), (3, 30)")
        spark.sql(
            f"MERGE INTO {target} t USING {source} s ON t.event_id = s.event_id "
            "WHEN MATCHED THEN UPDATE SET t.last_updated_at = s.updated_at "
            "WHEN NOT MATCHED THEN INSERT (event_id, last_updated_at) VALUES (s.event_id, s.updated_at)"
        )

    return job


def alter_table(spark: Any) -> None:
    _table(spark, "alter_table_test", "a string, b string", "('x', 'y')")
    spark.sql("ALTER TABLE alter_table_test RENAME COLUMN b TO c")


def drop_table(spark: Any) -> None:
    _table(spark, "iceberg_drop_table_test", "a string, b string")
    # IF EXISTS: the session catalog, which is not this one, knows nothing of the table.
    spark.sql("DROP TABLE IF EXISTS iceberg_drop_table_test")


def table_version(spark: Any) -> None:
    _table(spark, "`table`", "a int, b int")
    spark.sql("INSERT INTO `table` VALUES (1, 2)")


_ROW_LEVEL = (("delete", "DELETE FROM {table} WHERE a = 1"), ("update", "UPDATE {table} SET b = b + 1 WHERE a = 3"))
_WRITE_MODES = (("copy-on-write", "cow", _COW), ("merge-on-read", "mor", _MOR))


def _scenario(name: str, expected: tuple[str, ...], job: Any) -> Scenario:
    return Scenario(
        name,
        "iceberg-namespace",
        "iceberg_integration_test",
        "/tmp/iceberg",
        expected,
        job,
        session="iceberg",
    )


def _events(name: str) -> tuple[str, str]:
    return f"pysparkV2{name}StartEvent", f"pysparkV2{name}CompleteEvent"


ICEBERG_SCENARIOS: tuple[Scenario, ...] = (
    _scenario("iceberg create table", _events("CreateTable"), create_table),
    _scenario("iceberg create table as select", _events("CreateTableAsSelect"), create_table_as_select),
    _scenario("iceberg append data", _events("AppendData"), append_data),
    _scenario("iceberg overwrite by expression", _events("OverwriteByExpression"), overwrite_by_expression),
    _scenario("iceberg overwrite partitions", _events("OverwritePartitions"), overwrite_partitions),
    _scenario("iceberg replace table as select", _events("ReplaceTableAsSelect"), replace_table_as_select),
    *(
        _scenario(
            f"iceberg {verb} {mode}",
            _events(f"{verb.capitalize()}{suffix.capitalize()}"),
            _row_level(f"tbl_{verb}_{suffix}", properties, statement),
        )
        for verb, statement in _ROW_LEVEL
        for mode, suffix, properties in _WRITE_MODES
    ),
    _scenario("iceberg merge copy-on-write", _events("MergeIntoTableCow"), _merge("events_cow", "updates_cow", _COW)),
    _scenario("iceberg merge merge-on-read", _events("MergeIntoTableMor"), _merge("events_mor", "updates_mor", _MOR)),
    _scenario("iceberg alter table", _events("AlterTable"), alter_table),
    _scenario("iceberg drop table", _events("DropTable"), drop_table),
    _scenario("iceberg table version", ("pysparkWriteIcebergTableVersionEnd",), table_version),
    _scenario("iceberg append with rdd processing", _events("AppendWithRDDProcessing"), append_with_rdd_processing),
    _scenario(
        "iceberg append with rdd transformations",
        _events("AppendWithRDDTransformations"),
        append_with_rdd_transformations,
    ),
)
