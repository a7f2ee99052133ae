"""The agent's configuration, read the way the OpenLineage Spark listener reads it.

A user switching from the OpenLineage jar keeps every ``spark.openlineage.*``
key and every ``OPENLINEAGE_*`` environment variable; :meth:`AgentConfig.from_sources`
turns them into one frozen :class:`AgentConfig`. Precedence, as the listener's:

1. ``spark.openlineage.*`` keys of the Spark configuration win;
   then the listener's ``openlineage.yml`` (``OPENLINEAGE_CONFIG``);
2. then ``OPENLINEAGE__<PATH>`` variables (``OPENLINEAGE__TRANSPORT__TYPE=http`` is
   ``transport.type``), then the short ``OPENLINEAGE_URL`` / ``_ENDPOINT`` /
   ``_API_KEY`` / ``_NAMESPACE`` / ``_PARENT_ID`` / ``_ROOT_PARENT_ID`` variables
   (the parent also from ``_PARENT_JOB_NAMESPACE`` / ``_PARENT_JOB_NAME`` /
   ``_PARENT_RUN_ID``, which win over ``_PARENT_ID``);
3. then the listener's defaults (namespace ``default``, console transport,
   facets ``spark_unknown``, ``spark.logicalPlan`` and ``debug`` disabled).

``OPENLINEAGE_DISABLED=true`` or ``spark.openlineage.disabled=true`` turns the agent off.

headwater's own delivery settings (queue, spool, retries, circuit breaker) live
under ``spark.headwater.*`` with ``HEADWATER_*`` variables, so they never collide
with a key the listener knows. Every key read here is listed in
:mod:`headwater.agent.config_keys` and documented in ``docs/agent-configuration.md``;
values are read in the listener's syntax (:mod:`headwater.agent.config_syntax`).

Parsing never raises: a malformed value is logged and its default used, because
configuration is read inside the user's Spark job.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from headwater.agent.config_syntax import (
    Tag,
    java_regex,
    parse_bool,
    parse_list,
    parse_number,
    parse_tags,
    split_parent_id,
)
from headwater.agent.namespace_resolvers import NamespaceResolver, parse_namespace_resolvers
from headwater.agent.openlineage_yml import read_openlineage_yml
from headwater.transport.resolve import resolve_transport

__all__ = ["DEFAULT_DISABLED_FACETS", "AgentConfig", "DeliveryConfig"]

logger = logging.getLogger(__name__)

_OL = "spark.openlineage."
_HW = "spark.headwater."

#: Facets the OpenLineage listener leaves out unless asked for.
DEFAULT_DISABLED_FACETS: frozenset[str] = frozenset({"spark_unknown", "spark.logicalPlan", "debug"})

_DEFAULT_CAPTURED_PROPERTIES: tuple[str, ...] = ("spark.master", "spark.app.name")


@dataclass(frozen=True)
class DeliveryConfig:
    """headwater's own delivery settings (``spark.headwater.*`` / ``HEADWATER_*``)."""

    queue_size: int = 10_000
    batch_size: int = 100
    flush_timeout: float = 5.0
    retries: int = 3
    retry_backoff: float = 0.5
    breaker_failure_threshold: int = 5
    breaker_reset_seconds: float = 30.0
    spool_enabled: bool = True
    spool_dir: str = field(default_factory=lambda: os.path.join("~", ".headwater", "spool"))


_DELIVERY_KEYS: tuple[tuple[str, str, str, float], ...] = (
    # (field, spark key suffix, env var, minimum)
    ("queue_size", "queueSize", "HEADWATER_QUEUE_SIZE", 1),
    ("batch_size", "batchSize", "HEADWATER_BATCH_SIZE", 1),
    ("flush_timeout", "flushTimeoutSeconds", "HEADWATER_FLUSH_TIMEOUT_SECONDS", 0),
    ("retries", "retries", "HEADWATER_RETRIES", 0),
    ("retry_backoff", "retryBackoffSeconds", "HEADWATER_RETRY_BACKOFF_SECONDS", 0),
    (
        "breaker_failure_threshold",
        "circuitBreaker.failureThreshold",
        "HEADWATER_CIRCUIT_BREAKER_FAILURE_THRESHOLD",
        1,
    ),
    (
        "breaker_reset_seconds",
        "circuitBreaker.resetSeconds",
        "HEADWATER_CIRCUIT_BREAKER_RESET_SECONDS",
        0,
    ),
)


