"""The demo's parts that need no Spark: generator, script locator, runner failure path, command."""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from rich.console import Console

from headwater.config import Settings
from headwater.demo import PipelineFailed, run_pipeline
from headwater.demo.command import demo
from headwater.demo.locate import pipeline_dir
from headwater.demo.orchestrate import _realtime
from headwater.demo.server import EmbeddedServer, free_port
from headwater.demo.steps import PIPELINE_JOB, PIPELINE_NAMESPACE, STEPS, Step
from headwater.server.app import create_app, open_store

DOCS = Path(__file__).resolve().parents[2] / "docs" / "demo.md"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("retail_generate", pipeline_dir() / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(root: Path) -> dict[str, bytes]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def test_generator_is_deterministic(tmp_path: Path) -> None:
    generate = _generator().generate
    first = generate(tmp_path / "a", "tiny")
    generate(tmp_path / "b", "tiny")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert first["customers.csv"] == 40
    # Some orders are delivered twice, for the silver job to deduplicate.
    assert first["orders.csv"] > 200


def test_generator_rerun_replaces_earlier_files(tmp_path: Path) -> None:
    generate = _generator().generate
    generate(tmp_path, "small")
    generate(tmp_path, "tiny")
    assert (tmp_path / "raw" / "customers.csv").read_text().count("\n") == 41


def test_drifted_export_changes_a_type_and_renames_a_column(tmp_path: Path) -> None:
    generate = _generator().generate
    generate(tmp_path / "normal", "tiny")
    generate(tmp_path / "drift", "tiny", drift=True)
    normal = (tmp_path / "normal" / "raw" / "customers.csv").read_text().splitlines()
    drift = (tmp_path / "drift" / "raw" / "customers.csv").read_text().splitlines()
    assert normal[0].split(",")[4] == "phone"
    assert drift[0].split(",")[4] == "phone_number"
    assert normal[1].startswith("1,")
    assert drift[1].startswith("C000001,")
    orders = (tmp_path / "drift" / "raw" / "orders.csv").read_text().splitlines()
    assert all(re.match(r"\d+,C\d{6},", line) for line in orders[1:])


def test_every_step_script_is_found_and_imports_no_headwater() -> None:
    scripts = pipeline_dir()
    for step in STEPS:
        source = (scripts / step.script).read_text()
        assert not re.search(r"^\s*(from|import)\s+headwater", source, re.MULTILINE), step.script
    for helper in scripts.glob("*.py"):
        assert "import headwater" not in helper.read_text(), helper.name


def test_a_failing_step_stops_the_pipeline_and_fails_its_run(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, port=free_port("127.0.0.1"))
    store = open_store(settings)
    server = EmbeddedServer(settings, store)
    server.start()
    try:
        steps = [Step("generate raw data", "generate.py", spark=False), Step("bronze", "bronze.py")]
        with pytest.raises(PipelineFailed, match="generate.log") as caught:
            # An unknown scale makes the generator exit with a usage error.
            run_pipeline(
                tmp_path,
                server.url,
                scale="enormous",
                steps=steps,
                console=Console(file=io.StringIO()),
            )
        assert "'generate raw data' failed" in str(caught.value)
        assert "invalid choice" in (tmp_path / "logs" / "generate.log").read_text()
        assert not (tmp_path / "logs" / "bronze.log").exists()
        with TestClient(create_app(settings, store)) as client:
            runs = client.get(f"/api/v1/namespaces/{PIPELINE_NAMESPACE}/jobs/{PIPELINE_JOB}/runs")
            assert runs.status_code == 200, runs.text
            assert [r["state"] for r in runs.json()["runs"]] == ["FAILED"]
    finally:
        server.stop()
        store.close()


def test_command_documents_every_option() -> None:
    result = CliRunner().invoke(demo, ["--help"])
    assert result.exit_code == 0, result.output
    docs = DOCS.read_text()
    for option in (
        "--data-dir",
        "--scale",
        "--drift",
        "--serve",
        "--no-serve",
        "--host",
        "--port",
        "--streaming",
        "--no-streaming",
        "--with-connect",
    ):
        assert option in result.output
        assert f"`{option}" in docs, f"{option} is not documented in docs/demo.md"


def test_command_rejects_an_unknown_scale_naming_the_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(demo, ["--scale", "huge", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "--scale" in result.output
    assert not (tmp_path / "headwater.db").exists()


def test_with_connect_needs_the_real_time_half(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        demo, ["--with-connect", "--no-streaming", "--data-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "--with-connect" in result.output and "--no-streaming" in result.output
    assert not (tmp_path / "headwater.db").exists()


def test_without_java_the_real_time_half_is_skipped_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No java or mvn on PATH: the broker cannot start, and the demo says so.
    monkeypatch.setenv("PATH", str(tmp_path))
    out = io.StringIO()
    realtime, reason = _realtime(Console(file=out, width=200), True, None, False)
    assert realtime is None
    assert reason == "Kafka is not available"
    assert "real-time half skipped: the Kafka broker did not start: not on PATH: java, mvn" in (
        out.getvalue()
    )


def test_skipped_real_time_steps_are_reported_as_skipped(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, port=free_port("127.0.0.1"))
    store = open_store(settings)
    server = EmbeddedServer(settings, store)
    server.start()
    try:
        steps = [s for s in STEPS if s.realtime]
        result = run_pipeline(
            tmp_path,
            server.url,
            steps=steps,
            realtime=None,
            realtime_skipped="--no-streaming",
            console=Console(file=io.StringIO()),
        )
        assert [(s.status, s.reason) for s in result.steps] == [("skipped", "--no-streaming")] * 4
        assert not (tmp_path / "logs" / "stream_orders.log").exists()
    finally:
        server.stop()
        store.close()
