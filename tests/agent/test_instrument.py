"""`headwater instrument` and its start-up hook, in real subprocesses (no JVM here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from headwater.agent.instrument import instrumented_env, site_dir


def _headwater(*args: str, env: dict[str, str] | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headwater", *args],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )


def _base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENLINEAGE", "HEADWATER", "PYSPARK"))}
    env.update({
        "SPARK_LOCAL_IP": "127.0.0.1",
        "OPENLINEAGE__TRANSPORT__TYPE": "file",
        "OPENLINEAGE__TRANSPORT__LOCATION": str(tmp_path / "events.jsonl"),
        "HEADWATER_SPOOL_DIR": str(tmp_path / "spool"),
        # spark-submit starts the driver with this interpreter (the one that has headwater).
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    })
    return env


def test_print_path_names_the_sitecustomize_directory() -> None:
    result = _headwater("instrument", "--print-path")
    assert result.returncode == 0
    assert result.stdout.strip() == site_dir()
    assert (Path(site_dir()) / "sitecustomize.py").is_file()


def test_print_env_gives_export_lines() -> None:
    result = _headwater("instrument", "--print-env", "--url", "http://lineage:5000")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("export PYTHONPATH=" + site_dir())
    assert "export HEADWATER_INSTRUMENT=1" in lines
    assert "export OPENLINEAGE_URL=http://lineage:5000" in lines


def test_command_gets_the_environment_and_its_exit_status_passes_through(tmp_path: Path) -> None:
    probe = (
        "import os, sys; "
        "print(os.environ['HEADWATER_INSTRUMENT'], os.environ['PYTHONPATH'].split(os.pathsep)[0]); "
        "import headwater.agent.instrument.hook as h; "
        "print(h.installed(), 'pyspark' in sys.modules); sys.exit(7)"
    )
    result = _headwater("instrument", "--", sys.executable, "-c", probe, env=_base_env(tmp_path))
    assert result.returncode == 7
    assert result.stdout.split() == ["1", site_dir(), "True", "False"]


def test_missing_command_and_unknown_program_are_reported() -> None:
    assert _headwater("instrument").returncode == 2
    result = _headwater("instrument", "--", "no-such-program-headwater")
    assert result.returncode == 127
    assert "no-such-program-headwater" in result.stderr


def test_hook_patches_spark_session_on_import_only(tmp_path: Path) -> None:
    env = instrumented_env(_base_env(tmp_path))
    probe = (
        "import sys; before = 'pyspark' in sys.modules; "
        "from pyspark.sql import SparkSession; "
        "print(before, getattr(SparkSession, '__headwater_instrumented__', False))"
    )
    on = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                        timeout=60, check=True)
    assert on.stdout.split() == ["False", "True"]
    off = subprocess.run([sys.executable, "-c", probe], env={**env, "HEADWATER_INSTRUMENT": "0"},
                         capture_output=True, text=True, timeout=60, check=True)
    assert off.stdout.split() == ["False", "False"]


def test_an_existing_sitecustomize_still_runs(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import builtins\nbuiltins.THEIRS_RAN = True\n")
    env = _base_env(tmp_path)
    env["PYTHONPATH"] = str(theirs)
    probe = ("import builtins, headwater.agent.instrument.hook as h; "
             "print(getattr(builtins, 'THEIRS_RAN', False), h.installed())")
    result = _headwater("instrument", "--", sys.executable, "-c", probe, env=env)
    assert result.stdout.split() == ["True", "True"], result.stderr


def test_the_pth_line_installs_the_hook_only_when_switched_on(tmp_path: Path) -> None:
    # The line a wheel can ship as headwater-instrument.pth (site-packages runs it at start-up).
    pth = Path(site_dir()).parent / "headwater-instrument.pth"
    probe = (f"exec(open({str(pth)!r}).read()); import sys; "
             "print('headwater.agent.instrument' in sys.modules, 'pyspark' in sys.modules)")
    env = _base_env(tmp_path)
    on = subprocess.run([sys.executable, "-c", probe], env={**env, "HEADWATER_INSTRUMENT": "1"},
                        capture_output=True, text=True, timeout=60, check=True)
    assert on.stdout.split() == ["True", "False"]
    off = subprocess.run([sys.executable, "-c", probe], env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    assert off.stdout.split() == ["False", "False"]