def _delivery(spark_conf: Mapping[str, str], env: Mapping[str, str]) -> DeliveryConfig:
    defaults = DeliveryConfig()
    values: dict[str, Any] = {}
    for name, suffix, variable, minimum in _DELIVERY_KEYS:
        default = getattr(defaults, name)
        raw = spark_conf.get(_HW + suffix) or env.get(variable)
        number = parse_number(raw, default, _HW + suffix, minimum=minimum)
        values[name] = int(number) if isinstance(default, int) else number
    values["spool_enabled"] = parse_bool(
        spark_conf.get(_HW + "spool.enabled") or env.get("HEADWATER_SPOOL_ENABLED"),
        True,
        _HW + "spool.enabled",
    )
    spool_dir = spark_conf.get(_HW + "spool.dir") or env.get("HEADWATER_SPOOL_DIR")
    if spool_dir:
        values["spool_dir"] = spool_dir
    return DeliveryConfig(**values)


@dataclass(frozen=True)
class AgentConfig:
    """Everything the agent needs to know, resolved once per SparkSession."""

    disabled: bool = False
    namespace: str = "default"
    app_name: str | None = None
    application_run_id: str | None = None
    parent_job_namespace: str | None = None
    parent_job_name: str | None = None
    parent_run_id: str | None = None
    root_parent_job_namespace: str | None = None
    root_parent_job_name: str | None = None
    root_parent_run_id: str | None = None
    disabled_facets: frozenset[str] = DEFAULT_DISABLED_FACETS
    remove_path_pattern: re.Pattern[str] | None = None
    namespace_resolvers: tuple[NamespaceResolver, ...] = ()
    column_lineage_enabled: bool = True
    dataset_lineage_enabled: bool = True
    column_lineage_schema_size_limit: int = 1_000
    job_name_append_dataset_name: bool = True
    job_name_replace_dot_with_underscore: bool = False
    captured_properties: tuple[str, ...] = _DEFAULT_CAPTURED_PROPERTIES
    allowed_spark_nodes: tuple[str, ...] = ()
    denied_spark_nodes: tuple[str, ...] = ()
    capture_read_only_actions: bool = False
    job_tags: tuple[Tag, ...] = ()
    run_tags: tuple[Tag, ...] = ()
    transport: Mapping[str, Any] = field(default_factory=lambda: {"type": "console"})
    delivery: DeliveryConfig = field(default_factory=DeliveryConfig)
    #: Configured ``url`` / ``version`` / ``path`` of the job's code (``sourceCodeLocation``).
    source_code: Mapping[str, str] = field(default_factory=dict)
    #: Seconds between two RUNNING events of one Structured Streaming query run.
    streaming_progress_interval: float = 60.0
    #: Driver-local stream sinks (``memory``, ``console``) left out of a query's outputs.
    streaming_ignored_sinks: tuple[str, ...] = ()
    #: Base URL of a schema registry's Confluent-compatible API, asked for topics' value schemas.
    schema_registry_url: str | None = None
    #: Seconds one schema registry request may take (it runs on the listener thread).
    schema_registry_timeout: float = 2.0

    def facet_enabled(self, name: str) -> bool:
        """Whether facet ``name`` (as the listener names it) should be emitted."""
        return name not in self.disabled_facets

    @classmethod
    def from_sources(cls, spark_conf: Mapping[str, str], env: Mapping[str, str]) -> AgentConfig:
        """Resolve the configuration from a SparkConf mapping and an environment.

        ``spark_conf`` is typically ``dict(spark.sparkContext.getConf().getAll())`` and
        ``env`` is ``os.environ``. Never raises on bad values: they are logged and ignored.
        """

        # The listener's openlineage.yml sits under SparkConf and, as in the listener,
        # above the OPENLINEAGE__* variables: it is read as if it were SparkConf keys.
        from_file = read_openlineage_yml(env)
        if from_file:
            spark_conf = {**from_file, **spark_conf}

        def conf(suffix: str) -> str | None:
            value = spark_conf.get(_OL + suffix)
            return value if value is not None and value.strip() != "" else None

        disabled = parse_bool(env.get("OPENLINEAGE_DISABLED"), False, "OPENLINEAGE_DISABLED")
        disabled = parse_bool(conf("disabled"), False, _OL + "disabled") or disabled

        parent_ns, parent_job, parent_run = split_parent_id(
            env.get("OPENLINEAGE_PARENT_ID"), "OPENLINEAGE_PARENT_ID"
        )
        # The variables the EMR and Airflow guides have users export, one per part.
        parent_ns = env.get("OPENLINEAGE_PARENT_JOB_NAMESPACE") or parent_ns
        parent_job = env.get("OPENLINEAGE_PARENT_JOB_NAME") or parent_job
        parent_run = env.get("OPENLINEAGE_PARENT_RUN_ID") or parent_run
        root_ns, root_job, root_run = split_parent_id(
            env.get("OPENLINEAGE_ROOT_PARENT_ID"), "OPENLINEAGE_ROOT_PARENT_ID"
        )

        # As in the listener: the defaults, plus the facets.disabled list, then each
        # facets.<name>.disabled=true/false (which can also re-enable a default one).
        disabled_facets = set(DEFAULT_DISABLED_FACETS)
        disabled_facets.update(parse_list(conf("facets.disabled") or ""))
        if conf("debugFacet") is not None:
            if conf("debugFacet") == "enabled":
                disabled_facets.discard("debug")
            else:
                disabled_facets.add("debug")
        facet_prefix = _OL + "facets."
        for key, value in spark_conf.items():
            if key.startswith(facet_prefix) and key.endswith(".disabled"):
                name = key[len(facet_prefix) : -len(".disabled")]
                if not name:
                    continue
                if parse_bool(value, False, key):
                    disabled_facets.add(name)
                else:
                    disabled_facets.discard(name)

        remove_path_pattern: re.Pattern[str] | None = None
        pattern = conf("dataset.removePath.pattern")
        if pattern is not None:
            try:
                remove_path_pattern = re.compile(java_regex(pattern))
            except re.error as exc:
                logger.warning(
                    "dataset.removePath.pattern %r is not a regex (%s); ignored", pattern, exc
                )

        schema_limit = parse_number(
            conf("columnLineage.schemaSizeLimit"),
            1_000,
            _OL + "columnLineage.schemaSizeLimit",
            minimum=0,
        )
        captured = conf("capturedProperties")
        source_code = {
            part: value
            for part in ("url", "version", "path")
            if (
                value := spark_conf.get(f"{_HW}sourceCode.{part}")
                or env.get(f"HEADWATER_SOURCE_CODE_{part.upper()}")
            )
        }

        return cls(
            disabled=disabled,
            namespace=conf("namespace") or env.get("OPENLINEAGE_NAMESPACE") or "default",
            app_name=conf("appName"),
            application_run_id=conf("applicationRunId"),
            parent_job_namespace=conf("parentJobNamespace") or parent_ns,
            parent_job_name=conf("parentJobName") or parent_job,
            parent_run_id=conf("parentRunId") or parent_run,
            root_parent_job_namespace=conf("rootParentJobNamespace") or root_ns,
            root_parent_job_name=conf("rootParentJobName") or root_job,
            root_parent_run_id=conf("rootParentRunId") or root_run,
            disabled_facets=frozenset(disabled_facets),
            remove_path_pattern=remove_path_pattern,
            namespace_resolvers=parse_namespace_resolvers(spark_conf),
            column_lineage_enabled="columnLineage" not in disabled_facets,
            dataset_lineage_enabled=parse_bool(
                conf("columnLineage.datasetLineageEnabled"),
                True,
                _OL + "columnLineage.datasetLineageEnabled",
            ),
            column_lineage_schema_size_limit=int(schema_limit),
            job_name_append_dataset_name=parse_bool(
                conf("jobName.appendDatasetName"), True, _OL + "jobName.appendDatasetName"
            ),
            job_name_replace_dot_with_underscore=parse_bool(
                conf("jobName.replaceDotWithUnderscore"),
                False,
                _OL + "jobName.replaceDotWithUnderscore",
            ),
            captured_properties=parse_list(captured)
            if captured is not None
            else _DEFAULT_CAPTURED_PROPERTIES,
            allowed_spark_nodes=parse_list(conf("filter.allowedSparkNodes") or ""),
            denied_spark_nodes=parse_list(conf("filter.deniedSparkNodes") or ""),
            capture_read_only_actions=parse_bool(
                spark_conf.get(_HW + "captureReadOnlyActions")
                or env.get("HEADWATER_CAPTURE_READ_ONLY_ACTIONS"),
                False,
                _HW + "captureReadOnlyActions",
            ),
            job_tags=parse_tags(conf("job.tags")),
            run_tags=parse_tags(conf("run.tags")),
            transport=resolve_transport(spark_conf, env),
            delivery=_delivery(spark_conf, env),
            source_code=source_code,
            streaming_progress_interval=parse_number(
                spark_conf.get(_HW + "streaming.progressInterval")
                or env.get("HEADWATER_STREAMING_PROGRESS_INTERVAL"),
                60.0,
                _HW + "streaming.progressInterval",
                # A shorter interval would come close to one RUNNING per micro-batch.
                minimum=1,
            ),
            streaming_ignored_sinks=tuple(
                s.lower() for s in parse_list(conf("streaming.ignoredSinks") or "")
            ),
            schema_registry_url=(spark_conf.get(_HW + "kafka.schemaRegistry.url") or "").strip()
            or None,
            schema_registry_timeout=parse_number(
                spark_conf.get(_HW + "kafka.schemaRegistry.timeoutSeconds"),
                2.0,
                _HW + "kafka.schemaRegistry.timeoutSeconds",
                minimum=0.1,
            ),
        )
