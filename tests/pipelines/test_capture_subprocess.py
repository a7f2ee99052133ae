"""``lineage_capture.command``: a spark-submit run keeps its own static Spark configs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

JOB = """
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("submitted_numbers").getOrCreate()
# A static config: only the command line that starts the JVM can set it.
assert spark.conf.get("spark.sql.warehouse.dir").rstrip("/").endswith("own-warehouse")
spark.range(3).withColumnRenamed("id", "n").write.saveAsTable("numbers")
spark.stop()
"""


def test_spark_submit_runs_with_its_own_warehouse(lineage_capture, tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    warehouse = tmp_path / "own-warehouse"
    submit = Path(sys.executable).parent / "spark-submit"
    lineage = lineage_capture.command(
        [
            submit,
            "--master",
            "local[1]",
            "--conf",
            f"spark.sql.warehouse.dir={warehouse}",
            "--conf",
            "spark.ui.enabled=false",
            job,
        ],
        root=tmp_path,
    )
    assert lineage.application == "submitted_numbers"
    numbers = lineage.output("numbers")
    assert numbers.dataset.label == "own-warehouse/numbers"
    assert [f"{f.name} {f.type}" for f in numbers.dataset.schema] == ["n long"]
