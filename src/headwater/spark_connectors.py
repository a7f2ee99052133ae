"""Maven coordinates of the Spark connectors (Iceberg, Delta, Kafka) built for each Spark line.

Each Spark line has its own builds (Scala 2.13 for 4.x, 2.12 for 3.5). A line
not listed (PySpark 4.3) has none on Maven Central. Spark's own Ivy resolves
them from ``spark.jars.packages`` on a session's first start and caches them.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["BUILDS", "connector", "installed_spark_line"]

BUILDS: dict[str, dict[str, str]] = {
    "4.1": {
        "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0",
        # 4.1.0: the Delta release built for Spark 4.1 (later ones add Unity Catalog's kernel).
        "delta": "io.delta:delta-spark_4.1_2.13:4.1.0",
        # 4.1.1: the only 4.1 build whose Kafka token provider is on Maven Central.
        "kafka": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1",
    },
    "4.0": {
        "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0",
        "delta": "io.delta:delta-spark_2.13:4.0.0",
        # 4.0.0: the newest build of the connector that resolves on Maven Central.
        "kafka": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0",
    },
    "3.5": {
        "iceberg": "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0",
        "delta": "io.delta:delta-spark_2.12:3.3.2",
        "kafka": "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7",
    },
}


def installed_spark_line() -> str | None:
    """``"4.1"``, ``"3.5"``, ...: the line of the installed PySpark (None: not installed)."""
    try:
        version = metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return None
    return ".".join(version.split(".")[:2])


def connector(kind: str, spark_line: str | None = None) -> str:
    """The coordinate of ``kind`` (iceberg, delta, kafka) for the line; ``""`` if none exists."""
    line = spark_line if spark_line is not None else installed_spark_line()
    return BUILDS.get(line or "", {}).get(kind, "")
