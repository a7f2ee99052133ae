"""The run model of the OpenLineage Spark listener: one application run, one child run per action.

* The application run starts when the agent attaches and ends (COMPLETE, or
  FAIL when the interpreter exits on an exception) when it closes. Its job is
  the normalised application name; its ``parent`` facet is the orchestrator
  parent configured with ``spark.openlineage.parent*`` / ``OPENLINEAGE_PARENT_*``.
* Each action is a child run whose ``parent`` is the application run, and whose
  ``root`` is the configured root parent (or, failing that, the configured
  parent, or the application run itself).
* Every run carries the ``spark_properties`` facet: the Spark properties named
  by ``spark.openlineage.capturedProperties`` that are set, as the listener
  reports them, and ``environment-properties`` (empty off Databricks, as the
  listener's); every START also carries ``spark_applicationDetails``.
* Every job carries ``sourceCodeLocation`` when the code's location is known
  (see :mod:`headwater.agent.source_code`).
* Action job names are ``{app}.{node}.{output}`` as the listener forms them:
  the normalised application name, the normalised name of the executed plan's
  root node (``execute_insert_into_hadoop_fs_relation_command``), and the last
  two path elements of the output (``warehouse_test``) or ``db_table``.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from headwater import naming
from headwater.agent.debug_facet import DebugCounters, debug_facet
from headwater.agent.emission import EMISSION_FACET, emission_facet
from headwater.events import facets as F

__all__ = ["RUN_FACET_SCHEMA", "RunModel", "iso_time", "uuid7"]

#: The schema URL of the listener's own run facets (``spark_properties``,
#: ``spark.logicalPlan``, ``spark_unknown``): the spec's base run facet.
RUN_FACET_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"


def uuid7(unix_ms: int | None = None) -> str:
    """A time-ordered UUID (version 7), as the listener uses for run ids."""
    ms = int(time.time() * 1000) if unix_ms is None else unix_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def iso_time(epoch_seconds: float | None = None) -> str:
    """RFC 3339 UTC time with milliseconds, e.g. ``2026-01-02T03:04:05.678Z``."""
    moment = datetime.fromtimestamp(time.time() if epoch_seconds is None else epoch_seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class _JobRef:
    namespace: str
    name: str
    run_id: str


class RunModel:
    """Ids, job names and parent facets for one attached SparkSession."""

    def __init__(
        self,
        config: Any,
        spark_app_name: str,
        spark_version: str,
        adapter_version: str,
        spark_properties: Mapping[str, str] | None = None,
        application_details: Mapping[str, str] | None = None,
        source_code: Mapping[str, str] | None = None,
    ) -> None:
        """``spark_properties`` are the session's values of the captured properties;
        ``application_details`` the ``spark_applicationDetails`` fields; ``source_code``
        the ``sourceCodeLocation`` fields."""
        self.config = config
        self.namespace: str = config.namespace
        self.app_name = naming.normalize_job_name(config.app_name or spark_app_name or "spark")
        self.app_run_id: str = config.application_run_id or uuid7()
        self.spark_version = spark_version
        self.adapter_version = adapter_version
        captured = tuple(getattr(config, "captured_properties", ()) or ())
        # Only the listed properties, and only those that are set, as the listener.
        self.spark_properties = {
            key: str(spark_properties[key]) for key in captured if key in (spark_properties or {})
        }
        self.application_details = dict(application_details or {})
        self.source_code = dict(source_code or {})
        #: The opt-in ``debug`` facet's inputs (see :mod:`headwater.agent.debug_facet`):
        #: session facts set at attach, counters the capture worker keeps, and the
        #: emitter's delivery figures.
        self.debug_counters = DebugCounters()
        self.debug_session: Mapping[str, Any] | None = None
        self.debug_delivery: Callable[[], Mapping[str, Any]] | None = None
        #: The emitter's figures, for the ``headwater_emission`` facet of the
        #: application's COMPLETE/FAIL (see :mod:`headwater.agent.emission`).
        self.emission_snapshot: Callable[[], Mapping[str, Any]] | None = None
        self._parent = _ref(
            config.parent_job_namespace, config.parent_job_name, config.parent_run_id
        )
        self._root = _ref(
            config.root_parent_job_namespace,
            config.root_parent_job_name,
            config.root_parent_run_id,
        )

    # -- naming -----------------------------------------------------------------------

    def action_job_name(self, node_name: str | None, suffix: str | None) -> str:
        """``{app}.{node}.{suffix}``; parts that are unknown are left out."""
        name = self.app_name
        if node_name:
            node = naming.normalize_job_name(node_name)
            if getattr(self.config, "job_name_replace_dot_with_underscore", False):
                node = node.replace(".", "_")
            name = f"{name}.{node}"
        if suffix and getattr(self.config, "job_name_append_dataset_name", True):
            name = f"{name}.{suffix.replace('.', '_')}"
        return name

    # -- facets -------------------------------------------------------------------------

    def enabled(self, facet: str) -> bool:
        check = getattr(self.config, "facet_enabled", None)
        return bool(check(facet)) if check is not None else True

    def application_run_facets(self) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if self._parent is not None and self.enabled("parent"):
            root = self._root or self._parent
            facets["parent"] = F.parent_facet(
                self._parent.namespace,
                self._parent.name,
                self._parent.run_id,
                root=(root.namespace, root.name, root.run_id),
            )
        facets.update(self._engine_facets())
        return facets

    def action_run_facets(self) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if self.enabled("parent"):
            root = self._root or self._parent or _JobRef(self.namespace, self.app_name, self.app_run_id)
            facets["parent"] = F.parent_facet(
                self.namespace,
                self.app_name,
                self.app_run_id,
                root=(root.namespace, root.name, root.run_id),
            )
        facets.update(self._engine_facets())
        return facets

    def start_run_facets(self) -> dict[str, Any]:
        """Facets a run's START carries besides the others: the application's details."""
        if not self.application_details or not self.enabled("spark_applicationDetails"):
            return {}
        return {
            "spark_applicationDetails": {
                "_producer": F.PRODUCER,
                "_schemaURL": RUN_FACET_SCHEMA,
                **self.application_details,
            }
        }

    def _engine_facets(self) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if self.enabled("processing_engine"):
            facets["processing_engine"] = F.processing_engine_facet(
                self.spark_version, self.adapter_version
            )
        if self.spark_properties and self.enabled("spark_properties"):
            facets["spark_properties"] = {
                "_producer": F.PRODUCER,
                "_schemaURL": RUN_FACET_SCHEMA,
                "properties": dict(self.spark_properties),
            }
        if self.debug_session is not None and self.enabled("debug"):
            facets["debug"] = debug_facet(
                self.config, self.debug_session, self.debug_counters, self.debug_delivery,
                self.spark_version, self.adapter_version,
            )
        if self.enabled("environment-properties"):
            facets["environment-properties"] = {
                "_producer": F.PRODUCER,
                "_schemaURL": RUN_FACET_SCHEMA,
                "environment-properties": {},
            }
        # spark.openlineage.run.tags, when the configuration carries them as
        # (key, value, source) triples.
        run_tags = tuple(getattr(self.config, "run_tags", ()) or ())
        if run_tags and self.enabled("tags"):
            facets["tags"] = F.tags_facet("tags_run", run_tags)
        return facets

    def job_facets(
        self, job_type: str, sql: str | None = None, processing_type: str = "BATCH"
    ) -> dict[str, Any]:
        facets: dict[str, Any] = {}
        if self.enabled("jobType"):
            facets["jobType"] = F.job_type_facet(job_type, processing_type)
        job_tags = tuple(getattr(self.config, "job_tags", ()) or ())
        if job_tags and self.enabled("tags"):
            facets["tags"] = F.tags_facet("tags_job", job_tags)
        if sql and self.enabled("sql"):
            facets["sql"] = F.sql_facet(sql)
        if self.source_code and self.enabled("sourceCodeLocation"):
            facets["sourceCodeLocation"] = F.source_code_location_facet(self.source_code)
        return facets

    # -- application events ------------------------------------------------------------

    def application_event(
        self, event_type: str, error: tuple[str, str | None] | None = None
    ) -> dict[str, Any]:
        """START / COMPLETE / FAIL of the application run."""
        run_facets = self.application_run_facets()
        if event_type == "START":
            run_facets.update(self.start_run_facets())
        if error is not None and self.enabled("errorMessage"):
            run_facets["errorMessage"] = F.error_message_facet(error[0], error[1])
        if (event_type in ("COMPLETE", "FAIL") and self.emission_snapshot is not None
                and self.enabled(EMISSION_FACET)):
            run_facets[EMISSION_FACET] = emission_facet(self.emission_snapshot())
        return {
            "eventType": event_type,
            "eventTime": iso_time(),
            "producer": F.PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": self.app_run_id, "facets": run_facets},
            "job": {
                "namespace": self.namespace,
                "name": self.app_name,
                "facets": self.job_facets("APPLICATION"),
            },
            "inputs": [],
            "outputs": [],
        }


def _ref(namespace: str | None, name: str | None, run_id: str | None) -> _JobRef | None:
    if namespace and name and run_id:
        return _JobRef(namespace, name, run_id)
    return None
