"""Stale runs: a run whose producer beats a heartbeat and went silent is shown stale,
derived at read time; its state stays what its events made it, and a late COMPLETE wins.

On SQLite and PostgreSQL: the store's :func:`heartbeats` with an explicit clock (no
waiting), and ``GET /api/v2/runs/{id}`` on a live clock with a one-second stale-after.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings, parse_stale_producers
from headwater.errors import ConfigError
from headwater.server.app import create_app
from headwater.store import Store
from headwater.store.reads.staleness import (
    DEFAULT_HEARTBEAT_RULES,
    HeartbeatRule,
    heartbeat_rules,
    heartbeats,
)

FLINK = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/flink"
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _event(
    run: str, kind: str, at: datetime, producer: str = FLINK, job: str = "enrich_orders"
) -> dict[str, Any]:
    return {
        "eventType": kind,
        "eventTime": at.isoformat(),
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "flink", "name": job},
        "inputs": [],
        "outputs": [],
    }


def _beating(run: str, beats: int, every: timedelta, producer: str = FLINK) -> list[dict[str, Any]]:
    """START, then ``beats`` RUNNING events ``every`` apart."""
    return [_event(run, "START", T0, producer)] + [
        _event(run, "RUNNING", T0 + every * (i + 1), producer) for i in range(beats)
    ]


def _post(client: TestClient, events: list[dict[str, Any]]) -> None:
    answer = client.post("/api/v1/lineage/batch", json=events)
    assert answer.status_code == 200, answer.text
    assert answer.json()["summary"]["failed"] == 0, answer.json()


def _received_at(store: Store, run: str) -> datetime:
    with store.engine.connect() as conn:
        return heartbeats(conn, [run])[run].last_event_at


def test_silent_heartbeat_run_is_stale_until_a_late_complete(
    client: TestClient, store: Store
) -> None:
    flink, spark_action, one_beat, unknown = (str(uuid.uuid4()) for _ in range(4))
    _post(client, _beating(flink, 3, timedelta(seconds=60)))
    # A long Spark action: START and one progress RUNNING, then nothing for hours.
    _post(client, _beating(spark_action, 1, timedelta(seconds=5), producer=SPARK))
    # A Flink run that sent one RUNNING only (its job-status RUNNING, no checkpoints).
    _post(client, _beating(one_beat, 1, timedelta(seconds=60)))
    # A producer no rule names, beating like Flink.
    _post(client, _beating(unknown, 3, timedelta(seconds=60), producer=SPARK))
    heard = _received_at(store, flink)
    runs = [flink, spark_action, one_beat, unknown]

    with store.engine.connect() as conn:
        soon = heartbeats(conn, runs, now=heard + timedelta(seconds=299))
        later = heartbeats(conn, runs, now=heard + timedelta(seconds=301))
    assert not soon[flink].stale
    assert later[flink].stale
    assert later[flink].producer == FLINK
    assert later[flink].running_events == 3
    assert later[flink].cadence == pytest.approx(60.0)
    assert later[flink].stale_after == 300.0
    for other in (spark_action, one_beat, unknown):
        assert not later[other].stale, other
        assert later[other].stale_after is None, other

    # Silence never ends a run: its state is still the one its events made.
    record = client.get(f"/api/v1/jobs/runs/{flink}").json()
    assert record["state"] == "RUNNING"
    assert record["endedAt"] is None

    # The producer comes back: a late COMPLETE (dated before the silence) wins.
    _post(client, [_event(flink, "COMPLETE", T0 + timedelta(seconds=200))])
    with store.engine.connect() as conn:
        after = heartbeats(conn, [flink], now=datetime.now(UTC) + timedelta(days=30))
    assert not after[flink].stale
    assert client.get(f"/api/v1/jobs/runs/{flink}").json()["state"] == "COMPLETED"
    answer = client.get(f"/api/v2/runs/{flink}").json()
    assert answer["state"] == "COMPLETED"
    assert answer["stale"] is False


def test_a_slow_cadence_stretches_the_stale_after(client: TestClient, store: Store) -> None:
    run = str(uuid.uuid4())
    # Checkpoints every 10 minutes: three of them are 30 minutes, longer than 5.
    _post(client, _beating(run, 4, timedelta(minutes=10)))
    heard = _received_at(store, run)
    with store.engine.connect() as conn:
        at_20 = heartbeats(conn, [run], now=heard + timedelta(minutes=20))[run]
        at_31 = heartbeats(conn, [run], now=heard + timedelta(minutes=31))[run]
    assert at_20.stale_after == pytest.approx(1800.0)
    assert not at_20.stale
    assert at_31.stale


def test_a_late_running_makes_a_stale_run_fresh(client: TestClient, store: Store) -> None:
    run = str(uuid.uuid4())
    _post(client, _beating(run, 2, timedelta(seconds=30)))
    first = _received_at(store, run)
    with store.engine.connect() as conn:
        assert heartbeats(conn, [run], now=first + timedelta(minutes=6))[run].stale
    _post(client, [_event(run, "RUNNING", T0 + timedelta(minutes=6))])
    again = _received_at(store, run)
    with store.engine.connect() as conn:
        beat = heartbeats(conn, [run], now=again + timedelta(minutes=1))[run]
    assert again >= first
    assert not beat.stale
    assert beat.running_events == 3


def test_v2_run_answer_on_a_live_clock(store: Store) -> None:
    settings = Settings(stale_producers=(("*/integration/flink", 1.0),))
    run, quiet = str(uuid.uuid4()), str(uuid.uuid4())
    with TestClient(create_app(settings, store)) as client:
        # Event times a tenth of a second apart: the one-second setting decides.
        _post(client, _beating(run, 3, timedelta(milliseconds=100)))
        _post(client, _beating(quiet, 1, timedelta(milliseconds=100)))
        fresh = client.get(f"/api/v2/runs/{run}")
        assert fresh.status_code == 200, fresh.text
        assert fresh.json()["stale"] is False
        assert fresh.json()["state"] == "RUNNING"
        assert fresh.json()["heartbeat"] == {
            "producer": FLINK,
            "runningEvents": 3,
            "cadenceSeconds": pytest.approx(0.1),
            "staleAfterSeconds": 1.0,
        }
        time.sleep(1.2)
        stale = client.get(f"/api/v2/runs/{run}").json()
        assert stale["stale"] is True
        assert stale["state"] == "RUNNING"
        assert stale["job"] == {"namespace": "flink", "name": "enrich_orders"}
        assert stale["endedAt"] is None
        untracked = client.get(f"/api/v2/runs/{quiet}").json()
        assert untracked["stale"] is False
        assert untracked["heartbeat"] is None
        assert client.get(f"/api/v2/runs/{uuid.uuid4()}").status_code == 404
        bad = client.get("/api/v2/runs/not-a-uuid")
        assert bad.status_code == 400
        assert "path.id" in bad.text


def test_stale_producers_setting() -> None:
    assert heartbeat_rules(None) == DEFAULT_HEARTBEAT_RULES
    assert Settings.from_env({"HEADWATER_STALE_PRODUCERS": "none"}).stale_producers == ()
    pairs = parse_stale_producers("https://a/*=10m, */connect=1h")
    assert heartbeat_rules(pairs) == (
        HeartbeatRule("https://a/*", 600.0),
        HeartbeatRule("*/connect", 3600.0),
    )
    for bad in ("flink", "=5m", "*/flink=soon", ","):
        with pytest.raises(ConfigError, match="HEADWATER_STALE_PRODUCERS"):
            Settings.from_env({"HEADWATER_STALE_PRODUCERS": bad})
