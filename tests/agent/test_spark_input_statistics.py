"""inputStatistics: what an action read of its one input, from Spark's own input metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark]


def _complete(lineage: Any) -> dict:
    return next(e for e in lineage.action_events() if e["eventType"] == "COMPLETE"
                and e["outputs"] and e["outputs"][0]["name"].endswith("/out"))


def test_a_single_input_carries_the_rows_and_bytes_read(spark: Any, lineage: Any, tmp_path: Path) -> None:
    source = tmp_path / "source"
    spark.range(4).selectExpr("id AS v").write.parquet(str(source))
    spark.read.parquet(str(source)).where("v >= 0").write.parquet(str(tmp_path / "out"))
    complete = _complete(lineage)
    (read,) = complete["inputs"]
    stats = read["inputFacets"]["inputStatistics"]
    assert stats["rowCount"] == 4 and stats["size"] > 0
    start = next(e for e in lineage.action_events() if e["eventType"] == "START" and e["run"]["runId"] == complete["run"]["runId"])
    assert "inputStatistics" not in start["inputs"][0]["inputFacets"]


def test_an_rdd_read_of_files_is_counted_too(spark: Any, lineage: Any, tmp_path: Path) -> None:
    source = tmp_path / "source"
    spark.createDataFrame([(i,) for i in range(4)], ["v"]).write.parquet(str(source))
    rows = spark.read.parquet(str(source)).rdd.map(lambda r: (r[0] * 2,))
    rows.toDF(["v"]).write.parquet(str(tmp_path / "out"))
    (read,) = _complete(lineage)["inputs"]
    assert read["name"] == str(source)
    assert read["inputFacets"]["inputStatistics"]["rowCount"] == 4


def test_two_inputs_get_no_figures_spark_cannot_split(spark: Any, lineage: Any, tmp_path: Path) -> None:
    for name in ("a", "b"):
        spark.range(3).selectExpr("id AS k").write.parquet(str(tmp_path / name))
    a, b = spark.read.parquet(str(tmp_path / "a")), spark.read.parquet(str(tmp_path / "b"))
    a.join(b, "k").write.parquet(str(tmp_path / "out"))
    complete = _complete(lineage)
    assert len(complete["inputs"]) == 2
    assert all("inputStatistics" not in i["inputFacets"] for i in complete["inputs"])
