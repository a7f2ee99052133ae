"""``headwater sample``: loads the shipped sample, twice without failing, and serves it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import jsonschema
import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.samples import retail_events
from headwater.store import Store
from tests.server.live import free_port

SPEC = Path(__file__).resolve().parents[2].parent / "shared/conformance/openlineage-spec"


def test_sample_events_are_valid_openlineage() -> None:
    validator = jsonschema.Draft202012Validator(json.loads((SPEC / "OpenLineage.json").read_text()))
    events = retail_events()
    assert len(events) >= 50
    for event in events:
        errors = [e.message for e in validator.iter_errors(event)]
        assert not errors, errors
    assert retail_events() == events  # deterministic: a reload is all duplicates


def test_sample_covers_bronze_silver_gold_with_column_lineage_and_a_failure() -> None:
    events = retail_events()
    jobs = {e["job"]["name"] for e in events}
    assert {j.split(".")[0] for j in jobs} >= {"bronze", "silver", "gold"}
    assert any(e["eventType"] == "FAIL" for e in events)
    assert any("columnLineage" in o.get("facets", {}) for e in events for o in e["outputs"])
    schemas = {
        len(o["facets"]["schema"]["fields"])
        for e in events for o in e["outputs"] if o["name"].endswith("silver/orders")
    }
    assert len(schemas) == 2  # the schema of silver/orders drifts


def test_sample_twice_without_serving(tmp_path: Path) -> None:
    runner = CliRunner()
    data_dir = tmp_path / "hw"
    first = runner.invoke(main, ["sample", "--no-serve", "--data-dir", str(data_dir)],
                           env={"HEADWATER_DB_URL": None})
    assert first.exit_code == 0, first.output
    assert str(data_dir.resolve()) in first.output
    total = len(retail_events())
    assert f"{total} events ({total} new, 0 already loaded, 0 rejected)" in first.output
    assert "jobs" in first.output and "datasets" in first.output

    second = runner.invoke(main, ["sample", "--no-serve", "--data-dir", str(data_dir)],
                           env={"HEADWATER_DB_URL": None})
    assert second.exit_code == 0, second.output
    assert f"(0 new, {total} already loaded, 0 rejected)" in second.output

    with Store.open(f"sqlite:///{data_dir / 'headwater.db'}", migrate=False) as store:
        assert store.counts()["events"] == total


@pytest.mark.live
@pytest.mark.slow
def test_sample_serves_until_interrupted(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "HEADWATER_DB_URL"}
    env["HEADWATER_DATA_DIR"] = str(tmp_path / "hw")
    process = subprocess.Popen(
        [sys.executable, "-m", "headwater", "sample", "--host", "127.0.0.1", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.stdout is not None
            assert process.poll() is None, process.stdout.read().decode()
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1)
                if response.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "sample did not start serving"
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output.decode()
    assert f"http://127.0.0.1:{port}" in output.decode()
