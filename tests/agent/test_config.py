"""AgentConfig.from_sources: the listener's keys, precedence and defaults; docs cover every key."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from headwater.agent.config import DEFAULT_DISABLED_FACETS, AgentConfig, DeliveryConfig
from headwater.agent.config_keys import ENV_VARS, SPARK_CONF_KEYS
from headwater.agent.config_syntax import parse_list

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agent-configuration.md"
OL = "spark.openlineage."


def cfg(conf: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None) -> AgentConfig:
    return AgentConfig.from_sources(conf or {}, env or {})


def test_defaults_are_the_listeners() -> None:
    config = cfg()
    assert config.disabled is False
    assert config.namespace == "default"
    assert config.transport == {"type": "console"}
    assert config.disabled_facets == {"spark_unknown", "spark.logicalPlan", "debug"}
    assert config.job_name_append_dataset_name is True
    assert config.job_name_replace_dot_with_underscore is False
    assert config.dataset_lineage_enabled is True
    assert config.column_lineage_enabled is True
    assert config.column_lineage_schema_size_limit == 1000
    assert config.captured_properties == ("spark.master", "spark.app.name")
    assert config.capture_read_only_actions is False
    assert config.parent_run_id is None and config.root_parent_run_id is None
    assert config.delivery == DeliveryConfig()


@pytest.mark.parametrize(
    ("conf", "env", "disabled"),
    [
        ({}, {"OPENLINEAGE_DISABLED": "true"}, True),
        ({}, {"OPENLINEAGE_DISABLED": "TRUE"}, True),
        ({}, {"OPENLINEAGE_DISABLED": "false"}, False),
        ({OL + "disabled": "true"}, {}, True),
        ({OL + "disabled": "false"}, {"OPENLINEAGE_DISABLED": "true"}, True),
    ],
)
def test_disabled_by_env_or_conf(conf: dict[str, str], env: dict[str, str], disabled: bool) -> None:
    assert cfg(conf, env).disabled is disabled


def test_openlineage_url_means_http_with_endpoint_and_key() -> None:
    config = cfg(env={
        "OPENLINEAGE_URL": "http://lineage:5000",
        "OPENLINEAGE_ENDPOINT": "api/v1/lineage",
        "OPENLINEAGE_API_KEY": "k",
        "OPENLINEAGE_NAMESPACE": "team",
    })
    assert config.transport == {
        "type": "http",
        "url": "http://lineage:5000",
        "endpoint": "api/v1/lineage",
        "auth": {"type": "api_key", "apiKey": "k"},
    }
    assert config.namespace == "team"


def test_spark_conf_wins_over_env_and_merges_same_type() -> None:
    config = cfg(
        {
            OL + "namespace": "from-conf",
            OL + "transport.url": "http://conf:5000",
            OL + "transport.timeoutInMillis": "1000",
        },
        {"OPENLINEAGE_URL": "http://env:5000", "OPENLINEAGE_API_KEY": "k",
         "OPENLINEAGE_NAMESPACE": "from-env"},
    )
    assert config.namespace == "from-conf"
    assert config.transport == {
        "type": "http",
        "url": "http://conf:5000",
        "timeoutInMillis": "1000",
        "auth": {"type": "api_key", "apiKey": "k"},
    }


def test_spark_conf_transport_of_another_type_replaces_env_transport() -> None:
    config = cfg(
        {OL + "transport.type": "file", OL + "transport.location": "/tmp/e.jsonl"},
        {"OPENLINEAGE_URL": "http://env:5000", "OPENLINEAGE_API_KEY": "k"},
    )
    assert config.transport == {"type": "file", "location": "/tmp/e.jsonl"}


def test_nested_transport_keys_headers_and_flat_api_key() -> None:
    config = cfg({
        OL + "transport.type": "http",
        OL + "transport.url": "http://h",
        OL + "transport.apiKey": "old-style",
        OL + "transport.headers.X-Trace.Id": "1",
        OL + "transport.urlParams.code": "2",
        OL + "transport.compression": "gzip",
        OL + "transport.blank": "  ",
    })
    assert config.transport == {
        "type": "http",
        "url": "http://h",
        "auth": {"type": "api_key", "apiKey": "old-style"},
        "headers": {"X-Trace.Id": "1"},
        "urlParams": {"code": "2"},
        "compression": "gzip",
    }


def test_double_underscore_env_vars_configure_the_transport() -> None:
    config = cfg(env={
        "OPENLINEAGE__TRANSPORT__TYPE": "http",
        "OPENLINEAGE__TRANSPORT__URL": "http://env:5000",
        "OPENLINEAGE__TRANSPORT__AUTH__API_KEY": "k",
        "OPENLINEAGE__TRANSPORT__TIMEOUT_IN_MILLIS": "750",
    })
    assert config.transport == {
        "type": "http",
        "url": "http://env:5000",
        "auth": {"apiKey": "k"},
        "timeoutInMillis": "750",
    }


def test_parent_and_root_parent_from_env_and_conf() -> None:
    env = {
        "OPENLINEAGE_PARENT_ID": "airflow/dag.task/3f5e83fa-3480-44ff-99c5-ff943904e5e8",
        "OPENLINEAGE_ROOT_PARENT_ID": "airflow/dag/9c1b2f2e-0000-4000-8000-000000000001",
    }
    config = cfg(env=env)
    assert (config.parent_job_namespace, config.parent_job_name, config.parent_run_id) == (
        "airflow", "dag.task", "3f5e83fa-3480-44ff-99c5-ff943904e5e8")
    assert (config.root_parent_job_namespace, config.root_parent_job_name,
            config.root_parent_run_id) == ("airflow", "dag", "9c1b2f2e-0000-4000-8000-000000000001")
    overridden = cfg({OL + "parentJobName": "explicit", OL + "rootParentRunId": "r"}, env)
    assert overridden.parent_job_name == "explicit"
    assert overridden.parent_job_namespace == "airflow"
    assert overridden.root_parent_run_id == "r"


def test_job_names_with_slashes_and_malformed_parent_ids(caplog: pytest.LogCaptureFixture) -> None:
    config = cfg(env={"OPENLINEAGE_PARENT_ID": "ns/a/b/run-1"})
    assert (config.parent_job_namespace, config.parent_job_name, config.parent_run_id) == (
        "ns", "a/b", "run-1")
    with caplog.at_level(logging.WARNING):
        bad = cfg(env={"OPENLINEAGE_PARENT_ID": "just-a-name"})
    assert bad.parent_run_id is None
    assert "OPENLINEAGE_PARENT_ID" in caplog.text


def test_facet_switches() -> None:
    config = cfg({
        OL + "facets.disabled": "[spark_properties;environment-properties]",
        OL + "facets.spark.logicalPlan.disabled": "false",
        OL + "facets.columnLineage.disabled": "true",
        OL + "debugFacet": "enabled",
    })
    assert config.disabled_facets == {"spark_unknown", "spark_properties",
                                      "environment-properties", "columnLineage"}
    assert config.column_lineage_enabled is False
    assert config.facet_enabled("spark.logicalPlan") and config.facet_enabled("debug")
    assert not config.facet_enabled("spark_properties")


@pytest.mark.parametrize(
    ("text", "items"),
    [("[a;b]", ("a", "b")), ("a;b", ("a", "b")), ("[]", ()), ("[ a ; ;b ]", ("a", "b")), ("", ())],
)
def test_list_syntax(text: str, items: tuple[str, ...]) -> None:
    assert parse_list(text) == items


def test_remove_path_pattern_compiles_and_a_bad_one_is_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = cfg({OL + "dataset.removePath.pattern": r"(.*)(?<remove>/date=\d+)"})
    assert config.remove_path_pattern is not None
    match = config.remove_path_pattern.search("/data/t/date=20240101")
    assert match is not None and match.group("remove") == "/date=20240101"
    with caplog.at_level(logging.WARNING):
        assert cfg({OL + "dataset.removePath.pattern": "(unclosed"}).remove_path_pattern is None
    assert "removePath" in caplog.text


def test_job_name_column_lineage_filters_and_captured_properties() -> None:
    config = cfg({
        OL + "appName": "nightly",
        OL + "applicationRunId": "0191c2a4-0000-7000-8000-000000000000",
        OL + "jobName.appendDatasetName": "false",
        OL + "jobName.replaceDotWithUnderscore": "true",
        OL + "columnLineage.datasetLineageEnabled": "false",
        OL + "columnLineage.schemaSizeLimit": "50",
        OL + "capturedProperties": "[spark.master;spark.executor.memory]",
        OL + "filter.allowedSparkNodes": "[a.B]",
        OL + "filter.deniedSparkNodes": "[c.D;e.F]",
        "spark.headwater.captureReadOnlyActions": "true",
    })
    assert config.app_name == "nightly"
    assert config.application_run_id == "0191c2a4-0000-7000-8000-000000000000"
    assert config.job_name_append_dataset_name is False
    assert config.job_name_replace_dot_with_underscore is True
    assert config.dataset_lineage_enabled is False
    assert config.column_lineage_schema_size_limit == 50
    assert config.captured_properties == ("spark.master", "spark.executor.memory")
    assert config.allowed_spark_nodes == ("a.B",)
    assert config.denied_spark_nodes == ("c.D", "e.F")
    assert config.capture_read_only_actions is True


def test_delivery_settings_from_conf_then_env_and_bad_values_fall_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        delivery = cfg(
            {"spark.headwater.queueSize": "5", "spark.headwater.retries": "many",
             "spark.headwater.spool.dir": "/var/spool/hw"},
            {"HEADWATER_QUEUE_SIZE": "7", "HEADWATER_BATCH_SIZE": "9",
             "HEADWATER_FLUSH_TIMEOUT_SECONDS": "1.5", "HEADWATER_SPOOL_ENABLED": "false",
             "HEADWATER_CIRCUIT_BREAKER_FAILURE_THRESHOLD": "0"},
        ).delivery
    assert delivery.queue_size == 5
    assert delivery.batch_size == 9
    assert delivery.flush_timeout == 1.5
    assert delivery.retries == DeliveryConfig().retries
    assert delivery.breaker_failure_threshold == DeliveryConfig().breaker_failure_threshold
    assert delivery.spool_enabled is False
    assert delivery.spool_dir == "/var/spool/hw"
    assert "spark.headwater.retries" in caplog.text
    assert "circuitBreaker.failureThreshold" in caplog.text


def test_a_typo_in_a_boolean_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert cfg({OL + "jobName.appendDatasetName": "ture"}).job_name_append_dataset_name is False
    assert "appendDatasetName" in caplog.text


# -- every key the parser reads is registered, and every registered key is documented ----------


class _Recording(Mapping[str, str]):
    """A mapping that records which keys the parser asked for by name."""

    def __init__(self, data: Mapping[str, str]) -> None:
        self._data = dict(data)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return self._data[key]

    def get(self, key: str, default: object = None):  # type: ignore[no-untyped-def,override]
        self.asked.add(key)
        return self._data.get(key, default)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _pattern(registered: str) -> re.Pattern[str]:
    parts = re.split(r"<[^>]+>", registered)
    return re.compile(".+".join(re.escape(part) for part in parts) + r"\Z")


def _registered(key: str, registry: tuple[str, ...]) -> bool:
    return any(_pattern(item).match(key) for item in registry)


def test_parser_reads_only_registered_keys() -> None:
    conf = _Recording({key.replace("<key>", "x").replace("<name>", "y"): "1"
                       for key in SPARK_CONF_KEYS})
    env = _Recording({name.replace("<PATH>", "TRANSPORT__TYPE"): "1" for name in ENV_VARS})
    AgentConfig.from_sources(conf, env)
    AgentConfig.from_sources(_Recording({}), env)  # the env fallbacks are asked for too
    assert conf.asked, "the recording mapping saw no lookups"
    assert [key for key in conf.asked if not _registered(key, SPARK_CONF_KEYS)] == []
    assert [name for name in env.asked if not _registered(name, ENV_VARS)] == []


def test_every_registered_key_is_documented() -> None:
    documented = set(re.findall(r"`([A-Za-z_][\w.<>-]*)`", DOCS.read_text()))
    missing = [key for key in (*SPARK_CONF_KEYS, *ENV_VARS) if key not in documented]
    assert missing == []


def test_every_documented_key_is_real() -> None:
    documented = set(re.findall(r"`((?:spark\.openlineage|spark\.headwater)\.[\w.<>]+|"
                                r"(?:OPENLINEAGE|HEADWATER)_[\w<>]+)`", DOCS.read_text()))
    activation_only = {"HEADWATER_INSTRUMENT"}  # read by the instrument hook, not the parser
    unknown = [key for key in documented - activation_only
               if key not in SPARK_CONF_KEYS and key not in ENV_VARS]
    assert unknown == []


def test_default_disabled_facets_constant_matches_docs() -> None:
    text = DOCS.read_text()
    for facet in DEFAULT_DISABLED_FACETS:
        assert f"`{facet}`" in text


def test_openlineage_yml_sits_between_spark_conf_and_env(tmp_path: Path) -> None:
    path = tmp_path / "openlineage.yml"
    path.write_text(
        "transport:\n"
        "  type: http\n"
        "  url: http://from-file:5000\n"
        "  headers:\n"
        "    X-Team: data\n"
        "namespace: from-file\n"
        "facets:\n"
        "  disabled: [spark_properties]\n"
        "jobName:\n"
        "  appendDatasetName: false\n"
    )
    env = {"OPENLINEAGE_CONFIG": str(path), "OPENLINEAGE__TRANSPORT__URL": "http://from-env:5000",
           "OPENLINEAGE_NAMESPACE": "from-env"}
    config = cfg({OL + "namespace": "from-conf"}, env)
    assert config.namespace == "from-conf"
    assert config.transport == {"type": "http", "url": "http://from-file:5000",
                                "headers": {"X-Team": "data"}}
    assert "spark_properties" in config.disabled_facets
    assert config.job_name_append_dataset_name is False
    assert cfg({}, env).namespace == "from-file"


def test_a_missing_or_broken_openlineage_yml_is_reported_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("transport: [unclosed\n")
    with caplog.at_level(logging.WARNING):
        assert cfg(env={"OPENLINEAGE_CONFIG": str(broken)}).transport == {"type": "console"}
        assert cfg(env={"OPENLINEAGE_CONFIG": str(tmp_path / "none.yml")}).namespace == "default"
    assert "broken.yml" in caplog.text and "none.yml" in caplog.text


def test_job_and_run_tags_use_the_listener_syntax() -> None:
    config = cfg({OL + "job.tags": "spark;key:value", OL + "run.tags": "[run;set:up:SERVICE;:x]"})
    assert config.job_tags == (("spark", "true", "CONFIG"), ("key", "value", "CONFIG"))
    # an item without a key is dropped, the others kept in order
    assert config.run_tags == (("run", "true", "CONFIG"), ("set", "up", "SERVICE"))
    assert cfg().job_tags == () and cfg().run_tags == ()
