"""Duplicate work from a real Spark session: a Spark SQL job and the DataFrame job that
computes the same revenue (its columns renamed) are found ``equal`` by
``/api/v2/duplicates``; the same DataFrame job filtering on another column is
``partial`` to both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.agent.conftest import Lineage


def _output_of(side: dict[str, Any]) -> str:
    """The output directory's name of one side of a pair (from its first matched column)."""
    dataset = side["matches"][0]["column"].rsplit(":", 1)[0]
    return Path(dataset.split(":", 2)[2]).name


def test_sql_and_dataframe_revenue_are_duplicates(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    orders = str(tmp_path / "orders")
    rows = [(1, "ana", "paid", "EU", 10.0), (2, "bruno", "open", "US", 5.0)]
    schema = "id int, customer string, status string, region string, amount double"
    spark.createDataFrame(rows, schema).write.parquet(orders)
    tracker = Lineage(spark, tmp_path / "events.jsonl")
    try:
        spark.read.parquet(orders).createOrReplaceTempView("dup_orders")
        spark.sql(
            "SELECT customer, SUM(amount) AS total FROM dup_orders "
            "WHERE status = 'paid' GROUP BY customer"
        ).write.parquet(str(tmp_path / "revenue_sql"))
        (
            spark.read.parquet(orders)
            .filter(F.col("status") == "paid")
            .groupBy("customer")
            .agg(F.sum("amount").alias("revenue"))
            .withColumnRenamed("customer", "cust")
            .write.parquet(str(tmp_path / "revenue_df"))
        )
        (
            spark.read.parquet(orders)
            .filter(F.col("region") == "EU")
            .groupBy("customer")
            .agg(F.sum("amount").alias("revenue"))
            .write.parquet(str(tmp_path / "revenue_eu"))
        )
        events = tracker.events()
    finally:
        tracker.close()
    store = Store.open(f"sqlite:///{tmp_path / 'lineage.db'}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            assert client.post("/api/v1/lineage/batch", json=events).status_code < 300
            response = client.get("/api/v2/duplicates", params={"minShare": "0.5"})
    finally:
        store.close()
    assert response.status_code == 200, response.text
    found = {
        tuple(sorted(_output_of(side) for side in pair["jobs"])): pair
        for pair in response.json()["duplicates"]
    }
    assert set(found) == {
        ("revenue_df", "revenue_sql"),
        ("revenue_df", "revenue_eu"),
        ("revenue_eu", "revenue_sql"),
    }, found
    equal = found[("revenue_df", "revenue_sql")]
    assert equal["relation"] == "equal", equal
    assert [(s["columns"], s["sameColumns"]) for s in equal["jobs"]] == [(2, 2), (2, 2)]
    for near in (("revenue_df", "revenue_eu"), ("revenue_eu", "revenue_sql")):
        pair = found[near]
        assert pair["relation"] == "partial", pair
        # Both columns compute the same values; the filter column differs.
        assert [(s["sameColumns"], s["sameValues"]) for s in pair["jobs"]] == [(0, 2), (0, 2)]
