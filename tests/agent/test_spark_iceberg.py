"""Iceberg tables through the DSv2 family, on the shared session's Hadoop catalog
``ice``: CREATE, CTAS, INSERT, INSERT OVERWRITE, MERGE (copy-on-write and
merge-on-read, column lineage from target and source), DELETE, UPDATE, a
time-travel read, ALTER TABLE and DROP — each event's datasets and facets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent.conftest import ICEBERG_WAREHOUSE
from tests.support.spark_packages import SPARK_LINE, needs_connectors

pytestmark = [pytest.mark.spark, needs_connectors("iceberg")]

NAMESPACE = "ice.hw"
TABLES = ("src", "tgt", "ctas", "cow", "mor", "upd", "ddl")
_ROW_LEVEL = {
    "cow": "copy-on-write",
    "mor": "merge-on-read",
}


def _properties(mode: str) -> str:
    return (
        f"TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}', "
        f"'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )


def _location(table: str) -> str:
    return f"{ICEBERG_WAREHOUSE}/hw/{table}"


def _complete(events: list[dict[str, Any]], job_part: str) -> dict[str, Any]:
    found = [e for e in events if e["eventType"] == "COMPLETE" and job_part in e["job"]["name"]]
    assert found, f"no COMPLETE event whose job name has {job_part!r}: {[e['job']['name'] for e in events]}"
    return found[-1]


def _output(event: dict[str, Any]) -> dict[str, Any]:
    (output,) = event["outputs"]
    return output


def _inputs(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["name"].rsplit("/", 1)[-1]: d for d in event["inputs"]}


def _version(dataset: dict[str, Any]) -> str | None:
    facet = dataset["facets"].get("version")
    return facet["datasetVersion"] if facet else None


def _lifecycle(dataset: dict[str, Any]) -> str | None:
    facet = dataset["facets"].get("lifecycleStateChange")
    return facet["lifecycleStateChange"] if facet else None


def _columns(dataset: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["name"], f["type"]) for f in dataset["facets"]["schema"]["fields"]]


def _lineage(output: dict[str, Any], column: str) -> set[tuple[str, str]]:
    fields = output["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return {(item["name"].rsplit("/", 1)[-1], item["field"]) for item in fields}


def _direct(output: dict[str, Any], column: str) -> set[tuple[str, str]]:
    fields = output["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return {
        (item["name"].rsplit("/", 1)[-1], item["field"])
        for item in fields
        if any(t["type"] == "DIRECT" for t in item["transformations"])
    }


def _snapshots(spark: Any, table: str) -> list[str]:
    rows = spark.sql(f"SELECT snapshot_id FROM {NAMESPACE}.{table}.snapshots ORDER BY committed_at").collect()
    return [str(row[0]) for row in rows]


def _assert_table(dataset: dict[str, Any], table: str) -> None:
    """Named by location, with the symlink, catalog and storage of an Iceberg table."""
    assert (dataset["namespace"], dataset["name"]) == ("file", _location(table))
    assert dataset["facets"]["symlinks"]["identifiers"] == [
        {"namespace": f"file:{ICEBERG_WAREHOUSE}", "name": f"hw.{table}", "type": "TABLE"}
    ]
    catalog = dataset["facets"]["catalog"]
    assert (catalog["name"], catalog["framework"], catalog["type"], catalog["warehouseUri"]) == (
        "ice",
        "iceberg",
        "hadoop",
        ICEBERG_WAREHOUSE,
    )
    storage = dataset["facets"]["storage"]
    assert (storage["storageLayer"], storage["fileFormat"]) == ("iceberg", "parquet")
    assert dataset["facets"]["datasetType"]["datasetType"] == "TABLE"


@pytest.fixture
def ice(spark: Any) -> Iterator[Any]:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {NAMESPACE}")
    for table in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {NAMESPACE}.{table}")
    yield spark
    for table in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {NAMESPACE}.{table}")


def _source(spark: Any) -> None:
    spark.sql(f"CREATE TABLE {NAMESPACE}.src (id long, v string) USING iceberg")
    spark.sql(f"INSERT INTO {NAMESPACE}.src VALUES (1, 'a'), (2, 'b'), (3, 'c')")


def test_create_table_is_a_created_iceberg_table(ice, lineage):
    ice.sql(f"CREATE TABLE {NAMESPACE}.ddl (a string, b int) USING iceberg")
    event = _complete(lineage.action_events(), ".create_table.")
    assert event["job"]["name"].endswith(".create_table.hw_ddl")
    output = _output(event)
    _assert_table(output, "ddl")
    assert _lifecycle(output) == "CREATE"
    assert _columns(output) == [("a", "string"), ("b", "integer")]
    assert _version(output) is None  # no snapshot before the first write
    ice.sql(f"REPLACE TABLE {NAMESPACE}.ddl (c long) USING iceberg")
    replaced = _complete(lineage.action_events(), ".atomic_replace_table.")
    assert replaced["job"]["name"].endswith(".atomic_replace_table.hw_ddl")
    output = _output(replaced)
    _assert_table(output, "ddl")
    assert _lifecycle(output) == "OVERWRITE"
    assert _columns(output) == [("c", "long")]


def test_insert_reports_the_snapshot_it_wrote_and_reads_the_one_read(ice, lineage):
    _source(ice)
    ice.sql(f"CREATE TABLE {NAMESPACE}.tgt (id long, v string) USING iceberg")
    ice.sql(f"INSERT INTO {NAMESPACE}.tgt SELECT id, upper(v) FROM {NAMESPACE}.src WHERE id > 1")
    events = lineage.action_events()
    event = _complete(events, ".append_data.ice_hw_tgt")
    output = _output(event)
    _assert_table(output, "tgt")
    assert _version(output) == _snapshots(ice, "tgt")[-1]
    assert _lifecycle(output) is None
    assert _columns(output) == [("id", "long"), ("v", "string")]
    source = _inputs(event)["src"]
    _assert_table(source, "src")
    assert _version(source) == _snapshots(ice, "src")[-1]
    assert _columns(source) == [("id", "long"), ("v", "string")]
    assert _direct(output, "v") == {("src", "v")}
    # Iceberg takes WHERE id > 1 into its scan whole: the filter is found there
    # (a dataset-level dependency, as columnLineage.datasetLineageEnabled is on).
    dataset = output["facets"]["columnLineage"]["dataset"]
    assert {(d["name"].rsplit("/", 1)[-1], d["field"], t["subtype"]) for d in dataset for t in d["transformations"]} == {
        ("src", "id", "FILTER")
    }
    # The first INSERT ... VALUES wrote src's first snapshot.
    first = _complete(events, ".append_data.ice_hw_src")
    assert _version(_output(first)) == _snapshots(ice, "src")[0]


def test_ctas_is_one_run_of_the_command_with_lineage(ice, lineage):
    _source(ice)
    ice.sql(f"CREATE TABLE {NAMESPACE}.ctas USING iceberg AS SELECT id, concat(v, 'x') AS w FROM {NAMESPACE}.src")
    events = lineage.action_events()
    event = _complete(events, ".atomic_create_table_as_select.")
    assert event["job"]["name"].endswith(".atomic_create_table_as_select.hw_ctas")
    output = _output(event)
    _assert_table(output, "ctas")
    assert _lifecycle(output) == "CREATE"
    assert _version(output) == _snapshots(ice, "ctas")[-1]
    assert _columns(output) == [("id", "long"), ("w", "string")]
    assert _direct(output, "w") == {("src", "v")}
    assert _direct(output, "id") == {("src", "id")}
    # The staged table's own write, a query nested in the CTAS, is not a run of its own.
    assert not [e for e in events if "ctas" in e["job"]["name"] and ".append_data." in e["job"]["name"]]


def test_insert_overwrite_is_an_overwrite(ice, lineage):
    _source(ice)
    ice.sql(f"CREATE TABLE {NAMESPACE}.tgt (id long, v string) USING iceberg")
    ice.sql(f"INSERT OVERWRITE {NAMESPACE}.tgt SELECT * FROM {NAMESPACE}.src")
    event = _complete(lineage.action_events(), ".overwrite_by_expression.ice_hw_tgt")
    output = _output(event)
    _assert_table(output, "tgt")
    assert _lifecycle(output) == "OVERWRITE"
    assert _version(output) == _snapshots(ice, "tgt")[-1]
    assert _direct(output, "v") == {("src", "v")}


@pytest.mark.parametrize("table", sorted(_ROW_LEVEL))
def test_merge_has_lineage_from_target_and_source(ice, lineage, table):
    _source(ice)
    ice.sql(f"CREATE TABLE {NAMESPACE}.{table} (id long, v string) USING iceberg {_properties(_ROW_LEVEL[table])}")
    ice.sql(f"INSERT INTO {NAMESPACE}.{table} SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'old'), (9, 'keep')")
    before = _snapshots(ice, table)[-1]
    ice.sql(
        f"MERGE INTO {NAMESPACE}.{table} t USING {NAMESPACE}.src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.v = s.v "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)"
    )
    node = "replace_data" if table == "cow" else "write_delta"
    event = _complete(lineage.action_events(), f".{node}.ice_hw_{table}")
    output = _output(event)
    _assert_table(output, table)
    assert _columns(output) == [("id", "long"), ("v", "string")]
    assert _version(output) == _snapshots(ice, table)[-1]
    # Matched rows keep the target's id, inserted rows take the source's.
    assert _direct(output, "id") == {(table, "id"), ("src", "id")}
    # Copy-on-write rewrites the target's unmatched rows of the files it touches too.
    assert _direct(output, "v") == ({(table, "v"), ("src", "v")} if table == "cow" else {("src", "v")})
    inputs = _inputs(event)
    assert set(inputs) == {table, "src"}
    # The target was read at the snapshot before the MERGE wrote the next one.
    assert _version(inputs[table]) == before


@pytest.mark.parametrize("table", sorted(_ROW_LEVEL))
def test_delete_and_update_rewrite_the_table(ice, lineage, table):
    ice.sql(f"CREATE TABLE {NAMESPACE}.{table} (id long, v string) USING iceberg {_properties(_ROW_LEVEL[table])}")
    ice.sql(f"INSERT INTO {NAMESPACE}.{table} SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    node = "replace_data" if table == "cow" else "write_delta"
    ice.sql(f"DELETE FROM {NAMESPACE}.{table} WHERE id = 1")
    deleted = _output(_complete(lineage.action_events(), f".{node}.ice_hw_{table}"))
    _assert_table(deleted, table)
    assert _version(deleted) == _snapshots(ice, table)[-1]
    ice.sql(f"UPDATE {NAMESPACE}.{table} SET v = upper(v) WHERE id = 2")
    updated = _output(_complete(lineage.action_events(), f".{node}.ice_hw_{table}"))
    assert _version(updated) == _snapshots(ice, table)[-1] != _version(deleted)
    assert _columns(updated) == [("id", "long"), ("v", "string")]
    assert _direct(updated, "v") == {(table, "v")}


def test_time_travel_read_reports_the_snapshot_read(ice, lineage, tmp_path):
    _source(ice)
    ice.sql(f"INSERT INTO {NAMESPACE}.src VALUES (4, 'd')")
    first, last = _snapshots(ice, "src")
    ice.sql(f"SELECT * FROM {NAMESPACE}.src VERSION AS OF {first}").write.parquet(str(tmp_path / "old"))
    ice.table(f"{NAMESPACE}.src").write.parquet(str(tmp_path / "new"))
    events = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and e["inputs"]]
    versions = {e["outputs"][0]["name"].rsplit("/", 1)[-1]: _version(e["inputs"][0]) for e in events}
    assert versions == {"old": first, "new": last}


def test_alter_and_drop_report_the_table(ice, lineage):
    ice.sql(f"CREATE TABLE {NAMESPACE}.ddl (a string, b string) USING iceberg")
    ice.sql(f"ALTER TABLE {NAMESPACE}.ddl ADD COLUMNS (c int)")
    ice.sql(f"ALTER TABLE {NAMESPACE}.ddl RENAME COLUMN b TO d")
    ice.sql(f"ALTER TABLE {NAMESPACE}.ddl ALTER COLUMN c TYPE bigint")
    events = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and ".alter_table." in e["job"]["name"]]
    assert [_columns(_output(e)) for e in events] == [
        [("a", "string"), ("b", "string"), ("c", "integer")],
        [("a", "string"), ("d", "string"), ("c", "integer")],
        [("a", "string"), ("d", "string"), ("c", "long")],
    ]
    assert events[-1]["job"]["name"].endswith(".alter_table.hw_ddl")
    _assert_table(_output(events[-1]), "ddl")
    ice.sql(f"DROP TABLE {NAMESPACE}.ddl")
    dropped = _output(_complete(lineage.action_events(), ".drop_table."))
    assert (dropped["namespace"], dropped["name"]) == ("file", _location("ddl"))
    assert _lifecycle(dropped) == "DROP"
    assert dropped["facets"]["symlinks"]["identifiers"][0]["name"] == "hw.ddl"


def test_dataframe_made_from_the_rdd_of_a_table_reads_the_table(ice, lineage):
    _source(ice)
    ice.sql(f"CREATE TABLE {NAMESPACE}.tgt (id long, v string) USING iceberg")
    rows = ice.table(f"{NAMESPACE}.src").rdd.map(lambda row: (row.id * 10, row.v))
    ice.createDataFrame(rows, "id long, v string").writeTo(f"{NAMESPACE}.tgt").append()
    event = _complete(lineage.action_events(), ".append_data.ice_hw_tgt")
    source = _inputs(event)["src"]
    _assert_table(source, "src")
    assert _columns(source) == [("id", "long"), ("v", "string")]
    assert _version(source) == _snapshots(ice, "src")[-1]
    _assert_table(_output(event), "tgt")


def test_writer_v2_replace_and_dynamic_overwrite(ice, lineage):
    _source(ice)
    frame = ice.table(f"{NAMESPACE}.src")
    frame.writeTo(f"{NAMESPACE}.tgt").using("iceberg").partitionedBy("id").createOrReplace()
    # Spark reports the replace before the next write commits (the agent reads the
    # snapshot it made when Spark reports it; see docs/agent-configuration.md).
    lineage.action_events()
    frame.where("id = 1").writeTo(f"{NAMESPACE}.tgt").overwritePartitions()
    events = lineage.action_events()
    replaced = _output(_complete(events, ".atomic_replace_table_as_select.hw_tgt"))
    assert _lifecycle(replaced) == "OVERWRITE"
    assert _version(replaced) == _snapshots(ice, "tgt")[0]
    overwritten = _output(_complete(events, ".overwrite_partitions_dynamic.ice_hw_tgt"))
    _assert_table(overwritten, "tgt")
    assert _lifecycle(overwritten) == "OVERWRITE"
    assert _version(overwritten) == _snapshots(ice, "tgt")[-1]
    assert _direct(overwritten, "v") == {("src", "v")}


#: The reader options that pin a snapshot: Spark's own everywhere, and Iceberg's
#: ``snapshot-id`` where its runtime still takes it (the Spark 4.1 runtime refuses it).
_SNAPSHOT_OPTIONS = ("versionAsOf", "snapshot-id") if SPARK_LINE in ("3.5", "4.0") else ("versionAsOf",)


@pytest.mark.parametrize("option", _SNAPSHOT_OPTIONS)
def test_snapshot_read_option_reports_that_snapshot(ice, lineage, tmp_path, option):
    _source(ice)
    ice.sql(f"INSERT INTO {NAMESPACE}.src VALUES (4, 'd')")
    first = _snapshots(ice, "src")[0]
    frame = ice.read.format("iceberg").option(option, first).load(f"{NAMESPACE}.src")
    frame.write.parquet(str(tmp_path / "old"))
    event = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and e["inputs"]][-1]
    (source,) = event["inputs"]
    _assert_table(source, "src")
    assert _version(source) == first


def test_branch_write_reports_the_branch_head(ice, lineage):
    _source(ice)
    ice.sql(f"ALTER TABLE {NAMESPACE}.src CREATE BRANCH dev")
    ice.sql(f"INSERT INTO {NAMESPACE}.src.branch_dev VALUES (5, 'e')")
    head = str(ice.sql(f"SELECT snapshot_id FROM {NAMESPACE}.src.refs WHERE name = 'dev'").collect()[0][0])
    main = str(ice.sql(f"SELECT snapshot_id FROM {NAMESPACE}.src.refs WHERE name = 'main'").collect()[0][0])
    assert head != main
    output = _output(_complete(lineage.action_events(), ".append_data."))
    _assert_table(output, "src")
    assert _version(output) == head


def test_delete_of_whole_partitions_is_a_metadata_delete_of_the_table(ice, lineage):
    ice.sql(f"CREATE TABLE {NAMESPACE}.upd (id long, v string) USING iceberg PARTITIONED BY (id)")
    ice.sql(f"INSERT INTO {NAMESPACE}.upd VALUES (1, 'a'), (2, 'b')")
    ice.sql(f"DELETE FROM {NAMESPACE}.upd WHERE id = 1")
    event = _complete(lineage.action_events(), ".delete_from_table.")
    assert event["job"]["name"].endswith(".delete_from_table.ice_hw_upd")
    output = _output(event)
    _assert_table(output, "upd")
    assert _version(output) == _snapshots(ice, "upd")[-1]


def test_a_stream_into_an_iceberg_table_by_name_writes_that_table(ice, lineage, tmp_path) -> None:
    source = tmp_path / "events"
    # Two files read one per micro-batch: the stream commits two snapshots.
    ice.range(4).repartition(2).selectExpr("id", "CAST(id * 2 AS STRING) AS doubled").write.parquet(
        str(source)
    )
    ice.sql(f"CREATE TABLE {NAMESPACE}.src (id BIGINT, doubled STRING) USING iceberg")
    before = len(lineage.events())
    query = (
        ice.readStream.schema("id long, doubled string")
        .option("maxFilesPerTrigger", 1)
        .parquet(str(source))
        .writeStream.format("iceberg")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .toTable(f"{NAMESPACE}.src")
    )
    assert query.awaitTermination(120)
    assert ice.table(f"{NAMESPACE}.src").count() == 4
    streamed = [
        e for e in lineage.events()[before:]
        if e["job"]["facets"]["jobType"].get("processingType") == "STREAMING"
    ]
    assert [e["eventType"] for e in streamed][0::len(streamed) - 1] == ["START", "COMPLETE"]
    (output,) = streamed[-1]["outputs"]
    _assert_table(output, "src")
    assert _lineage(output, "doubled") == {("events", "doubled")}
    # The COMPLETE gives the table the snapshot the last micro-batch committed, as a
    # batch write's event does; the START, before any commit of the stream, none.
    snapshots = _snapshots(ice, "src")
    assert len(snapshots) == 2
    assert _version(output) == snapshots[-1]
    assert "version" not in streamed[0]["outputs"][0]["facets"]
