"""Features: per-customer behaviour for the repeat-buyer model.

Features come from the first weeks of the data (orders, spend, web sessions),
the label from the weeks after the cut-off: did the customer order again? Keeping
the two windows apart keeps the label out of the features.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from _common import Paths, parse_args, session

#: Days of history that feed the features; orders after them define the label.
FEATURE_DAYS = 45


def build_features(customers: DataFrame, orders: DataFrame, clicks: DataFrame) -> DataFrame:
    start = orders.agg(F.min("order_date").alias("start"))
    orders = orders.where(F.col("status") == "completed").crossJoin(start).withColumn(
        "in_history", F.col("order_date") < F.date_add(F.col("start"), FEATURE_DAYS)
    )
    history = (
        orders.where("in_history")
        .groupBy("customer_id")
        .agg(
            F.count("order_id").alias("orders_before"),
            F.sum("total").cast("double").alias("spend_before"),
            F.avg("total").cast("double").alias("avg_order_value"),
        )
    )
    label = (
        orders.where(~F.col("in_history"))
        .groupBy("customer_id")
        .agg(F.lit(1.0).alias("bought_again"))
    )
    web = clicks.groupBy("customer_id").agg(
        F.countDistinct("session_id").alias("sessions"),
        F.count("event_id").alias("page_views"),
        F.sum(F.when(F.col("event_type") == "add_to_cart", 1).otherwise(0)).alias("cart_adds"),
    )
    return (
        customers.select("customer_id", "country")
        .join(history, "customer_id", "left")
        .join(web, "customer_id", "left")
        .join(label, "customer_id", "left")
        .na.fill(0, ["orders_before", "sessions", "page_views", "cart_adds"])
        .na.fill(0.0, ["spend_before", "avg_order_value", "bought_again"])
    )


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_features", paths)

    def silver(name: str) -> DataFrame:
        return spark.read.parquet(Paths.uri(paths.silver / name))

    features = build_features(silver("customers"), silver("orders"), silver("clickstream"))
    features.write.mode("overwrite").parquet(Paths.uri(paths.features / "customer_features"))
    spark.stop()


if __name__ == "__main__":
    main()
