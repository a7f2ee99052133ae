"""Static session profiles for the conformance JVMs.

Catalogs, extensions and ``spark.jars.packages`` are fixed when a JVM starts,
so scenarios that need different ones run in JVMs of their own. A profile is
the static configuration such a JVM starts with, besides the warehouse and the
embedded Derby metastore every profile gets (``run_jobs.py``).
"""

from __future__ import annotations

from tests.support.spark_packages import DELTA, ICEBERG, KAFKA, POSTGRES_JDBC

__all__ = ["PROFILES", "PROFILE_CONNECTORS"]

PROFILES: dict[str, dict[str, str]] = {
    # Spark's own session catalog on the embedded Hive metastore.
    "hive": {},
    # The suite's Iceberg runs: spark_catalog is an Iceberg Hadoop catalog at /tmp/iceberg.
    "iceberg": {
        "spark.jars.packages": f"{ICEBERG},{POSTGRES_JDBC}",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.spark_catalog.type": "hadoop",
        "spark.sql.catalog.spark_catalog.warehouse": "/tmp/iceberg",
    },
    # The suite's Delta runs: Delta owns spark_catalog, tables under /tmp/delta.
    "delta": {
        "spark.jars.packages": DELTA,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    },
    "kafka": {"spark.jars.packages": KAFKA},
}

#: The connectors each profile's JVM loads: on a line without a build of one of
#: them (PySpark 4.3) the profile's scenarios cannot run, and say so.
PROFILE_CONNECTORS: dict[str, tuple[str, ...]] = {
    "hive": (),
    "iceberg": ("iceberg",),
    "delta": ("delta",),
    "kafka": ("kafka",),
}
