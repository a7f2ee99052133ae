"""The JVM handles PySpark keeps on private attributes, and the JavaRDD a save runs over.

PySpark's public API hands out no JVM objects, yet the agent needs a few: the
JVM session to register its listener on, the py4j gateway with its callback
server, the ``JavaSparkContext`` for Hadoop's configuration, and, for an RDD
save, the JavaRDD Spark will run it over. Each function here reads one private
attribute; :mod:`headwater.agent.py4j` lists them with their fallbacks. None of
them catches: the caller's guard decides what is lost when one is missing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["callback_gateway", "java_context", "java_session", "jvm_view", "save_input"]


def java_session(spark: Any) -> Any:
    """The JVM ``SparkSession`` behind a PySpark one (``SparkSession._jsparkSession``)."""
    return spark._jsparkSession


def java_context(spark_context: Any) -> Any:
    """The ``JavaSparkContext`` behind a PySpark ``SparkContext`` (``SparkContext._jsc``)."""
    return spark_context._jsc


def jvm_view(spark_context: Any) -> Any:
    """py4j's view of the JVM's classes for ``spark_context`` (``SparkContext._jvm``)."""
    return spark_context._jvm


def callback_gateway(spark_context: Any) -> Any:
    """The py4j gateway of ``spark_context`` (``SparkContext._gateway``), its callback
    server started so that the JVM can call listeners implemented in Python."""
    from pyspark.java_gateway import ensure_callback_server_started

    gateway = spark_context._gateway
    ensure_callback_server_started(gateway)
    return gateway


def _keep(_: int, rows: Any) -> Any:
    return rows


def _save_serializer(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The serializer PySpark re-serialises the RDD to before a pickled save."""
    from pyspark.serializers import AutoBatchedSerializer, BatchedSerializer, CPickleSerializer

    if method == "saveAsPickleFile":
        batch_size = args[0] if args else kwargs.get("batchSize", 10)
        if batch_size == 0:
            return AutoBatchedSerializer(CPickleSerializer())
        return BatchedSerializer(CPickleSerializer(), batch_size)
    return AutoBatchedSerializer(CPickleSerializer())  # RDD._pickled()


def save_input(rdd: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, bool]:
    """The JavaRDD under ``rdd.<method>(path, *args, **kwargs)``'s save, and whether a
    PythonRDD sits between it and the save.

    At most it makes the RDD's own JVM RDD, which the save itself would create a
    moment later.
    """
    if method != "saveAsTextFile" and rdd._jrdd_deserializer == _save_serializer(method, args, kwargs):
        # RDD._reserialize adds no map: the save runs over the RDD's own JVM RDD.
        return rdd._jrdd, False
    # PySpark pipelines the save's function with rdd's own Python functions into one
    # PythonRDD over ``_prev_jrdd``; a map that changes nothing names that JavaRDD
    # without restating PySpark's pipelining rules here.
    return rdd.mapPartitionsWithIndex(_keep)._prev_jrdd, True
