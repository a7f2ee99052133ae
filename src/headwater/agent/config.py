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
with a key the listener knows. Every key read here is listed in :data:`SPARK_CONF_KEYS`
or :data:`ENV_VARS` and documented in ``docs/agent-configuration.md``.

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

from headwater.agent.namespace_resolvers import RESOLVER_TYPES, NamespaceResolver
from headwater.transport.resolve import resolve_transport

__all__ = [
    "DEFAULT_DISABLED_FACETS",
    "ENV_VARS",
    "SPARK_CONF_KEYS",
    "AgentConfig",
    "DeliveryConfig",
    "Tag",
    "parse_list",
    "parse_namespace_resolvers",
    "parse_tags",
]

logger = logging.getLogger(__name__)

_OL = "spark.openlineage."
_HW = "spark.headwater."

#: Facets the OpenLineage listener leaves out unless asked for.
DEFAULT_DISABLED_FACETS: frozenset[str] = frozenset({"spark_unknown", "spark.logicalPlan", "debug"})

#: Every Spark configuration key the parser reads; ``<x>`` stands for any segment(s).
SPARK_CONF_KEYS: tuple[str, ...] = (
    "spark.openlineage.disabled",
    "spark.openlineage.namespace",
    "spark.openlineage.appName",
    "spark.openlineage.applicationRunId",
    "spark.openlineage.parentJobNamespace",
    "spark.openlineage.parentJobName",
    "spark.openlineage.parentRunId",
    "spark.openlineage.rootParentJobNamespace",
    "spark.openlineage.rootParentJobName",
    "spark.openlineage.rootParentRunId",
    "spark.openlineage.transport.<key>",
    "spark.openlineage.transport.type",
    "spark.openlineage.transport.url",
    "spark.openlineage.transport.endpoint",
    "spark.openlineage.transport.apiKey",
    "spark.openlineage.transport.auth.type",
    "spark.openlineage.transport.auth.apiKey",
    "spark.openlineage.transport.timeoutInMillis",
    "spark.openlineage.transport.compression",
    "spark.openlineage.transport.location",
    "spark.openlineage.transport.topicName",
    "spark.openlineage.transport.properties.<name>",
    "spark.openlineage.transport.messageKey",
    "spark.openlineage.transport.headers.<name>",
    "spark.openlineage.transport.urlParams.<name>",
    "spark.openlineage.facets.disabled",
    "spark.openlineage.facets.<name>.disabled",
    "spark.openlineage.debugFacet",
    "spark.openlineage.dataset.removePath.pattern",
    "spark.openlineage.dataset.namespaceResolvers.<name>.type",
    "spark.openlineage.dataset.namespaceResolvers.<name>.hosts",
    "spark.openlineage.dataset.namespaceResolvers.<name>.regex",
    "spark.openlineage.dataset.namespaceResolvers.<name>.matchingGroup",
    "spark.openlineage.dataset.namespaceResolvers.<name>.schema",
    "spark.openlineage.columnLineage.datasetLineageEnabled",
    "spark.openlineage.columnLineage.schemaSizeLimit",
    "spark.openlineage.jobName.appendDatasetName",
    "spark.openlineage.jobName.replaceDotWithUnderscore",
    "spark.openlineage.capturedProperties",
    "spark.openlineage.job.tags",
    "spark.openlineage.run.tags",
    "spark.openlineage.filter.allowedSparkNodes",
    "spark.openlineage.filter.deniedSparkNodes",
    "spark.openlineage.streaming.ignoredSinks",
    "spark.headwater.captureReadOnlyActions",
    "spark.headwater.queueSize",
    "spark.headwater.batchSize",
    "spark.headwater.flushTimeoutSeconds",
    "spark.headwater.retries",
    "spark.headwater.retryBackoffSeconds",
    "spark.headwater.circuitBreaker.failureThreshold",
    "spark.headwater.circuitBreaker.resetSeconds",
    "spark.headwater.spool.enabled",
    "spark.headwater.spool.dir",
    "spark.headwater.sourceCode.url",
    "spark.headwater.sourceCode.version",
    "spark.headwater.sourceCode.path",
    "spark.headwater.streaming.progressInterval",
    "spark.headwater.kafka.schemaRegistry.url",
    "spark.headwater.kafka.schemaRegistry.timeoutSeconds",
)

