"""Dataset naming and job-name normalisation (no JVM)."""

from __future__ import annotations

import re

import pytest

from headwater import naming


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("file:/tmp/x", ("file", "/tmp/x")),
        ("file:///tmp/x/", ("file", "/tmp/x")),
        ("/tmp//x", ("file", "/tmp/x")),
        ("s3a://bucket/a/b", ("s3://bucket", "a/b")),
        ("s3n://bucket/a", ("s3://bucket", "a")),
        ("s3://bucket/a/", ("s3://bucket", "a")),
        ("gs://bucket/path/x", ("gs://bucket", "path/x")),
        ("hdfs://namenode:8020/warehouse/t", ("hdfs://namenode:8020", "/warehouse/t")),
        (
            "abfss://c@acct.dfs.core.windows.net/dir",
            ("abfss://c@acct.dfs.core.windows.net", "/dir"),
        ),
    ],
)
def test_dataset_from_location(location: str, expected: tuple[str, str]) -> None:
    assert naming.dataset_from_location(location) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("/data/t/day=2024-01-01", "/data/t"),
        ("/data/t/year=2024/month=01", "/data/t"),
        ("/data/t/2024-01-31", "/data/t"),
        ("/data/t/20240131", "/data/t"),
        ("/data/t/part", "/data/t/part"),
        ("/k=v", "/k=v"),
    ],
)
def test_partition_dirs_are_trimmed(name: str, expected: str) -> None:
    assert naming.trim_partition_dirs(name) == expected


def test_remove_path_pattern_drops_the_remove_group() -> None:
    pattern = re.compile(r"(?P<remove>/tmp)/")
    assert naming.remove_path_pattern("/tmp/x/y", pattern) == "/x/y"
    assert naming.remove_path_pattern("/data/x", pattern) == "/data/x"
    assert naming.remove_path_pattern("/tmp/x", None) == "/tmp/x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Execute InsertIntoHadoopFsRelationCommand", "execute_insert_into_hadoop_fs_relation_command"),
        ("Open Lineage Integration Hive", "open_lineage_integration_hive"),
        ("Execute InsertIntoHiveTable", "execute_insert_into_hive_table"),
        ("someACRONYMInside", "some_acronym_inside"),
        ("  café app! ", "cafe_app"),
        ("WholeStageCodegen (1)", "whole_stage_codegen_1"),
    ],
)
def test_normalize_job_name(text: str, expected: str) -> None:
    assert naming.normalize_job_name(text) == expected


def test_trim_path_suffix() -> None:
    assert naming.trim_path_suffix("/tmp/warehouse/test") == "warehouse_test"
    assert naming.trim_path_suffix("table") == "table"


@pytest.mark.parametrize(
    ("uris", "expected"),
    [
        ("thrift://metastore:9083", "hive://metastore:9083"),
        ("thrift://ms1:9083,thrift://ms2:9083", "hive://ms1:9083"),
        ("http://metastore", "hive://metastore"),
        ("thrift://metastore:9083/", "hive://metastore:9083"),
        ("metastore:9083", "hive://metastore:9083"),
        ("", None),
        (None, None),
    ],
)
def test_metastore_uri_names_the_table_namespace(uris: str | None, expected: str | None) -> None:
    from headwater.agent.session import metastore_namespace

    assert metastore_namespace(uris) == expected
