"""deploy/bootstrap-agent.sh on a node: it installs the agent into a clean virtualenv (one
that has only the PySpark a cluster's Spark provides), writes the Spark configuration, and a
plain PySpark job, started by spark-submit with nothing but that configuration, sends its
lineage to a real headwater server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server.live import running_server

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.live]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "bootstrap-agent.sh"
JOB = """
from pyspark.sql import SparkSession
import sys
spark = SparkSession.builder.appName("Bootstrap Check").getOrCreate()
spark.range(5).write.mode("overwrite").parquet(sys.argv[1])
spark.stop()
"""


def _clean_venv(tmp: Path) -> Path:
    """A new virtualenv whose only package is PySpark (and py4j), as on a cluster node."""
    import py4j
    import pyspark

    venv = tmp / "node-python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    provided = tmp / "cluster-spark-python"
    provided.mkdir()
    for package in (pyspark, py4j):
        source = Path(package.__file__).parent
        (provided / source.name).symlink_to(source)
    [site] = list((venv / "lib").glob("python3*/site-packages"))
    (site / "cluster-spark.pth").write_text(f"{provided}\n")
    return venv / "bin" / "python"


def _bootstrap(python: Path, tmp: Path, wheel: Path, url: str) -> subprocess.CompletedProcess[str]:
    key = tmp / "ingest-token"
    key.write_text("hw_not_needed_here\n")
    return subprocess.run(
        [
            "bash",
            str(SCRIPT),
            "--python",
            str(python),
            "--package",
            f"{wheel}[agent]",
            "--url",
            url,
            "--namespace",
            "cluster_check",
            "--api-key-file",
            str(key),
            "--instrument-dir",
            str(tmp / "opt" / "instrument"),
            "--conf-dir",
            str(tmp / "conf"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_job_with_only_the_written_configuration_sends_lineage(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        check=True,
        timeout=600,
    )
    [wheel] = list(wheels.glob("headwater-*.whl"))
    python = _clean_venv(tmp_path)
    assert subprocess.run([str(python), "-c", "import headwater"]).returncode != 0

    with running_server(
        "--data-dir", str(tmp_path / "server"), env={"HEADWATER_DB_URL": ""}
    ) as url:
        for _ in range(2):  # a second run replaces its own blocks
            done = _bootstrap(python, tmp_path, wheel, url)
            assert done.returncode == 0, done.stderr
        defaults = (tmp_path / "conf" / "spark-defaults.conf").read_text()
        env_sh = (tmp_path / "conf" / "spark-env.sh").read_text()
        assert defaults.count(">>> headwater agent") == 1 == env_sh.count(">>> headwater agent")
        assert f"spark.openlineage.transport.url {url}" in defaults
        assert "spark.openlineage.transport.auth.apiKey hw_not_needed_here" in defaults
        assert "export HEADWATER_INSTRUMENT=1" in env_sh

        import pyspark

        spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_CONF_DIR": str(tmp_path / "conf"),
            "PYSPARK_PYTHON": str(python),
            "PYSPARK_DRIVER_PYTHON": str(python),
        }
        if "JAVA_HOME" in os.environ:
            env["JAVA_HOME"] = os.environ["JAVA_HOME"]
        job = tmp_path / "job.py"
        job.write_text(JOB)
        ran = subprocess.run(
            [
                str(spark_submit),
                "--master",
                "local[1]",
                "--conf",
                "spark.ui.enabled=false",
                str(job),
                str(tmp_path / "out"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert ran.returncode == 0, ran.stderr[-3000:]

        jobs: dict[str, str] = {}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "bootstrap_check" not in jobs:
            answer = httpx.get(f"{url}/api/v1/namespaces/cluster_check/jobs")
            if answer.status_code == 200:
                jobs = {
                    j["name"]: (j["latestRun"] or {}).get("state") for j in answer.json()["jobs"]
                }
            time.sleep(0.5)
    # The application run and the write's run, both ended.
    assert jobs.get("bootstrap_check") == "COMPLETED", jobs
    writes = [name for name in jobs if name.startswith("bootstrap_check.")]
    assert writes and all(jobs[name] == "COMPLETED" for name in writes), jobs
