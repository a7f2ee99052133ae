"""Facts about the SparkSession that name datasets: warehouse, catalog, metastore.

Read once when the agent attaches. Catalog tables are named in ``symlinks`` by
``hive://host:port`` when a Hive metastore URI is configured — the listener reads
``spark.sql.hive.metastore.uris``, then ``spark.hadoop.hive.metastore.uris``; we
also read Hadoop's ``hive.metastore.uris`` — and by the warehouse directory
otherwise. Only the naming uses the URI: Spark itself may well run on its
embedded metastore.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from headwater.agent.py4j.handles import java_context

__all__ = ["application_details", "metastore_namespace", "session_context", "spark_properties"]

logger = logging.getLogger(__name__)

_METASTORE_KEYS = ("spark.sql.hive.metastore.uris", "spark.hadoop.hive.metastore.uris")


def metastore_namespace(uris: str | None) -> str | None:
    """``hive://host:port`` of the first metastore URI in ``uris`` (comma separated).

    >>> metastore_namespace("thrift://ms1:9083,thrift://ms2:9083")
    'hive://ms1:9083'
    >>> metastore_namespace("http://metastore")
    'hive://metastore'
    """
    if not uris:
        return None
    first = uris.split(",")[0].strip()
    if not first:
        return None
    parts = urlsplit(first if "://" in first else f"thrift://{first}")
    if not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"hive://{parts.hostname}" + (f":{port}" if port is not None else "")


def session_context(spark: Any) -> dict[str, Any]:
    """Warehouse URI, catalog implementation and table namespace of the session."""
    conf = spark.conf
    warehouse = conf.get("spark.sql.warehouse.dir", None)
    if warehouse and warehouse.startswith("/"):
        warehouse = "file:" + warehouse
    catalog_impl = conf.get("spark.sql.catalogImplementation", "in-memory")
    table_namespace = None
    try:
        uris = next((conf.get(key, None) for key in _METASTORE_KEYS if conf.get(key, None)), None)
        if not uris:
            uris = java_context(spark.sparkContext).hadoopConfiguration().get("hive.metastore.uris")
        table_namespace = metastore_namespace(str(uris) if uris else None)
    except Exception:
        logger.debug("no metastore URI", exc_info=True)
    return {
        "warehouse_uri": warehouse.rstrip("/") if warehouse else None,
        "catalog_impl": catalog_impl,
        "table_namespace": table_namespace or (warehouse.rstrip("/") if warehouse else None),
    }


def spark_properties(spark: Any, keys: Any) -> dict[str, str]:
    """The values of the properties ``keys`` that are set: the session's runtime
    configuration over the SparkConf, as the session itself resolves them."""
    values: dict[str, str] = {}
    for key in keys:
        try:
            value = spark.conf.get(key, None)
            if value is None:
                value = spark.sparkContext.getConf().get(key, None)
        except Exception:
            logger.debug("property %s not readable", key, exc_info=True)
            continue
        if value is not None:
            values[key] = str(value)
    return values


def application_details(spark: Any) -> dict[str, str]:
    """The Spark application as the listener's ``spark_applicationDetails`` facet names
    it: master, name, id, deploy mode, driver host, user, and the UI's URLs when set."""
    context = spark.sparkContext
    conf = context.getConf()
    details: dict[str, str] = {}
    for field, read in (
        ("master", lambda: context.master),
        ("appName", lambda: context.appName),
        ("applicationId", lambda: context.applicationId),
        ("deployMode", lambda: conf.get("spark.submit.deployMode", "client")),
        ("driverHost", lambda: conf.get("spark.driver.host", None)),
        ("userName", lambda: context.sparkUser()),
        ("uiWebUrl", lambda: context.uiWebUrl),
        ("proxyUrl", lambda: conf.get("spark.ui.proxyBase", None)),
        ("historyUrl", lambda: conf.get("spark.yarn.historyServer.address", None)),
    ):
        try:
            value = read()
        except Exception:
            logger.debug("application detail %s not readable", field, exc_info=True)
            continue
        if value:
            details[field] = str(value)
    return details