#: Every environment variable the parser reads.
ENV_VARS: tuple[str, ...] = (
    "OPENLINEAGE_DISABLED",
    "OPENLINEAGE_URL",
    "OPENLINEAGE_ENDPOINT",
    "OPENLINEAGE_API_KEY",
    "OPENLINEAGE_NAMESPACE",
    "OPENLINEAGE_PARENT_ID",
    "OPENLINEAGE_PARENT_JOB_NAMESPACE",
    "OPENLINEAGE_PARENT_JOB_NAME",
    "OPENLINEAGE_PARENT_RUN_ID",
    "OPENLINEAGE_ROOT_PARENT_ID",
    "OPENLINEAGE__<PATH>",
    "OPENLINEAGE_CONFIG",
    "HEADWATER_QUEUE_SIZE",
    "HEADWATER_BATCH_SIZE",
    "HEADWATER_FLUSH_TIMEOUT_SECONDS",
    "HEADWATER_RETRIES",
    "HEADWATER_RETRY_BACKOFF_SECONDS",
    "HEADWATER_CIRCUIT_BREAKER_FAILURE_THRESHOLD",
    "HEADWATER_CIRCUIT_BREAKER_RESET_SECONDS",
    "HEADWATER_SPOOL_ENABLED",
    "HEADWATER_SPOOL_DIR",
    "HEADWATER_CAPTURE_READ_ONLY_ACTIONS",
    "HEADWATER_SOURCE_CODE_URL",
    "HEADWATER_SOURCE_CODE_VERSION",
    "HEADWATER_SOURCE_CODE_PATH",
    "HEADWATER_STREAMING_PROGRESS_INTERVAL",
)

_DEFAULT_CAPTURED_PROPERTIES: tuple[str, ...] = ("spark.master", "spark.app.name")


def parse_list(value: str) -> tuple[str, ...]:
    """Parse the listener's list syntax: ``[a;b]`` (brackets optional), blanks dropped."""
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return tuple(item.strip() for item in text.split(";") if item.strip())


#: A tag as the ``tags`` facets carry it: (key, value, source).
Tag = tuple[str, str, str]


def parse_tags(value: str | None) -> tuple[Tag, ...]:
    """Parse the listener's tag syntax: ``key[:value[:source]]`` items separated by ``;``.

    A bare ``key`` means the value ``true``; the source defaults to ``CONFIG``.
    ``spark;team:sales;tier:gold:SERVICE`` gives three tags.
    """
    tags: list[Tag] = []
    for item in parse_list(value or ""):
        key, _, rest = item.partition(":")
        tag_value, _, source = rest.partition(":")
        if not key.strip():
            logger.warning("tag %r has no key; ignored", item)
            continue
        tags.append((key.strip(), tag_value.strip() or "true", source.strip() or "CONFIG"))
    return tuple(tags)


def _parse_bool(value: str | None, default: bool, key: str) -> bool:
    # Java's Boolean.parseBoolean: only "true" (any case) is true. We also warn on
    # values that are neither, so a typo such as "ture" does not pass silently.
    if value is None or value.strip() == "":
        return default
    lowered = value.strip().lower()
    if lowered == "true":
        return True
    if lowered != "false":
        logger.warning("%s=%r is not true/false; treating it as false", key, value)
    return False


def _parse_number(value: str | None, default: float, key: str, *, minimum: float) -> float:
    if value is None or value.strip() == "":
        return default
    try:
        number = float(value)
    except ValueError:
        logger.warning("%s=%r is not a number; using %s", key, value, default)
        return default
    if number < minimum:
        logger.warning("%s=%r is below %s; using %s", key, value, minimum, default)
        return default
    return number


