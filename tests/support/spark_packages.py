"""Connector jars for the Spark test sessions, as ``spark.jars.packages`` coordinates.

Resolved from Maven Central by Spark's own Ivy on a session's first start and
cached in ``~/.ivy2.5.2`` (Spark 4) or ``~/.ivy2`` (Spark 3.5) after that. Each
Spark line has its own builds (Scala 2.13 for 4.x, 2.12 for 3.5), picked by
the PySpark installed. Catalogs, extensions and packages are static per JVM,
so each test session decides them up front: see :func:`lakehouse_conf`.
"""

from __future__ import annotations

import pyspark
import pytest

from headwater.spark_connectors import BUILDS

__all__ = [
    "CONNECTORS",
    "DELTA",
    "ICEBERG",
    "KAFKA",
    "POSTGRES_JDBC",
    "SPARK_LINE",
    "lakehouse_conf",
    "missing_connectors",
    "needs_connectors",
]

#: ``"4.1"``, ``"4.0"``, ``"3.5"``, ...: the Spark line of the installed PySpark.
SPARK_LINE = ".".join(pyspark.__version__.split(".")[:2])

#: The connector builds of this line (none for a line without builds on Maven Central,
#: such as PySpark 4.3: its sessions get the PostgreSQL driver only, so the tests that
#: need no connector run there).
_LINE = BUILDS.get(SPARK_LINE, {})
ICEBERG = _LINE.get("iceberg", "")
DELTA = _LINE.get("delta", "")
KAFKA = _LINE.get("kafka", "")
POSTGRES_JDBC = "org.postgresql:postgresql:42.7.8"

#: The connectors this line has builds of, and the PostgreSQL driver.
CONNECTORS = tuple(p for p in (ICEBERG, DELTA, KAFKA, POSTGRES_JDBC) if p)


def missing_connectors(*kinds: str) -> list[str]:
    """Those of ``kinds`` (iceberg, delta, kafka) this line has no build of."""
    return [kind for kind in kinds if not _LINE.get(kind)]


def needs_connectors(*kinds: str) -> pytest.MarkDecorator:
    """Mark a test that needs the ``kinds`` connectors (iceberg, delta, kafka): on a
    line without a build of one of them on Maven Central (PySpark 4.3) it is skipped
    with a reason naming the missing builds; on every other line, every line CI
    runs among them, it runs."""
    missing = missing_connectors(*kinds)
    return pytest.mark.skipif(
        bool(missing),
        reason=f"no {' or '.join(missing)} connector build for Spark {SPARK_LINE} on Maven Central",
    )


_EXTENSIONS = {
    ICEBERG: "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    DELTA: "io.delta.sql.DeltaSparkSessionExtension",
}


def lakehouse_conf(iceberg_warehouse: str, packages: tuple[str, ...] = CONNECTORS) -> dict[str, str]:
    """Static settings of a session with the given connectors: Delta owns
    ``spark_catalog`` (it delegates other providers to the session catalog, so
    Hive and parquet tables keep working) and Iceberg lives in a Hadoop catalog
    named ``ice`` at ``iceberg_warehouse``."""
    conf = {"spark.jars.packages": ",".join(packages)}
    # Delta's extension first: on Spark 3.5, Iceberg's row-level rewrite rules also
    # match a Delta table's UPDATE and fail on it when they run before Delta's.
    extensions = [_EXTENSIONS[p] for p in (DELTA, ICEBERG) if p in packages]
    if extensions:
        conf["spark.sql.extensions"] = ",".join(extensions)
    if DELTA in packages:
        conf["spark.sql.catalog.spark_catalog"] = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    if ICEBERG in packages:
        conf["spark.sql.catalog.ice"] = "org.apache.iceberg.spark.SparkCatalog"
        conf["spark.sql.catalog.ice.type"] = "hadoop"
        conf["spark.sql.catalog.ice.warehouse"] = iceberg_warehouse
    return conf
