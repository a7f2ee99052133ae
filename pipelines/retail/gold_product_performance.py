"""Gold: product performance — revenue and units per product, ranked within its
category and as a share of the category (window functions)."""

from __future__ import annotations

from pyspark.sql import Window
from pyspark.sql import functions as F

from _common import Paths, parse_args, session


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_gold_product_performance", paths)
    items = spark.read.parquet(Paths.uri(paths.silver / "order_items"))
    per_product = (
        items.where(F.col("status") == "completed")
        .groupBy("product_id", "product_name", "category")
        .agg(F.sum("line_total").alias("revenue"), F.sum("quantity").alias("units_sold"))
    )
    in_category = Window.partitionBy("category")
    performance = per_product.select(
        "product_id", "product_name", "category", "revenue", "units_sold",
        F.rank().over(in_category.orderBy(F.desc("revenue"))).alias("category_rank"),
        (F.col("revenue") / F.sum("revenue").over(in_category)).cast("double")
        .alias("category_revenue_share"),
    )
    performance.write.mode("overwrite").parquet(Paths.uri(paths.gold / "product_performance"))
    spark.stop()


if __name__ == "__main__":
    main()
