"""`headwater instrument` on real jobs: `python job.py` and `spark-submit job.py` get the agent.

Each test starts one JVM (through the job it runs).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyspark
import pytest

from tests.agent.test_instrument import _base_env, _headwater

SPARK_SUBMIT = Path(pyspark.__file__).parent / "bin" / "spark-submit"


JOB = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession, functions as F

    out = sys.argv[1]
    spark = SparkSession.builder.master("local[1]").appName("instrumented_job") \\
        .config("spark.ui.enabled", "false").getOrCreate()
    orders = spark.range(20).withColumn("customer", F.col("id") % 3)
    customers = spark.range(3).withColumnRenamed("id", "customer")
    orders.write.mode("overwrite").parquet(out + "/orders")
    joined = spark.read.parquet(out + "/orders").join(customers, "customer")
    joined.groupBy("customer").count().write.mode("overwrite").parquet(out + "/totals")
    # One more action before stop: this test is about activation; whether an action
    # that ends right at spark.stop() is still captured is the capture tests' concern.
    spark.range(3).count()
    spark.stop()
    """
)


def _events(path: Path) -> list[dict[str, Any]]:
    assert path.exists(), "no events were written"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _check_job_events(tmp_path: Path) -> None:
    events = _events(tmp_path / "events.jsonl")
    outputs = {
        output["name"]
        for event in events
        for output in event.get("outputs", [])
    }
    assert any(name.endswith("/orders") for name in outputs), outputs
    assert any(name.endswith("/totals") for name in outputs), outputs
    states = [event["eventType"] for event in events]
    assert "START" in states and "COMPLETE" in states


@pytest.mark.spark
def test_python_job_under_instrument_emits_lineage(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    result = _headwater("instrument", "--", sys.executable, str(job), str(tmp_path / "data"),
                        env=_base_env(tmp_path), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    _check_job_events(tmp_path)


@pytest.mark.spark
def test_spark_submit_job_under_instrument_emits_lineage(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    result = _headwater("instrument", "--", str(SPARK_SUBMIT), "--master", "local[1]",
                        str(job), str(tmp_path / "data"), env=_base_env(tmp_path), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    _check_job_events(tmp_path)
