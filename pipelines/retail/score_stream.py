"""Streaming scoring: each order event from retail.orders, joined with the customer's live
features and scored by the saved repeat-buyer model, written as JSON to retail.order_scores.

A Structured Streaming query (``availableNow``) from topic to topic through the
model: its lineage names the topic, the features, the model and the scores topic.
"""

from __future__ import annotations

from _common import Paths, parse_args
from _streaming import (
    ORDER_SCHEMA,
    ORDERS_TOPIC,
    SCORES_TOPIC,
    bootstrap,
    checkpoint,
    stream_session,
)
from pyspark.ml import PipelineModel
from pyspark.ml.functions import vector_to_array
from pyspark.sql import functions as F


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = stream_session("retail_score_stream", paths)
    model = PipelineModel.load(str(paths.models / "repeat_buyer"))
    features = spark.read.parquet(Paths.uri(paths.features / "live_customer_features"))
    orders = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap())
        .option("subscribe", ORDERS_TOPIC)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.from_json(F.col("value").cast("string"), ORDER_SCHEMA).alias("order"))
        .select("order.order_id", F.col("order.customer_id").alias("order_customer"))
    )
    # Compared as text, as in live_features.py: a drifted id type leaves an order
    # unscored instead of failing the stream on a cast.
    same_customer = F.col("order_customer").cast("string") == features["customer_id"].cast("string")
    scored = model.transform(orders.join(features, same_customer))
    scores = scored.select(
        F.col("order_id").cast("string").alias("key"),
        F.to_json(F.struct(
            "order_id",
            "customer_id",
            vector_to_array("probability")[1].alias("repeat_probability"),
            F.col("prediction").cast("int").alias("predicted_repeat"),
        )).alias("value"),
    )
    query = (
        scores.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap())
        .option("topic", SCORES_TOPIC)
        .option("checkpointLocation", checkpoint(paths, "score_stream"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
