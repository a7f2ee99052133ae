"""Silver: clean, cast and deduplicate each bronze source; join orders with
customers and order lines with products.

Outputs under ``lake/silver``: customers, products, orders (one row per order
with its customer's city and country), order_items (lines with product data),
payments, clickstream.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from _common import Paths, parse_args, session


# The export re-sends whole rows, so each source drops exact duplicates. (A key
# subset would make Spark keep first() values of the other columns: an
# aggregation, which is not what cleaning means here.)


def clean_customers(bronze: DataFrame) -> DataFrame:
    # Trim every text column generically: the export adds stray spaces, and a
    # generic pass keeps working when upstream adds or renames a column.
    trimmed = [
        F.trim(F.col(field.name)).alias(field.name) if isinstance(field.dataType, StringType)
        else F.col(field.name)
        for field in bronze.schema.fields
    ]
    return (
        bronze.select(*trimmed)
        .withColumn("email", F.lower(F.col("email")))
        .dropDuplicates()
    )


def clean_products(bronze: DataFrame) -> DataFrame:
    return (
        bronze.select(
            "product_id",
            F.trim("product_name").alias("product_name"),
            F.lower("category").alias("category"),
            F.col("list_price").cast("decimal(10,2)").alias("list_price"),
        )
        .dropDuplicates()
    )


def build_orders(bronze_orders: DataFrame, customers: DataFrame) -> DataFrame:
    orders = (
        bronze_orders.dropDuplicates()
        .select(
            "order_id",
            "customer_id",
            F.col("order_ts").cast("timestamp").alias("order_ts"),
            F.to_date("order_ts").alias("order_date"),
            F.lower("status").alias("status"),
            F.col("amount").cast("decimal(12,2)").alias("total"),
            "currency",
        )
    )
    return orders.join(customers.select("customer_id", "city", "country"), "customer_id", "left")


def build_order_items(lines: DataFrame, orders: DataFrame, products: DataFrame) -> DataFrame:
    return (
        lines.dropDuplicates()
        .join(orders.select("order_id", "order_date", "status"), "order_id")
        .join(products.select("product_id", "product_name", "category"), "product_id")
        .select(
            "order_id", "line_no", "order_date", "status", "product_id", "product_name", "category",
            F.col("quantity").cast("int").alias("quantity"),
            F.col("unit_price").cast("decimal(10,2)").alias("unit_price"),
            (F.col("quantity") * F.col("unit_price")).cast("decimal(12,2)").alias("line_total"),
        )
    )


def clean_payments(bronze: DataFrame) -> DataFrame:
    return bronze.dropDuplicates().select(
        "payment_id", "order_id", "method",
        F.col("paid_amount").cast("decimal(12,2)").alias("paid_amount"),
        F.col("paid_ts").cast("timestamp").alias("paid_ts"),
    )


def clean_clickstream(bronze: DataFrame) -> DataFrame:
    return bronze.dropDuplicates().select(
        "event_id", "session_id", "customer_id",
        F.to_timestamp("ts").alias("event_ts"),
        "page", "product_id", "event_type",
    )


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_silver", paths)

    def bronze(name: str) -> DataFrame:
        return spark.read.parquet(Paths.uri(paths.bronze / name))

    def write(frame: DataFrame, name: str) -> DataFrame:
        target = Paths.uri(paths.silver / name)
        frame.write.mode("overwrite").parquet(target)
        # Later steps read the written table, so lineage runs silver -> silver.
        return spark.read.parquet(target)

    customers = write(clean_customers(bronze("customers")), "customers")
    products = write(clean_products(bronze("products")), "products")
    orders = write(build_orders(bronze("orders"), customers), "orders")
    write(build_order_items(bronze("order_lines"), orders, products), "order_items")
    write(clean_payments(bronze("payments")), "payments")
    write(clean_clickstream(bronze("clickstream")), "clickstream")
    spark.stop()




if __name__ == "__main__":
    main()
