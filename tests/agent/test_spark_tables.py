"""Catalog tables on a real SparkSession: saveAsTable, insertInto, CTAS, INSERT, Hive
tables, DDL with lifecycleStateChange, LOAD DATA, temp views, cached DataFrames, failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import WAREHOUSE

pytestmark = pytest.mark.spark

WAREHOUSE_URI = f"file:{WAREHOUSE}"


def _last_complete(events: list[dict[str, Any]], eventType: str = "COMPLETE") -> dict[str, Any]:
    return [e for e in events if e["eventType"] == eventType][-1]


def _symlink(dataset: dict[str, Any]) -> tuple[str, str, str]:
    (ident,) = dataset["facets"]["symlinks"]["identifiers"]
    return ident["namespace"], ident["name"], ident["type"]


def _lifecycle(dataset: dict[str, Any]) -> str | None:
    facet = dataset["facets"].get("lifecycleStateChange")
    return facet["lifecycleStateChange"] if facet else None


@pytest.fixture
def clean_tables(spark):
    names = ["hw_t1", "hw_t2", "hw_ctas", "hw_hive", "hw_hive2", "hw_ext", "hw_new", "hw_cached_src", "hw_cached_dst", "hw_typed_src", "hw_typed_dst"]
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    yield
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_save_as_table_and_insert_into(spark, lineage, clean_tables):
    df = spark.createDataFrame([(1, "a")], ["k", "v"])
    df.write.saveAsTable("hw_t1")
    event = _last_complete(lineage.action_events())
    output = event["outputs"][0]
    assert (output["namespace"], output["name"]) == ("file", f"{WAREHOUSE}/hw_t1")
    assert _symlink(output) == (WAREHOUSE_URI, "default.hw_t1", "TABLE")
    assert _lifecycle(output) == "CREATE"
    assert output["facets"]["catalog"]["warehouseUri"] == WAREHOUSE_URI
    assert [f["name"] for f in output["facets"]["schema"]["fields"]] == ["k", "v"]

    df.write.insertInto("hw_t1")
    event = _last_complete(lineage.action_events())
    assert event["outputs"][0]["name"] == f"{WAREHOUSE}/hw_t1"
    assert event["job"]["name"].endswith(".execute_insert_into_hadoop_fs_relation_command.headwater-test-warehouse_hw_t1")


def test_save_as_table_modes_are_one_run_each_and_ignore_none(spark, lineage, clean_tables):
    # Spark 4.1 runs a v1 saveAsTable as a command around the CREATE TABLE AS SELECT
    # that writes; an ignore of an existing table runs only that outer command.
    df = spark.createDataFrame([(1, "a")], ["k", "v"])
    df.write.saveAsTable("hw_t1")
    before = len(lineage.action_events())
    df.write.mode("ignore").saveAsTable("hw_t1")
    df.write.mode("append").saveAsTable("hw_t1")
    events = lineage.action_events()[before:]
    assert len(_runs(events)) == 1
    assert {e["job"]["name"].split(".", 1)[1] for e in events} == {
        "execute_create_data_source_table_as_select_command.default_hw_t1"
    }
    assert [o["name"] for o in _last_complete(events)["outputs"]] == [f"{WAREHOUSE}/hw_t1"]


def _runs(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        runs.setdefault(event["run"]["runId"], []).append(event)
    return runs


@pytest.mark.parametrize(
    ("write", "job"),
    [
        (
            lambda spark: spark.sql("CREATE TABLE hw_ctas USING parquet AS SELECT 1 AS k, 'a' AS v"),
            "execute_create_data_source_table_as_select_command.default_hw_ctas",
        ),
        (
            lambda spark: spark.sql("CREATE TABLE hw_ctas STORED AS textfile AS SELECT 1 AS k, 'a' AS v"),
            "execute_create_hive_table_as_select_command.default_hw_ctas",
        ),
        (
            lambda spark: spark.createDataFrame([(1, "a")], ["k", "v"]).write.saveAsTable("hw_ctas"),
            "execute_create_data_source_table_as_select_command.default_hw_ctas",
        ),
        (
            lambda spark: spark.createDataFrame([(1, "a")], ["k", "v"]).write.insertInto("hw_t1"),
            "execute_insert_into_hadoop_fs_relation_command.headwater-test-warehouse_hw_t1",
        ),
    ],
    ids=["ctas", "hive-ctas", "saveAsTable", "insertInto"],
)
def test_one_table_write_is_one_run(spark, lineage, clean_tables, write, job):
    # Spark runs a CTAS's (or saveAsTable's) insert as an execution nested in the
    # command's; both reach the listener, and only the command is the action.
    spark.sql("CREATE TABLE hw_t1 (k INT, v STRING) USING parquet")
    lineage.action_events()
    lineage.path.write_text("")
    write(spark)
    runs = _runs(lineage.action_events())
    assert len(runs) == 1, [e["job"]["name"] for e in lineage.action_events()]
    (events,) = runs.values()
    assert {e["job"]["name"] for e in events} == {f"headwater_agent_tests.{job}"}
    assert [e["eventType"] for e in events][-1] == "COMPLETE"
    # The nested insert's write metrics belong to the one run.
    assert events[-1]["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 1


def test_sql_ctas_and_insert_overwrite_read_tables_through_symlinks(spark, lineage, clean_tables):
    spark.sql("CREATE TABLE hw_t1 (k INT, v STRING) USING parquet")
    spark.sql("INSERT INTO hw_t1 VALUES (1, 'a'), (2, 'b')")
    spark.sql("CREATE TABLE hw_ctas USING parquet AS SELECT k, upper(v) AS u FROM hw_t1 WHERE k > 1")
    events = lineage.action_events()
    ctas = [e for e in events if e["eventType"] == "COMPLETE" and "create_data_source_table_as_select" in e["job"]["name"]]
    assert ctas, [e["job"]["name"] for e in events]
    event = ctas[-1]
    assert [d["name"] for d in event["inputs"]] == [f"{WAREHOUSE}/hw_t1"]
    assert _symlink(event["inputs"][0]) == (WAREHOUSE_URI, "default.hw_t1", "TABLE")
    assert event["outputs"][0]["name"] == f"{WAREHOUSE}/hw_ctas"
    assert event["job"]["facets"]["sql"]["query"].startswith("CREATE TABLE hw_ctas")

    spark.sql("CREATE TABLE hw_t2 (k INT, v STRING) USING parquet")
    spark.sql("INSERT OVERWRITE TABLE hw_t2 SELECT k + 10, v FROM hw_ctas JOIN hw_t1 USING (k)")
    event = _last_complete(lineage.action_events())
    assert event["outputs"][0]["name"] == f"{WAREHOUSE}/hw_t2"
    assert _lifecycle(event["outputs"][0]) == "OVERWRITE"
    assert sorted(d["name"] for d in event["inputs"]) == [f"{WAREHOUSE}/hw_ctas", f"{WAREHOUSE}/hw_t1"]


def test_hive_tables_managed_and_external(spark, lineage, clean_tables, tmp_path: Path):
    spark.sql("CREATE TABLE hw_hive (key INT, value STRING) USING hive")
    spark.sql("INSERT INTO hw_hive VALUES (1, 'x'), (2, 'y')")
    event = _last_complete(lineage.action_events())
    assert event["job"]["name"] == "headwater_agent_tests.execute_insert_into_hive_table.headwater-test-warehouse_hw_hive"
    assert event["outputs"][0]["name"] == f"{WAREHOUSE}/hw_hive"
    assert event["inputs"] == []

    location = tmp_path / "ext"
    spark.sql(f"CREATE EXTERNAL TABLE hw_ext (key INT, value STRING) STORED AS PARQUET LOCATION '{location}'")
    spark.sql("INSERT INTO hw_ext SELECT key, value FROM hw_hive WHERE key > 1")
    event = _last_complete(lineage.action_events())
    assert event["outputs"][0]["name"] == str(location)
    assert _symlink(event["outputs"][0]) == (WAREHOUSE_URI, "default.hw_ext", "TABLE")
    assert [d["name"] for d in event["inputs"]] == [f"{WAREHOUSE}/hw_hive"]


def test_ddl_lifecycle(spark, lineage, clean_tables):
    spark.sql("CREATE TABLE hw_t2 (a STRING, b STRING) USING hive")
    create = _last_complete(lineage.action_events())
    assert create["job"]["name"] == "headwater_agent_tests.execute_create_table_command.headwater-test-warehouse_hw_t2"
    assert _lifecycle(create["outputs"][0]) == "CREATE"
    assert [f["name"] for f in create["outputs"][0]["facets"]["schema"]["fields"]] == ["a", "b"]

    spark.sql("INSERT INTO hw_t2 VALUES ('1', '2')")
    spark.sql("TRUNCATE TABLE hw_t2")
    truncate = _last_complete(lineage.action_events())
    assert _lifecycle(truncate["outputs"][0]) == "TRUNCATE"
    assert truncate["job"]["name"].endswith("execute_truncate_table_command.headwater-test-warehouse_hw_t2")

    spark.sql("ALTER TABLE hw_t2 ADD COLUMNS (c STRING)")
    alter = _last_complete(lineage.action_events())
    assert alter["job"]["name"] == "headwater_agent_tests.execute_alter_table_add_columns_command"
    assert [f["name"] for f in alter["outputs"][0]["facets"]["schema"]["fields"]] == ["a", "b", "c"]

    spark.sql("ALTER TABLE hw_t2 RENAME TO hw_new")
    rename = _last_complete(lineage.action_events())
    facet = rename["outputs"][0]["facets"]["lifecycleStateChange"]
    assert facet["lifecycleStateChange"] == "RENAME"
    assert facet["previousIdentifier"] == {"namespace": "file", "name": f"{WAREHOUSE}/hw_t2"}
    assert rename["outputs"][0]["name"] == f"{WAREHOUSE}/hw_new"

    spark.sql("DROP TABLE hw_new")
    drop = _last_complete(lineage.action_events())
    assert _lifecycle(drop["outputs"][0]) == "DROP"
    assert drop["outputs"][0]["name"] == f"{WAREHOUSE}/hw_new"
    assert _symlink(drop["outputs"][0]) == (WAREHOUSE_URI, "default.hw_new", "TABLE")


def test_drop_if_exists_reports_only_a_table_that_was_dropped(spark, lineage, clean_tables):
    spark.sql("DROP TABLE IF EXISTS hw_new")
    assert lineage.action_events() == []

    spark.sql("CREATE TABLE hw_new (k INT) USING parquet")
    spark.sql("DROP TABLE IF EXISTS hw_new")
    drop = _last_complete(lineage.action_events())
    assert _lifecycle(drop["outputs"][0]) == "DROP"
    assert drop["outputs"][0]["name"] == f"{WAREHOUSE}/hw_new"


def test_job_type_and_dataset_type(spark, lineage, clean_tables, tmp_path: Path):
    spark.createDataFrame([(1, "a")], ["k", "v"]).write.saveAsTable("hw_typed_src")
    spark.table("hw_typed_src").write.parquet(str(tmp_path / "out"))
    spark.read.parquet(str(tmp_path / "out")).write.saveAsTable("hw_typed_dst")
    events = lineage.action_events()
    for event in events:
        assert event["job"]["facets"]["jobType"] == {
            "_producer": event["job"]["facets"]["jobType"]["_producer"],
            "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
            "processingType": "BATCH",
            "integration": "SPARK",
            "jobType": "SQL_JOB",
        }
    to_file, to_table = [e for e in events if e["eventType"] == "COMPLETE"][-2:]

    def types(datasets: list[dict[str, Any]]) -> list[str]:
        return [d["facets"]["datasetType"]["datasetType"] for d in datasets]

    assert (types(to_file["inputs"]), types(to_file["outputs"])) == (["TABLE"], ["FILE"])
    assert (types(to_table["inputs"]), types(to_table["outputs"])) == (["FILE"], ["TABLE"])


def test_load_data(spark, lineage, clean_tables, tmp_path: Path):
    spark.sql("CREATE TABLE hw_hive2 (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")
    csv = tmp_path / "rows.csv"
    csv.write_text("1,x\n")
    spark.sql(f"LOAD DATA LOCAL INPATH '{csv}' INTO TABLE hw_hive2")
    event = _last_complete(lineage.action_events())
    assert event["job"]["name"] == "headwater_agent_tests.execute_load_data_command.default_hw_hive2"
    assert event["outputs"][0]["name"] == f"{WAREHOUSE}/hw_hive2"


def test_temp_view_and_cache_are_followed_to_sources(spark, lineage, clean_tables, tmp_path: Path):
    spark.createDataFrame([(1, "a")], ["k", "v"]).write.saveAsTable("hw_cached_src")
    cached = spark.table("hw_cached_src").cache()
    cached.count()
    cached.createOrReplaceTempView("hw_view")
    spark.sql("SELECT k FROM hw_view").write.saveAsTable("hw_cached_dst")
    event = _last_complete(lineage.action_events())
    assert event["outputs"][0]["name"] == f"{WAREHOUSE}/hw_cached_dst"
    assert [d["name"] for d in event["inputs"]] == [f"{WAREHOUSE}/hw_cached_src"]
    lineage_facet = event["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert lineage_facet["k"]["inputFields"][0]["name"] == f"{WAREHOUSE}/hw_cached_src"
    assert lineage_facet["k"]["inputFields"][0]["field"] == "k"
    cached.unpersist()


def test_failed_action_emits_fail_with_error_message(spark, lineage, tmp_path: Path):
    df = spark.range(3).selectExpr("IF(id = 2, raise_error('headwater boom'), id) AS x")
    with pytest.raises(Exception, match="headwater boom"):
        df.write.parquet(str(tmp_path / "never"))
    event = _last_complete(lineage.action_events(), "FAIL")
    assert "headwater boom" in event["run"]["facets"]["errorMessage"]["message"]
    assert event["outputs"][0]["name"] == str(tmp_path / "never")
