"""Run the retail pipeline as one orchestrated run: every job instrumented, all under one parent.

The runner plays the orchestrator (the part Airflow or Dagster plays in
production): it reports its own run of the ``retail_pipeline`` job to the
lineage server (START, then COMPLETE or FAIL), and starts each step as its own
``python <script>.py`` process with the agent switched on exactly as
``headwater instrument`` does, plus ``OPENLINEAGE_PARENT_ID`` naming that run,
so each Spark application's run hangs under it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from headwater import __version__
from headwater.agent.instrument import instrumented_env
from headwater.demo.locate import pipeline_dir
from headwater.demo.realtime import RealtimeHalf
from headwater.demo.steps import PIPELINE_JOB, PIPELINE_NAMESPACE, STEPS, Step
from headwater.errors import HeadwaterError

__all__ = ["PipelineFailed", "PipelineResult", "StepResult", "run_pipeline"]

logger = logging.getLogger(__name__)

_PRODUCER = f"https://github.com/headwater-lineage/headwater/tree/{__version__}/demo"
_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


class PipelineFailed(HeadwaterError):
    """A step of the pipeline exited with an error (its log file is named in the message)."""


@dataclass(frozen=True)
class StepResult:
    """How one step ended: ``ok``, ``failed`` or ``skipped`` (with the reason)."""

    step: Step
    status: str
    seconds: float
    log_path: Path | None = None
    reason: str = ""


@dataclass
class PipelineResult:
    """One run of the whole pipeline."""

    run_id: str
    drift: bool
    seconds: float = 0.0
    steps: list[StepResult] = field(default_factory=list)

    @property
    def parent_id(self) -> str:
        """The ``OPENLINEAGE_PARENT_ID`` value every job of this run received."""
        return f"{PIPELINE_NAMESPACE}/{PIPELINE_JOB}/{self.run_id}"


def run_pipeline(
    data_dir: Path,
    lineage_url: str,
    scale: str = "small",
    drift: bool = False,
    console: Console | None = None,
    steps: Sequence[Step] = STEPS,
    base_env: Mapping[str, str] | None = None,
    realtime: RealtimeHalf | None = None,
    realtime_skipped: str = "the real-time half is off",
) -> PipelineResult:
    """Run every step in order; raise PipelineFailed at the first failing step.

    ``data_dir`` holds the lake (raw, bronze, silver, gold, ...), the catalog
    and one log file per step under ``logs/``. Events go to ``lineage_url``.
    The real-time steps run against ``realtime``; without it they are skipped,
    ``realtime_skipped`` saying why.
    """
    console = console or Console()
    data_dir = data_dir.resolve()
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    scripts = pipeline_dir()
    result = PipelineResult(run_id=str(uuid.uuid4()), drift=drift)
    env = _job_env(base_env if base_env is not None else os.environ, data_dir, lineage_url,
                   result.parent_id)
    if realtime is not None:
        env.update(realtime.env())
    prepared = False
    started = time.monotonic()
    with httpx.Client(base_url=lineage_url, timeout=10.0) as client:
        _report(client, "START", result.run_id, drift)
        try:
            with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                          console=console) as progress:
                for step in steps:
                    if step.realtime and realtime is None:
                        result.steps.append(_skip(step, realtime_skipped, progress))
                        continue
                    if step.realtime and not prepared and realtime is not None:
                        realtime.prepare(data_dir, lineage_url)
                        prepared = True
                    result.steps.append(
                        _run_step(step, scripts, data_dir, logs, env, scale, drift, progress)
                    )
                    if result.steps[-1].status == "failed":
                        raise PipelineFailed(
                            f"step {step.name!r} failed; see {result.steps[-1].log_path}"
                        )
        except BaseException:
            result.seconds = time.monotonic() - started
            _report(client, "FAIL", result.run_id, drift)
            raise
        finally:
            if prepared and realtime is not None:
                realtime.end_run()
        result.seconds = time.monotonic() - started
        _report(client, "COMPLETE", result.run_id, drift)
    return result


def _skip(step: Step, reason: str, progress: Progress) -> StepResult:
    task = progress.add_task(f"{step.name}: skipped, {reason}", total=1)
    progress.update(task, completed=1)
    return StepResult(step, "skipped", 0.0, reason=reason)


def _run_step(
    step: Step, scripts: Path, data_dir: Path, logs: Path, env: Mapping[str, str],
    scale: str, drift: bool, progress: Progress,
) -> StepResult:
    task = progress.add_task(step.name, total=1)
    missing = [module for module in step.needs if importlib.util.find_spec(module) is None]
    if missing:
        reason = f"needs {', '.join(missing)} (pip install {' '.join(missing)})"
        progress.update(task, description=f"{step.name}: skipped, {reason}", completed=1)
        return StepResult(step, "skipped", 0.0, reason=reason)
    command = [sys.executable, str(scripts / step.script), "--data-dir", str(data_dir)]
    if not step.spark:
        command += ["--scale", scale] + (["--drift"] if drift else [])
    log_path = logs / f"{Path(step.script).stem}.log"
    began = time.monotonic()
    with log_path.open("w", encoding="utf-8") as log:
        # Spark's own chatter goes to the step's log; the display shows progress only.
        code = subprocess.call(command, cwd=scripts, env=dict(env), stdout=log,
                               stderr=subprocess.STDOUT)
    seconds = time.monotonic() - began
    status = "ok" if code == 0 else "failed"
    mark = "[green]✓[/]" if code == 0 else f"[red]✗ exit {code}[/]"
    progress.update(task, description=f"{step.name} {mark}", completed=1)
    progress.stop_task(task)
    return StepResult(step, status, seconds, log_path)


def _job_env(
    base: Mapping[str, str], data_dir: Path, lineage_url: str, parent_id: str
) -> dict[str, str]:
    """The environment of every step: instrumented, pointed at the server, under the parent run."""
    env = instrumented_env(base)
    env.update({
        "OPENLINEAGE_URL": lineage_url,
        "OPENLINEAGE_NAMESPACE": PIPELINE_NAMESPACE,
        "OPENLINEAGE_PARENT_ID": parent_id,
        # The orchestrator run is the top of the tree, so it is also the root.
        "OPENLINEAGE_ROOT_PARENT_ID": parent_id,
        "RETAIL_DATA_DIR": str(data_dir),
        # Undeliverable events stay with the demo's data, not in the user's home.
        "HEADWATER_SPOOL_DIR": str(data_dir / "spool"),
    })
    # At spark.stop() the agent waits this long for Spark's listener bus to hand
    # over the last action; on a busy 2-core machine the 5 s default can pass
    # first and the job's final write would go unreported. An empty bus returns
    # at once, so a longer bound costs nothing on an idle machine.
    env.setdefault("HEADWATER_FLUSH_TIMEOUT_SECONDS", "60")
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # A transport configured for the user's own jobs must not divert the demo's events.
    for name in [key for key in env if key.startswith("OPENLINEAGE__TRANSPORT")]:
        del env[name]
    return env


def _report(client: httpx.Client, event_type: str, run_id: str, drift: bool) -> None:
    """Send the orchestrator's own run event; a delivery problem is logged, never fatal."""
    event: dict[str, Any] = {
        "eventType": event_type,
        "eventTime": datetime.now(UTC).isoformat(),
        "producer": _PRODUCER,
        "schemaURL": _SCHEMA_URL,
        "run": {"runId": run_id, "facets": {}},
        "job": {
            "namespace": PIPELINE_NAMESPACE,
            "name": PIPELINE_JOB,
            "facets": {
                "jobType": {
                    "_producer": _PRODUCER,
                    "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json",
                    "processingType": "BATCH",
                    "integration": "HEADWATER",
                    "jobType": "DAG",
                },
                "documentation": {
                    "_producer": _PRODUCER,
                    "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json",
                    "description": "headwater demo: retail lakehouse pipeline"
                    + (" (drifted raw source)" if drift else ""),
                },
            },
        },
        "inputs": [],
        "outputs": [],
    }
    try:
        response = client.post("/api/v1/lineage", json=event)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        logger.warning("could not report the pipeline run's %s event: %s", event_type, exc)
