"""The opt-in ``debug`` run facet: what the agent ran with and what it has done so far.

Enabled as the listener's is (``spark.openlineage.facets.debug.disabled=false``
or ``spark.openlineage.debugFacet=enabled``), it rides on every run event and
tells whoever reads an odd event in the backend what produced it:

* ``classpath`` — headwater's, Spark's and Scala's versions, the jars the
  session was given (``spark.jars``) and whether the table-format and
  connector classes the agent understands are on the driver's class path;
* ``system`` — the driver's Java, OS, locale, time zone, Python and deploy mode;
* ``config`` — the effective configuration that shapes events (namespace,
  disabled facets, column lineage, transport type; never a URL or a secret);
* ``metrics`` — counters and timings as ``{name, value, tags}``, under the
  listener's metric names where the meaning is the same
  (``openlineage.spark.event.sql.start``, ``openlineage.spark.unknownFacet.time``),
  so dashboards built on the listener's debug facet read them unchanged, and
  ``headwater.*`` names for the rest (events emitted, sent, spooled, rejected).

The session facts are read once, at attach, with a dozen py4j calls.
"""

from __future__ import annotations

import logging
import platform
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from headwater.agent.py4j.handles import jvm_view
from headwater.events.model import PRODUCER

__all__ = ["DebugCounters", "debug_facet", "session_debug_facts"]

logger = logging.getLogger(__name__)

#: The schema URL of the listener's own run facets: the spec's base run facet.
_RUN_FACET_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"

#: Classes whose presence changes what the agent can name.
_KNOWN_CLASSES = (
    "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "org.apache.iceberg.catalog.Catalog",
    "org.apache.spark.sql.kafka010.KafkaSourceProvider",
    "org.postgresql.Driver",
)

_JAVA_PROPERTIES = {
    "javaVersion": "java.version",
    "javaVendor": "java.vendor",
    "osArch": "os.arch",
    "osName": "os.name",
    "osVersion": "os.version",
    "userLanguage": "user.language",
    "userTimezone": "user.timezone",
}


@dataclass
class DebugCounters:
    """What the agent has done so far, counted where it happens (the capture worker)."""

    sql_starts: int = 0
    unknown_facet_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_action(self, unknown_facet_seconds: float) -> None:
        with self._lock:
            self.sql_starts += 1
            self.unknown_facet_seconds += unknown_facet_seconds


def session_debug_facts(spark: Any, adapter_version: str) -> dict[str, Any]:
    """``classpath`` and ``system`` of the debug facet, read once from the session."""
    jvm = jvm_view(spark.sparkContext)
    conf = spark.sparkContext.getConf()
    system: dict[str, Any] = {
        "sparkDeployMode": conf.get("spark.submit.deployMode", "client"),
        "pythonVersion": platform.python_version(),
    }
    for key, name in _JAVA_PROPERTIES.items():
        try:
            value = jvm.java.lang.System.getProperty(name)
        except Exception:
            logger.debug("no JVM property %s", name, exc_info=True)
            continue
        if value is not None:
            system[key] = str(value)
    classpath: dict[str, Any] = {
        "headwaterVersion": adapter_version,
        "sparkVersion": spark.version,
        "jars": [jar for jar in (conf.get("spark.jars", "") or "").split(",") if jar],
    }
    try:
        classpath["scalaVersion"] = str(jvm.scala.util.Properties.versionNumberString())
    except Exception:
        logger.debug("no Scala version", exc_info=True)
    details = []
    for name in _KNOWN_CLASSES:
        try:
            jvm.java.lang.Class.forName(name, False, jvm.java.lang.Thread.currentThread().getContextClassLoader())
            present = True
        except Exception:
            present = False
        details.append({"className": name, "onClasspath": present})
    classpath["classDetails"] = details
    return {"classpath": classpath, "system": system}


def _config_summary(config: Any) -> dict[str, Any]:
    disabled = sorted(getattr(config, "disabled_facets", ()) or ())
    transport = getattr(config, "transport", {}) or {}
    return {
        "namespace": getattr(config, "namespace", None),
        "facets": {"effectiveDisabledFacets": disabled},
        "columnLineage": {
            "enabled": bool(getattr(config, "column_lineage_enabled", True)),
            "datasetLineageEnabled": bool(getattr(config, "dataset_lineage_enabled", True)),
            "schemaSizeLimit": getattr(config, "column_lineage_schema_size_limit", None),
        },
        "transport": {"type": transport.get("type")},
    }


def debug_facet(
    config: Any,
    session_facts: Mapping[str, Any],
    counters: DebugCounters,
    delivery: Callable[[], Mapping[str, Any]] | None,
    spark_version: str,
    adapter_version: str,
) -> dict[str, Any]:
    """The ``debug`` run facet as of now."""
    tags = [
        {"key": "openlineage.spark.disabled.facets",
         "value": ";".join(sorted(getattr(config, "disabled_facets", ()) or ()))},
        {"key": "openlineage.spark.integration.version", "value": adapter_version},
        {"key": "openlineage.spark.version", "value": spark_version},
    ]
    with counters._lock:
        metrics = [
            {"name": "openlineage.spark.event.sql.start", "value": float(counters.sql_starts), "tags": tags},
            {"name": "openlineage.spark.unknownFacet.time",
             "value": counters.unknown_facet_seconds * 1000.0, "tags": tags},
        ]
    snapshot: Mapping[str, Any] = {}
    if delivery is not None:
        try:
            snapshot = delivery()
        except Exception:
            logger.debug("no delivery figures", exc_info=True)
    for name in ("emitted", "sent", "spooled", "rejected", "replayed", "lost"):
        if name in snapshot:
            metrics.append({"name": f"headwater.agent.events.{name}", "value": float(snapshot[name]), "tags": tags})
    return {
        "_producer": PRODUCER,
        "_schemaURL": _RUN_FACET_SCHEMA,
        **dict(session_facts),
        "config": _config_summary(config),
        "metrics": {"metrics": metrics},
    }
