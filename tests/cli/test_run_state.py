"""``headwater run RUN_ID``: a run's state and whether it is stale, read from the store."""

from __future__ import annotations

import json
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.test_stale_runs import _beating


def test_run_shows_a_silent_flink_run_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'headwater.db'}"
    run, batch = str(uuid.uuid4()), str(uuid.uuid4())
    store = Store.open(db, migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            events = _beating(run, 3, timedelta(milliseconds=100))
            events += _beating(batch, 1, timedelta(milliseconds=100))
            assert client.post("/api/v1/lineage/batch", json=events).status_code == 200
    finally:
        store.close()
    monkeypatch.setenv("HEADWATER_STALE_PRODUCERS", "*/integration/flink=0.5s")
    time.sleep(0.6)
    runner = CliRunner()

    table = runner.invoke(main, ["run", run, "--db", db])
    assert table.exit_code == 0, table.output
    assert "RUNNING (stale)" in table.output
    assert "flink:enrich_orders" in table.output
    assert "0.5 s" in table.output

    answer = json.loads(runner.invoke(main, ["run", run, "--db", db, "--format", "json"]).output)
    assert answer["stale"] is True
    assert answer["state"] == "RUNNING"
    assert answer["heartbeat"]["runningEvents"] == 3

    untracked = runner.invoke(main, ["run", batch, "--db", db])
    assert untracked.exit_code == 0, untracked.output
    assert "(stale)" not in untracked.output
    assert "not tracked" in untracked.output

    unknown = runner.invoke(main, ["run", str(uuid.uuid4()), "--db", db])
    assert unknown.exit_code == 1
    assert "not found" in unknown.output
    bad = runner.invoke(main, ["run", "nope", "--db", db])
    assert bad.exit_code == 1
    assert "must be a UUID" in bad.output
