"""Stream: order events from the retail.orders topic, parsed and cleaned into a Delta table.

A Structured Streaming query (``availableNow``: it reads what the topic holds,
then stops) appending to ``lake/silver/orders_live``.
"""

from __future__ import annotations

from _common import Paths, parse_args
from _streaming import ORDER_SCHEMA, ORDERS_TOPIC, bootstrap, checkpoint, stream_session
from pyspark.sql import functions as F


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = stream_session("retail_stream_orders", paths)
    events = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap())
        .option("subscribe", ORDERS_TOPIC)
        .option("startingOffsets", "earliest")
        .load()
    )
    orders = (
        events.select(F.from_json(F.col("value").cast("string"), ORDER_SCHEMA).alias("order"))
        .select("order.*")
        .where(F.col("order_id").isNotNull())
        .select(
            "order_id",
            "customer_id",
            F.to_timestamp("order_ts").alias("order_ts"),
            F.lower(F.trim("status")).alias("status"),
            F.round("total", 2).alias("total"),
            F.upper("currency").alias("currency"),
            F.coalesce(F.col("channel"), F.lit("unknown")).alias("channel"),
        )
    )
    query = (
        orders.writeStream.format("delta")
        .outputMode("append")
        .option("checkpointLocation", checkpoint(paths, "stream_orders"))
        .trigger(availableNow=True)
        .start(Paths.uri(paths.silver / "orders_live"))
    )
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
