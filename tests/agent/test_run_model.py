"""Run model: application run, child runs, parent/root facets, job names (no JVM)."""

from __future__ import annotations

import uuid

from headwater.agent.config import AgentConfig
from headwater.agent.run_model import RunModel, iso_time, uuid7
from tests.agent.spec import validate_event

PARENT = "bd9c2467-3ed7-4fdc-85c2-41ebf5c73b40"
ROOT = "11111111-2222-4333-8444-555555555555"


def _model(conf: dict[str, str] | None = None, env: dict[str, str] | None = None) -> RunModel:
    config = AgentConfig.from_sources(conf or {}, env or {})
    return RunModel(config, "Generic Integration Test", "4.0.1", "0.1.0")


def test_uuid7_is_time_ordered_version_7() -> None:
    first, second = uuid7(1_000), uuid7(2_000)
    assert uuid.UUID(first).version == 7
    assert first < second


def test_iso_time_is_utc_with_milliseconds() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"


def test_application_run_has_configured_parent_and_validates() -> None:
    model = _model(
        {
            "spark.openlineage.namespace": "generic-namespace",
            "spark.openlineage.parentJobNamespace": "parent-namespace",
            "spark.openlineage.parentJobName": "parent-job",
            "spark.openlineage.parentRunId": PARENT,
        }
    )
    event = model.application_event("START")
    validate_event(event)
    assert event["job"] == {
        "namespace": "generic-namespace",
        "name": "generic_integration_test",
        "facets": event["job"]["facets"],
    }
    assert event["job"]["facets"]["jobType"]["jobType"] == "APPLICATION"
    parent = event["run"]["facets"]["parent"]
    assert parent["job"] == {"namespace": "parent-namespace", "name": "parent-job"}
    assert parent["run"] == {"runId": PARENT}
    # Without a configured root parent, the parent is the root.
    assert parent["root"]["run"] == {"runId": PARENT}


def test_action_runs_point_to_the_application_and_the_root() -> None:
    model = _model(
        {"spark.openlineage.namespace": "ns"},
        {"OPENLINEAGE_PARENT_ID": f"p-ns/p-job/{PARENT}", "OPENLINEAGE_ROOT_PARENT_ID": f"r-ns/r-job/{ROOT}"},
    )
    facets = model.action_run_facets()
    assert facets["parent"]["job"] == {"namespace": "ns", "name": "generic_integration_test"}
    assert facets["parent"]["run"] == {"runId": model.app_run_id}
    assert facets["parent"]["root"] == {"job": {"namespace": "r-ns", "name": "r-job"}, "run": {"runId": ROOT}}
    assert model.application_run_facets()["parent"]["root"]["run"]["runId"] == ROOT


def test_action_run_without_orchestrator_has_application_as_root() -> None:
    model = _model()
    root = model.action_run_facets()["parent"]["root"]
    assert root["run"]["runId"] == model.app_run_id
    assert "parent" not in model.application_run_facets()


def test_job_names() -> None:
    model = _model({"spark.openlineage.appName": "Overwrite Name"})
    assert model.action_job_name("Execute InsertIntoHiveTable", "warehouse_test") == (
        "overwrite_name.execute_insert_into_hive_table.warehouse_test"
    )
    assert model.action_job_name("Execute AlterTableAddColumnsCommand", None) == (
        "overwrite_name.execute_alter_table_add_columns_command"
    )
    no_suffix = _model({"spark.openlineage.jobName.appendDatasetName": "false"})
    assert no_suffix.action_job_name("Execute X", "a.b") == "generic_integration_test.execute_x"
    assert model.action_job_name("Execute X", "db.t") == "overwrite_name.execute_x.db_t"


def test_application_fail_carries_error_message() -> None:
    event = _model().application_event("FAIL", ("boom", "trace"))
    validate_event(event)
    assert event["run"]["facets"]["errorMessage"]["message"] == "boom"


def test_disabled_facets_are_left_out() -> None:
    model = _model({"spark.openlineage.facets.processing_engine.disabled": "true"})
    assert "processing_engine" not in model.action_run_facets()


def test_job_and_run_tags_when_configured() -> None:
    import dataclasses

    config = dataclasses.replace(AgentConfig.from_sources({}, {}))
    object.__setattr__(config, "job_tags", (("spark", "true", "CONFIG"), ("key", "value", "CONFIG")))
    object.__setattr__(config, "run_tags", (("set", "up", "SERVICE"),))
    model = RunModel(config, "app", "4.0.1", "0.1.0")
    event = model.application_event("START")
    validate_event(event)
    assert event["job"]["facets"]["tags"]["tags"][1] == {"key": "key", "value": "value", "source": "CONFIG"}
    assert event["run"]["facets"]["tags"]["tags"] == [{"key": "set", "value": "up", "source": "SERVICE"}]


def test_spark_properties_facet_carries_exactly_the_captured_properties_that_are_set() -> None:
    conf = {"spark.openlineage.capturedProperties": "[spark.master;spark.executor.memory;spark.missing]"}
    session = {"spark.master": "local[2]", "spark.app.name": "app", "spark.executor.memory": "2g"}
    model = RunModel(AgentConfig.from_sources(conf, {}), "app", "4.0.1", "0.1.0", session)
    for event in (model.application_event("START"), _action_run(model)):
        validate_event(event)
        facet = event["run"]["facets"]["spark_properties"]
        assert facet["properties"] == {"spark.master": "local[2]", "spark.executor.memory": "2g"}

    default = RunModel(AgentConfig.from_sources({}, {}), "app", "4.0.1", "0.1.0", session)
    facet = default.application_event("START")["run"]["facets"]["spark_properties"]
    assert facet["properties"] == {"spark.master": "local[2]", "spark.app.name": "app"}

    off = {**conf, "spark.openlineage.facets.spark_properties.disabled": "true"}
    disabled = RunModel(AgentConfig.from_sources(off, {}), "app", "4.0.1", "0.1.0", session)
    assert "spark_properties" not in disabled.application_event("START")["run"]["facets"]
    assert "spark_properties" not in disabled.action_run_facets()


def _action_run(model: RunModel) -> dict:
    event = model.application_event("START")
    event["run"]["facets"] = model.action_run_facets()
    return event


def test_parent_from_the_variables_the_emr_and_airflow_guides_export() -> None:
    env = {
        "OPENLINEAGE_PARENT_JOB_NAMESPACE": "airflow",
        "OPENLINEAGE_PARENT_JOB_NAME": "dag.task",
        "OPENLINEAGE_PARENT_RUN_ID": PARENT,
        # The one-variable form loses to the per-part variables.
        "OPENLINEAGE_PARENT_ID": f"other/job/{ROOT}",
    }
    event = _model(env=env).application_event("START")
    validate_event(event)
    parent = event["run"]["facets"]["parent"]
    assert (parent["job"], parent["run"]) == ({"namespace": "airflow", "name": "dag.task"}, {"runId": PARENT})

    # Configuration keys win over the environment, as for every other setting.
    conf = {"spark.openlineage.parentJobName": "explicit", "spark.openlineage.parentRunId": ROOT}
    parent = _model(conf, env).application_event("START")["run"]["facets"]["parent"]
    assert (parent["job"], parent["run"]) == ({"namespace": "airflow", "name": "explicit"}, {"runId": ROOT})
