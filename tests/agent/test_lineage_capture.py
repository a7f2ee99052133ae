"""``lineage_capture.run``: a function on the session's SparkSession, with the agent
attached for the call only, and its lineage asked about and snapshotted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headwater.testing import LineageAssertionError

pytestmark = pytest.mark.spark


def _orders(spark: Any, tmp_path: Path) -> str:
    path = str(tmp_path / "silver" / "orders")
    rows = [(1, "ana", 10.0), (2, "ana", 5.0), (3, "bruno", -1.0)]
    spark.createDataFrame(rows, "order_id int, customer string, amount double").write.parquet(path)
    return path


def test_a_function_runs_under_the_agent_and_is_detached_after(
    spark: Any, lineage_capture: Any, lineage_snapshot: Any, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F

    from headwater.agent.agent_registry import agent_for

    orders = _orders(spark, tmp_path)  # written before the capture: not part of it
    stop_before = spark.__dict__.get("stop")

    def revenue(session: Any) -> None:
        (
            session.read.parquet(orders)
            .where("amount > 0")
            .groupBy("customer")
            .agg(F.sum("amount").alias("total"), F.count("order_id").alias("orders"))
            .write.mode("overwrite")
            .parquet(str(tmp_path / "gold" / "revenue"))
        )

    lineage = lineage_capture.run(revenue, root=tmp_path)
    [run] = lineage.runs
    assert run.state == "COMPLETE"
    assert lineage.reads("silver.orders")
    output = lineage.output("gold.revenue")
    assert output.column("total").comes_from("silver.orders.amount", via="AGGREGATION")
    assert output.column("customer").comes_from("orders.customer", via="IDENTITY")
    assert "silver/orders.amount INDIRECT/FILTER" in {e.describe() for e in output.dataset_edges}
    with pytest.raises(LineageAssertionError, match="nearest: silver/orders.amount"):
        output.column("total").comes_from("orders.amont")
    lineage_snapshot(lineage, "in_process_revenue")

    # Detached: no agent left on the session, and stop() is the one it had.
    assert agent_for(spark.sparkContext) is None
    assert spark.__dict__.get("stop") is stop_before

    # A second capture on the same session sees its own action only.
    again = lineage_capture.run(
        lambda session: session.read.parquet(orders).write.parquet(str(tmp_path / "copy")),
        root=tmp_path,
    )
    assert [o.dataset.label for o in again.outputs] == ["copy"]


def test_the_job_error_propagates_and_the_agent_is_still_detached(
    spark: Any, lineage_capture: Any, tmp_path: Path
) -> None:
    from headwater.agent.agent_registry import agent_for

    def failing(session: Any) -> None:
        raise RuntimeError("the job's own error")

    with pytest.raises(RuntimeError, match="the job's own error"):
        lineage_capture.run(failing, root=tmp_path)
    assert agent_for(spark.sparkContext) is None
