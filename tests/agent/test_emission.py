"""The agent's emission figures: counted by the emitter, in the run facet, in the summary line."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from headwater.agent.config import AgentConfig, DeliveryConfig
from headwater.agent.emission import (
    EMISSION_FACET,
    EMISSION_FACET_SCHEMA,
    emission_figures,
    log_summary,
    percentile,
)
from headwater.agent.emitter import AgentMetrics, Emitter
from headwater.agent.run_model import RunModel
from headwater.events.model import PRODUCER
from headwater.transport.http import HttpConfig, HttpTransport
from headwater.transport.spool import Spool
from tests.agent.spec import validate_event

FAST = DeliveryConfig(retries=3, retry_backoff=0.01, breaker_failure_threshold=100, batch_size=50)


def _event(i: int) -> dict[str, object]:
    return {"eventType": "COMPLETE", "run": {"runId": f"run-{i}"}, "n": i}


def _flaky_http(failures: int) -> HttpTransport:
    """A backend answering 503 to the first ``failures`` requests, then 200."""
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] <= failures:
            return httpx.Response(503, text="busy")
        return httpx.Response(200, json={"status": "success"})

    return HttpTransport(
        HttpConfig.from_dict({"url": "http://backend.invalid"}),
        client=httpx.Client(transport=httpx.MockTransport(handler)),
    )


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.95) == 95.0
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([], 0.5) is None


def test_retries_and_send_latency_are_counted(tmp_path: Path) -> None:
    emitter = Emitter(_flaky_http(2), FAST, spool=Spool(tmp_path), replay_spool=False)
    for i in range(7):
        emitter.emit(_event(i))
    assert emitter.flush(10)
    emitter.close()
    figures = emission_figures(emitter.metrics.snapshot())
    # One batch of 7, refused twice (503), then accepted: 3 attempts, 14 retried sends.
    assert {
        k: figures[k] for k in ("queued", "sent", "retried", "spooled", "rejected", "dropped")
    } == {"queued": 7, "sent": 7, "retried": 14, "spooled": 0, "rejected": 0, "dropped": 0}
    assert figures["sendMs"]["count"] == 3
    assert 0 <= figures["sendMs"]["p50"] <= figures["sendMs"]["p95"] <= figures["sendMs"]["max"]


def test_spooled_and_dropped_events_are_counted(tmp_path: Path) -> None:
    down = DeliveryConfig(retries=0, retry_backoff=0.01, breaker_failure_threshold=100)
    spooling = Emitter(_flaky_http(10**6), down, spool=Spool(tmp_path), replay_spool=False)
    dropping = Emitter(
        _flaky_http(10**6),
        DeliveryConfig(retries=0, spool_enabled=False),
        spool=None,
        replay_spool=False,
    )
    for emitter in (spooling, dropping):
        for i in range(4):
            emitter.emit(_event(i))
        emitter.flush(10)
        emitter.close()
    assert emission_figures(spooling.metrics.snapshot())["spooled"] == 4
    assert emission_figures(dropping.metrics.snapshot())["dropped"] == 4


def test_summary_line_is_info_when_clean_and_warning_when_events_were_spooled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clean = AgentMetrics()
    clean.add("emitted", 3)
    clean.add("sent", 3)
    clean.record_send(0.004)
    clean.record_build(0.020)
    caplog.set_level(logging.INFO, logger="headwater.agent")
    log_summary("nightly_etl", clean.snapshot())
    troubled = AgentMetrics()
    troubled.add("emitted", 3)
    troubled.add("spooled", 2)
    log_summary("nightly_etl", troubled.snapshot())
    lines = [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if "application nightly_etl" in r.message
    ]
    assert [level for level, _ in lines] == [logging.INFO, logging.WARNING]
    assert "3 events queued, 3 sent, 0 retried, 0 spooled" in lines[0][1]
    assert "send p50 4.0 ms" in lines[0][1] and "capture p50 20.0 ms" in lines[0][1]
    assert "2 spooled" in lines[1][1]


def _model(conf: dict[str, str] | None = None) -> RunModel:
    model = RunModel(AgentConfig.from_sources(conf or {}, {}), "Nightly ETL", "4.1.1", "0.1.0")
    metrics = AgentMetrics()
    metrics.add("emitted", 5)
    metrics.add("sent", 4)
    metrics.record_capture(0.001)
    metrics.record_build(0.030)
    metrics.record_build(0.010)
    model.emission_snapshot = metrics.snapshot
    return model


def test_the_application_end_carries_the_emission_facet() -> None:
    model = _model()
    start = model.application_event("START")
    assert EMISSION_FACET not in start["run"]["facets"]
    for end in (
        model.application_event("COMPLETE"),
        model.application_event("FAIL", ("boom", None)),
    ):
        validate_event(end)
        facet = end["run"]["facets"][EMISSION_FACET]
        assert facet["_producer"] == PRODUCER and facet["_schemaURL"] == EMISSION_FACET_SCHEMA
        assert facet["queued"] == 5 and facet["sent"] == 4 and facet["dropped"] == 0
        assert facet["buildMs"] == {"count": 2, "p50": 10.0, "p95": 30.0, "max": 30.0}
        assert facet["captureMs"]["count"] == 1 and facet["sendMs"]["count"] == 0


def test_the_emission_facet_can_be_disabled() -> None:
    model = _model({f"spark.openlineage.facets.{EMISSION_FACET}.disabled": "true"})
    assert EMISSION_FACET not in model.application_event("COMPLETE")["run"]["facets"]
