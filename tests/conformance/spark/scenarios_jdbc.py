"""The suite's JDBC column-lineage scenarios, against a real PostgreSQL.

The suite reads and writes a PostgreSQL database named ``test`` (its expected
names are ``test.jdbc_source1``, ``test.test``: the database and the table as
the job names it) next to two Iceberg tables in the Hadoop catalog that is
``spark_catalog`` at ``/tmp/iceberg`` (session profile ``iceberg``, which has
the PostgreSQL driver). The conformance test starts a throwaway cluster,
creates the ``test`` database and names it to the job JVM in
:data:`PG_URL_VARIABLE` as a libpq URL (``postgresql://postgres@host:port/test``).

The expected files leave the JDBC datasets' namespace out. The suite's
listener names its container's host with a hostList resolver,
``postgres-prod`` for ``localhost``; the scenarios here list the cluster's
real host too, so their datasets are ``postgres://postgres-prod:<port>`` as
the suite's are.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from tests.conformance.spark.scenario import Scenario, drop

PG_URL_VARIABLE = "HEADWATER_CONFORMANCE_PG_URL"

#: The suite's own set-up of the ``test`` database.
INIT_SQL = (
    "DROP TABLE IF EXISTS jdbc_source1, jdbc_source2, ol_clients, second_ol_clients, test",
    "CREATE TABLE jdbc_source1 (k int, j1 varchar(5))",
    "CREATE TABLE jdbc_source2 (k int, j2 varchar(5))",
    "INSERT INTO jdbc_source1 VALUES (1, 'ja'), (2, 'jc'), (3, 'je')",
    "INSERT INTO jdbc_source2 VALUES (1, 'jb'), (2, 'jd'), (3, 'jf')",
    "CREATE TABLE ol_clients (client_name varchar(255), client_category varchar(255), client_rating varchar(255))",
    "INSERT INTO ol_clients VALUES ('a', 'b', 'c')",
    "CREATE TABLE second_ol_clients (client_name varchar(255), client_category varchar(255), client_rating varchar(255))",
)


class _Database:
    def __init__(self) -> None:
        url = os.environ.get(PG_URL_VARIABLE)
        if not url:
            raise RuntimeError(f"{PG_URL_VARIABLE} names no PostgreSQL database")
        parts = urlsplit(url)
        self.libpq_url = url
        self.user = parts.username or "postgres"
        self.jdbc_url = f"jdbc:postgresql://{parts.hostname}:{parts.port}{parts.path}"

    def reset(self) -> None:
        import psycopg

        with psycopg.connect(self.libpq_url, autocommit=True) as conn:
            for statement in INIT_SQL:
                conn.execute(statement)

    def options(self, **extra: str) -> dict[str, str]:
        return {"url": self.jdbc_url, "user": self.user, "password": "test", "driver": "org.postgresql.Driver", **extra}


_RESOLVER = "spark.openlineage.dataset.namespaceResolvers.postgres-prod"
_CONF = {f"{_RESOLVER}.type": "hostList", f"{_RESOLVER}.hosts": "[localhost;postgres-other-host;127.0.0.1]"}


def _iceberg_source(spark: Any, number: int, rows: list[tuple[int, str]]) -> None:
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    schema = StructType([StructField("k", IntegerType(), False), StructField(f"v{number}", StringType(), False)])
    spark.createDataFrame(rows, schema).createOrReplaceTempView(f"temp{number}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS v2_source_{number} USING ICEBERG AS SELECT * FROM temp{number}")


def jdbc_column_lineage(spark: Any) -> None:
    db = _Database()
    db.reset()
    drop(spark, "v2_source_1", "v2_source_2")
    _iceberg_source(spark, 1, [(1, "va"), (2, "vc"), (3, "ve")])
    _iceberg_source(spark, 2, [(1, "vb"), (2, "vd"), (3, "vf")])
    query = "select js1.k, CONCAT(js1.j1, js2.j2) as j from jdbc_source1 js1 join jdbc_source2 js2 on js1.k = js2.k"
    spark.read.format("jdbc").options(**db.options(query=query)).load().createOrReplaceTempView("jdbc_result")
    joined = spark.sql(
        "select v.k, concat(j, v) as value from jdbc_result j join "
        "(select vs1.k, concat(v1, v2) as v from v2_source_1 vs1 join v2_source_2 vs2 on vs1.k = vs2.k) v "
        "on j.k = v.k"
    )
    joined.write.format("jdbc").options(**db.options(dbtable="test")).mode("append").save()
    drop(spark, "v2_source_1", "v2_source_2")


def jdbc_single_input(spark: Any) -> None:
    db = _Database()
    db.reset()
    clients = spark.read.format("jdbc").options(**db.options(dbtable="ol_clients")).load()
    clients = clients.select("client_name", "client_category", "client_rating")
    clients.write.format("jdbc").options(**db.options(dbtable="second_ol_clients")).mode("overwrite").save()


JDBC_SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "jdbc column lineage",
        "default",
        "IcebergIntegrationTest",
        "/tmp/iceberg",
        ("columnLineageJDBCStart", "columnLineageJDBCComplete"),
        jdbc_column_lineage,
        conf=_CONF,
        session="iceberg",
    ),
    Scenario(
        "jdbc single input",
        "default",
        "IcebergIntegrationTest",
        "/tmp/iceberg",
        ("columnLineageSingleInputComplete",),
        jdbc_single_input,
        conf=_CONF,
        session="iceberg",
    ),
)
