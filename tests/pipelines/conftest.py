"""The retail pipeline, run once per test session: every Spark job in its own instrumented
process (as ``headwater demo`` runs it), its lineage captured with ``headwater.testing``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from headwater.demo.steps import STEPS
from headwater.testing import CaptureError, Lineage, capture_script

PIPELINE = Path(__file__).resolve().parents[2] / "pipelines" / "retail"

#: The batch Spark jobs of the pipeline, in the order they run (generate.py writes raw
#: files only). The real-time steps read and write a Kafka broker the demo starts;
#: tests/e2e/test_demo_pipeline.py checks their lineage there.
JOBS = tuple(Path(step.script).stem for step in STEPS if step.spark and not step.realtime)


@dataclass
class RetailRun:
    data_dir: Path
    captured: dict[str, Lineage | CaptureError]

    def lineage(self, job: str) -> Lineage:
        """The job's lineage; a job that failed fails the test that asks for it."""
        result = self.captured[job]
        if isinstance(result, CaptureError):
            raise result
        return result


@pytest.fixture(scope="session")
def retail(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RetailRun]:
    data_dir = tmp_path_factory.mktemp("retail")
    # The smallest scale: lineage does not depend on row counts, and each job starts faster.
    subprocess.run(
        [
            sys.executable,
            str(PIPELINE / "generate.py"),
            "--data-dir",
            str(data_dir),
            "--scale",
            "tiny",
        ],
        check=True,
        capture_output=True,
    )
    captured: dict[str, Lineage | CaptureError] = {}
    for job in JOBS:
        try:
            captured[job] = capture_script(
                PIPELINE / f"{job}.py",
                "--data-dir",
                str(data_dir),
                root=data_dir,
                workdir=data_dir / "captures" / job,
            )
        except CaptureError as exc:  # the later jobs still run: each test reports its own
            captured[job] = exc
    yield RetailRun(data_dir, captured)
