"""attach(): idempotent per session, disabled by configuration, never raising into the job."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest

from headwater.agent import attach
from headwater.agent.config import AgentConfig

pytestmark = pytest.mark.spark


class ExplodingEmitter:
    """An emitter whose every emit fails: the job must not notice."""

    def __init__(self) -> None:
        self.calls = 0

    def emit(self, event: Any) -> None:
        self.calls += 1
        raise RuntimeError("emitter down")

    def flush(self, timeout: float) -> bool:
        return True

    def close(self, timeout: float = 5.0) -> None:
        pass


def test_attach_is_idempotent_and_close_ends_it(spark, lineage) -> None:
    again = attach(spark)
    assert again is lineage.agent
    events = lineage.events()
    app = [e for e in events if e["job"]["name"] == lineage.agent.model.app_name]
    assert [e["eventType"] for e in app] == ["START"]
    # spark.openlineage.capturedProperties defaults to the master and the app name.
    properties = app[0]["run"]["facets"]["spark_properties"]["properties"]
    assert properties == {"spark.master": "local[2]", "spark.app.name": "headwater agent tests"}
    lineage.close()
    app = [e for e in lineage.events() if e["job"]["name"] == lineage.agent.model.app_name]
    assert [e["eventType"] for e in app] == ["START", "COMPLETE"]
    assert app[0]["run"]["runId"] == app[1]["run"]["runId"]


def test_child_runs_point_to_the_application_run(spark, lineage, tmp_path: Path) -> None:
    spark.createDataFrame([(1,)], ["k"]).write.parquet(str(tmp_path / "x"))
    events = lineage.action_events()
    parent = events[-1]["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == lineage.agent.model.app_run_id
    assert parent["job"]["name"] == "headwater_agent_tests"
    assert events[-1]["run"]["facets"]["processing_engine"]["version"] == spark.version


def test_disabled_configuration_gives_a_disabled_agent(spark) -> None:
    config = dataclasses.replace(AgentConfig.from_sources({}, {}), disabled=True)
    agent = attach(spark, config=config)
    assert not agent.enabled
    agent.close()


def test_attach_to_something_that_is_not_a_session_does_not_raise() -> None:
    agent = attach(object())
    assert not agent.enabled
    agent.close()


def test_agent_failures_never_break_the_job_and_are_logged_once(
    spark, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    emitter = ExplodingEmitter()
    config = AgentConfig.from_sources({}, {})
    agent = attach(spark, config=config, emitter=emitter)
    assert agent.enabled
    try:
        with caplog.at_level(logging.WARNING, logger="headwater.agent"):
            for name in ("a", "b"):
                spark.createDataFrame([(1,)], ["k"]).write.parquet(str(tmp_path / name))
            agent.flush(30.0)
    finally:
        agent.close(5.0)
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()
    # app START + 2 actions reached the emitter; each failure kind is logged once.
    assert emitter.calls >= 3
    warnings = [r for r in caplog.records if "failed (the job goes on)" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
