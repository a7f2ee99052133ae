"""Shared plumbing for the real-time jobs: the broker, the topics and the connector jars.

The demo's runner passes the broker as ``RETAIL_KAFKA_BOOTSTRAP`` and the Spark
connector packages (Kafka, Delta) built for the installed Spark line as
``RETAIL_SPARK_PACKAGES``; run by hand, set both. Streams run with the
``availableNow`` trigger: each run reads what the topic holds when it starts,
in micro-batches, and stops — the incremental-batch pattern of a scheduled
streaming job.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from _common import Paths, session
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["ORDERS_TOPIC", "ORDER_SCHEMA", "SCORES_TOPIC", "bootstrap", "checkpoint",
           "stream_session"]

ORDERS_TOPIC = "retail.orders"
SCORES_TOPIC = "retail.order_scores"

#: What the consumers declare an order event to be. A producer writing another
#: type for a field (``--drift`` makes customer ids strings) gets nulls back,
#: silently: the declared schema is recorded so the mismatch is a fact.
ORDER_SCHEMA = StructType([
    StructField("order_id", LongType()),
    StructField("customer_id", LongType()),
    StructField("order_ts", StringType()),
    StructField("status", StringType()),
    StructField("total", DoubleType()),
    StructField("currency", StringType()),
    StructField("channel", StringType()),
])


def bootstrap() -> str:
    value = os.environ.get("RETAIL_KAFKA_BOOTSTRAP")
    if not value:
        raise SystemExit("set RETAIL_KAFKA_BOOTSTRAP to the Kafka broker (host:port)")
    return value


def checkpoint(paths: Paths, job: str) -> str:
    return Paths.uri(paths.root / "checkpoints" / job)


def stream_session(app_name: str, paths: Paths) -> SparkSession:
    """A session with the Kafka and Delta connectors (``RETAIL_SPARK_PACKAGES``)."""
    packages = os.environ.get("RETAIL_SPARK_PACKAGES", "")
    conf = {"spark.jars.packages": packages} if packages else {}
    if "delta" in packages:
        conf["spark.sql.extensions"] = "io.delta.sql.DeltaSparkSessionExtension"
        conf["spark.sql.catalog.spark_catalog"] = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    return session(app_name, paths, conf=conf)
