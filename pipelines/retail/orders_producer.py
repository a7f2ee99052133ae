"""Order events: the latest silver orders, as JSON, into the retail.orders Kafka topic.

The point of sale's stand-in: a batch job writing ``to_json(struct(...))``, so
the topic's value schema is the struct's (its producer-side schema).
"""

from __future__ import annotations

from _common import Paths, parse_args
from _streaming import ORDERS_TOPIC, bootstrap, stream_session
from pyspark.sql import functions as F

#: How many of the newest orders are replayed as events.
EVENTS = 300


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = stream_session("retail_orders_producer", paths)
    orders = spark.read.parquet(Paths.uri(paths.silver / "orders"))
    events = (
        orders.orderBy(F.col("order_ts").desc(), "order_id")
        .limit(EVENTS)
        .select(
            F.col("order_id").cast("string").alias("key"),
            F.to_json(F.struct(
                "order_id",
                "customer_id",
                F.date_format("order_ts", "yyyy-MM-dd'T'HH:mm:ss").alias("order_ts"),
                "status",
                F.col("total").cast("double").alias("total"),
                "currency",
                F.lit("web").alias("channel"),
            )).alias("value"),
        )
    )
    (
        events.write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap())
        .option("topic", ORDERS_TOPIC)
        .save()
    )
    spark.stop()


if __name__ == "__main__":
    main()
