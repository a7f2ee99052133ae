"""``headwater lineage diff``: snapshot files, event files, stored runs and jobs (on both
databases and through a server), with the exit codes CI reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from headwater.testing import dump_snapshot, lineage_from_events, to_snapshot
from tests.store.builders import record
from tests.support.cli_server import serve_cli_from
from tests.testing.events_builder import revenue_job

ROOT = "/data/lake"
FIRST_APP = "01900000-0000-7000-8000-00000000000a"
SECOND_APP = "01900000-0000-7000-8000-00000000000b"


def _first() -> list[dict]:
    return revenue_job(ROOT, app_run=FIRST_APP, run_id="01900000-0000-7000-8000-0000000000a1")


def _second() -> list[dict]:
    # The next day's run of the same job, with the customers join dropped.
    return revenue_job(
        ROOT,
        drop_customers=True,
        app_run=SECOND_APP,
        run_id="01900000-0000-7000-8000-0000000000b1",
        day="2026-01-02",
    )


def _diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["lineage", "diff", *args])
    return result.exit_code, result.output


def _snapshot_file(path: Path, events: list[dict]) -> str:
    path.write_text(dump_snapshot(to_snapshot(lineage_from_events(events, root=ROOT))))
    return str(path)


def test_snapshot_files_same_and_different(tmp_path: Path) -> None:
    first = _snapshot_file(tmp_path / "first.lineage.yaml", _first())
    again = _snapshot_file(tmp_path / "again.lineage.yaml", _first())
    second = _snapshot_file(tmp_path / "second.lineage.yaml", _second())
    assert _diff(first, again) == (0, "lineage is the same\n")
    code, output = _diff(first, second)
    assert code == 1
    assert "    - input silver/customers\n" in output
    assert "      - column country <- silver/customers.country DIRECT/IDENTITY\n" in output
    code, output = _diff(first, second, "--format", "json")
    answer = json.loads(output)
    assert code == 1 and answer["same"] is False
    assert {
        "job": "app.adaptive_spark_plan.gold_revenue",
        "scope": "output gold/revenue",
        "sign": "-",
        "change": "schema country string",
    } in answer["changes"]


def test_an_events_file_against_a_snapshot(tmp_path: Path) -> None:
    snapshot = _snapshot_file(tmp_path / "first.lineage.yaml", _first())
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join(json.dumps(e) for e in _second()) + "\n")
    code, output = _diff(snapshot, str(events), "--root", ROOT)
    assert code == 1 and "- input silver/customers" in output
    # Without the root the paths differ too: every dataset is another one.
    code, output = _diff(snapshot, str(events))
    assert code == 1 and f"+ input {ROOT}/silver/orders" in output


def test_unreadable_sides_exit_2_naming_the_problem(tmp_path: Path) -> None:
    good = _snapshot_file(tmp_path / "good.lineage.yaml", _first())
    broken = tmp_path / "broken.lineage.yaml"
    broken.write_text("runs: [job: {\n")
    not_a_snapshot = tmp_path / "other.yaml"
    not_a_snapshot.write_text("just: text\n")
    code, output = _diff(good, str(broken))
    assert code == 2 and "is not valid YAML" in output
    code, output = _diff(good, str(not_a_snapshot))
    assert code == 2 and "is not a lineage snapshot (no 'runs' list)" in output
    code, output = _diff(good, "nonsense")
    assert code == 2 and "neither a file, run:UUID nor job:NAMESPACE:NAME" in output


@pytest.fixture
def stored(db_url: str) -> str:
    store = Store.open(db_url, migrate=True)
    try:
        record(store, _first() + _second())
    finally:
        store.close()
    return db_url


def test_two_stored_runs_and_a_job_against_a_snapshot(stored: str, tmp_path: Path) -> None:
    code, output = _diff(f"run:{FIRST_APP}", f"run:{SECOND_APP}", "--db", stored, "--root", ROOT)
    assert code == 1, output
    assert "    - input silver/customers\n" in output
    # The job's current version is its latest run: the second.
    latest = _snapshot_file(tmp_path / "latest.lineage.yaml", _second())
    assert _diff("job:default:app", latest, "--db", stored, "--root", ROOT)[0] == 0
    # A run id alone names a run too; an action's own run is diffed without its siblings.
    code, output = _diff(FIRST_APP, "run:01900000-0000-7000-8000-0000000000a1", "--db", stored)
    assert code == 0, output
    code, output = _diff(
        f"run:{FIRST_APP}", "run:01900000-0000-7000-8000-0000000000ff", "--db", stored
    )
    assert code == 2 and "not found" in output


def test_stored_runs_through_a_server(stored: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(stored, migrate=False)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            serve_cli_from(monkeypatch, client, "http://headwater")
            code, output = _diff(
                f"run:{FIRST_APP}", "job:default:app", "--url", "http://headwater", "--root", ROOT
            )
    finally:
        store.close()
    assert code == 1, output
    assert "      - dataset <- silver/orders.cid INDIRECT/JOIN\n" in output