def _split_parent_id(value: str | None, variable: str) -> tuple[str | None, str | None, str | None]:
    """Split ``{namespace}/{job_name}/{run_id}``; the job name may itself hold slashes."""
    if not value:
        return None, None, None
    namespace, _, rest = value.partition("/")
    job_name, _, run_id = rest.rpartition("/")
    if not namespace or not job_name or not run_id:
        logger.warning("%s=%r is not {namespace}/{job_name}/{run_id}; ignored", variable, value)
        return None, None, None
    return namespace, job_name, run_id


def _flatten(tree: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """A YAML tree as ``spark.openlineage.*`` keys: lists in ``[a;b]`` syntax, booleans lower-case."""
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = prefix + str(key)
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        elif isinstance(value, list):
            flat[name] = "[" + ";".join(str(item) for item in value) + "]"
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        elif value is not None:
            flat[name] = str(value)
    return flat


def _file_conf(env: Mapping[str, str]) -> dict[str, str]:
    """The listener's ``openlineage.yml`` as ``spark.openlineage.*`` keys, if there is one.

    Looked for where the listener looks: ``OPENLINEAGE_CONFIG``, then ``./openlineage.yml``,
    then ``~/.openlineage/openlineage.yml``.
    """
    named = env.get("OPENLINEAGE_CONFIG")
    candidates = [named] if named else [
        "openlineage.yml", os.path.join(os.path.expanduser("~"), ".openlineage", "openlineage.yml")
    ]
    path = next((c for c in candidates if os.path.isfile(c)), None)
    if path is None:
        if named:
            logger.warning("OPENLINEAGE_CONFIG=%r is not a file; ignored", named)
        return {}
    try:
        import yaml  # optional: only needed by users who keep an openlineage.yml
    except ImportError:
        logger.warning("%s found but PyYAML is not installed; ignored (pip install pyyaml)", path)
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            tree = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        logger.warning("cannot read %s (%s); ignored", path, exc)
        return {}
    if not isinstance(tree, Mapping):
        logger.warning("%s is not a YAML mapping; ignored", path)
        return {}
    return _flatten(tree, _OL)


def _java_regex(pattern: str) -> str:
    """Accept Java's named groups ``(?<remove>…)`` (the jar's syntax) as Python's ``(?P<remove>…)``."""
    return re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", pattern)


_RESOLVERS = _OL + "dataset.namespaceResolvers."


def parse_namespace_resolvers(spark_conf: Mapping[str, str]) -> tuple[NamespaceResolver, ...]:
    """``spark.openlineage.dataset.namespaceResolvers.<name>.*`` keys, by name (see
    :mod:`headwater.agent.namespace_resolvers`); a resolver missing what its type
    needs is logged and left out."""
    by_name: dict[str, dict[str, str]] = {}
    for key, value in spark_conf.items():
        if key.startswith(_RESOLVERS) and "." in key[len(_RESOLVERS) :]:
            name, _, prop = key[len(_RESOLVERS) :].rpartition(".")
            if name:
                by_name.setdefault(name, {})[prop] = value.strip()
    resolvers = []
    for name in sorted(by_name):
        props = by_name[name]
        type_ = props.get("type", "")
        schema = props.get("schema") or None
        if type_ not in RESOLVER_TYPES:
            logger.warning("namespace resolver %r has type %r (not one of %s); ignored",
                           name, type_, ", ".join(sorted(RESOLVER_TYPES)))
            continue
        if type_ == "hostList":
            hosts = parse_list(props.get("hosts", ""))
            if not hosts:
                logger.warning("namespace resolver %r lists no hosts; ignored", name)
                continue
            resolvers.append(NamespaceResolver(name, type_, hosts=hosts, schema=schema))
            continue
        try:
            regex = re.compile(_java_regex(props.get("regex", "")))
        except re.error as exc:
            logger.warning("namespace resolver %r: regex is invalid (%s); ignored", name, exc)
            continue
        if not regex.pattern:
            logger.warning("namespace resolver %r has no regex; ignored", name)
            continue
        resolvers.append(NamespaceResolver(
            name, type_, regex=regex, matching_group=props.get("matchingGroup") or None, schema=schema))
    return tuple(resolvers)


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
        number = _parse_number(raw, default, _HW + suffix, minimum=minimum)
        values[name] = int(number) if isinstance(default, int) else number
    values["spool_enabled"] = _parse_bool(
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
        from_file = _file_conf(env)
        if from_file:
            spark_conf = {**from_file, **spark_conf}

        def conf(suffix: str) -> str | None:
            value = spark_conf.get(_OL + suffix)
            return value if value is not None and value.strip() != "" else None

        disabled = _parse_bool(env.get("OPENLINEAGE_DISABLED"), False, "OPENLINEAGE_DISABLED")
        disabled = _parse_bool(conf("disabled"), False, _OL + "disabled") or disabled

        parent_ns, parent_job, parent_run = _split_parent_id(
            env.get("OPENLINEAGE_PARENT_ID"), "OPENLINEAGE_PARENT_ID"
        )
        # The variables the EMR and Airflow guides have users export, one per part.
        parent_ns = env.get("OPENLINEAGE_PARENT_JOB_NAMESPACE") or parent_ns
        parent_job = env.get("OPENLINEAGE_PARENT_JOB_NAME") or parent_job
        parent_run = env.get("OPENLINEAGE_PARENT_RUN_ID") or parent_run
        root_ns, root_job, root_run = _split_parent_id(
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
                if _parse_bool(value, False, key):
                    disabled_facets.add(name)
                else:
                    disabled_facets.discard(name)

        remove_path_pattern: re.Pattern[str] | None = None
        pattern = conf("dataset.removePath.pattern")
        if pattern is not None:
            try:
                remove_path_pattern = re.compile(_java_regex(pattern))
            except re.error as exc:
                logger.warning("dataset.removePath.pattern %r is not a regex (%s); ignored", pattern, exc)

        schema_limit = _parse_number(
            conf("columnLineage.schemaSizeLimit"), 1_000, _OL + "columnLineage.schemaSizeLimit", minimum=0
        )
        captured = conf("capturedProperties")
        source_code = {
            part: value
            for part in ("url", "version", "path")
            if (value := spark_conf.get(f"{_HW}sourceCode.{part}") or env.get(f"HEADWATER_SOURCE_CODE_{part.upper()}"))
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
            dataset_lineage_enabled=_parse_bool(
                conf("columnLineage.datasetLineageEnabled"),
                True,
                _OL + "columnLineage.datasetLineageEnabled",
            ),
            column_lineage_schema_size_limit=int(schema_limit),
            job_name_append_dataset_name=_parse_bool(
                conf("jobName.appendDatasetName"), True, _OL + "jobName.appendDatasetName"
            ),
            job_name_replace_dot_with_underscore=_parse_bool(
                conf("jobName.replaceDotWithUnderscore"),
                False,
                _OL + "jobName.replaceDotWithUnderscore",
            ),
            captured_properties=parse_list(captured)
            if captured is not None
            else _DEFAULT_CAPTURED_PROPERTIES,
            allowed_spark_nodes=parse_list(conf("filter.allowedSparkNodes") or ""),
            denied_spark_nodes=parse_list(conf("filter.deniedSparkNodes") or ""),
            capture_read_only_actions=_parse_bool(
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
            streaming_progress_interval=_parse_number(
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
            schema_registry_timeout=_parse_number(
                spark_conf.get(_HW + "kafka.schemaRegistry.timeoutSeconds"),
                2.0,
                _HW + "kafka.schemaRegistry.timeoutSeconds",
                minimum=0.1,
            ),
        )
