"""A captured command that fails, or runs no Spark, says so (no JVM is started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from headwater.testing import CaptureError, capture_script


def test_a_failing_script_raises_with_its_last_lines(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("print('reading the orders')\nraise SystemExit(3)\n")
    with pytest.raises(CaptureError, match=r"exited with 3; its last lines:\nreading the orders"):
        capture_script(script, workdir=tmp_path / "work")


def test_a_script_without_spark_has_no_runs(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("print('no spark here')\n")
    lineage = capture_script(script, workdir=tmp_path / "work")
    assert lineage.runs == () and lineage.application is None
    assert (tmp_path / "work" / "output.log").read_text() == "no spark here\n"
