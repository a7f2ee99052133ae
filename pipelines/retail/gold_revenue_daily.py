"""Gold: revenue per day — completed orders grouped by date, order totals summed into total_revenue."""

from __future__ import annotations

from pyspark.sql import functions as F

from _common import Paths, parse_args, session


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_gold_revenue_daily", paths)
    orders = spark.read.parquet(Paths.uri(paths.silver / "orders"))
    revenue = (
        orders.where(F.col("status") == "completed")
        .groupBy("order_date")
        .agg(
            F.sum("total").alias("total_revenue"),
            F.count("order_id").alias("order_count"),
            F.countDistinct("customer_id").alias("customer_count"),
        )
        .orderBy("order_date")
    )
    revenue.write.mode("overwrite").parquet(Paths.uri(paths.gold / "revenue_daily"))
    spark.stop()


if __name__ == "__main__":
    main()
