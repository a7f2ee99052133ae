"""Mixed runtimes, one graph: headwater's agent and the OpenLineage listener jar name alike.

A platform runs PySpark jobs beside JVM-only ones (``spark-sql``, Scala jars,
the Thrift server) that only the listener jar can see. Here the same workload
(files, a parquet table, a Delta table, an Iceberg table; see
``tests/support/spark_arms.py``) runs once under each producer, on the same
paths, into one real headwater server, each under its own job namespace. What
the listener reports, headwater's agent reports under the same job names with
the same input and output datasets, so the two producers' jobs meet at the
same dataset nodes. The listener is a test-only download, never a dependency.

One difference is by design: an atomic CTAS/RTAS writes its staged table in a
second SQL execution, which the listener reports as a job of its own
(``…overwrite_by_expression…``, ``…append_data…``) beside the command; the
agent reports the command only (one action, one run, one new version).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.server.live import running_server

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.live, pytest.mark.timeout(2400)]

REPO = Path(__file__).resolve().parents[2]
FORMATS = "files,tables,delta,iceberg"
APP = "mixed runtimes"
NAMESPACES = {"headwater": "pyspark-jobs", "listener": "jvm-jobs"}

#: A job as both producers report it: (name, sorted inputs, sorted outputs).
Job = tuple[str, tuple[str, ...], tuple[str, ...]]


def _run_arm(arm: str, url: str, root: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.spark_arms", "--arm", arm, "--root", str(root),
         "--url", url, "--namespace", NAMESPACES[arm], "--app", APP, "--rounds", "2",
         "--formats", FORMATS],
        cwd=REPO,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    json.loads(result.stdout.strip().splitlines()[-1])


def _nested_writes(jobs: set[Job]) -> set[Job]:
    """Writes of a table an atomic CTAS/RTAS job of the same producer also writes."""
    staged = {outputs for name, _, outputs in jobs if ".atomic_" in name and "_as_select" in name}
    return {job for job in jobs if ".atomic_" not in job[0] and job[2] in staged}


def _jobs(url: str, namespace: str) -> set[Job]:
    answer = httpx.get(f"{url}/api/v1/namespaces/{quote(namespace, safe='')}/jobs", params={"limit": 1000})
    answer.raise_for_status()
    jobs = set()
    for job in answer.json()["jobs"]:
        def names(ids: list[dict]) -> tuple[str, ...]:
            return tuple(sorted(f"{d['namespace']}:{d['name']}" for d in ids))

        if job["outputs"]:
            jobs.add((job["name"], names(job["inputs"]), names(job["outputs"])))
    return jobs


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, set[Job]]]]:
    base = tmp_path_factory.mktemp("mixed")
    # Both arms write the same paths, one after the other (each clears the root first).
    root = Path(f"/tmp/headwater-mixed-{os.getpid()}")
    with running_server("--db", f"sqlite:///{base / 'headwater.db'}", "--log-level", "warning") as url:
        for arm in NAMESPACES:
            _run_arm(arm, url, root)
        yield url, {arm: _jobs(url, namespace) for arm, namespace in NAMESPACES.items()}


def test_every_job_the_listener_reports_has_the_same_name_and_datasets_under_the_agent(
    reported: tuple[str, dict[str, set[Job]]],
) -> None:
    _, jobs = reported
    assert jobs["listener"], "the listener reported no job with outputs"
    missing = jobs["listener"] - _nested_writes(jobs["listener"]) - jobs["headwater"]
    assert not missing, (
        "reported by the listener, not alike by the agent:\n"
        + "\n".join(map(str, sorted(missing)))
        + "\nthe agent's:\n"
        + "\n".join(map(str, sorted(jobs["headwater"])))
    )


def test_the_two_producers_jobs_meet_at_the_same_dataset_nodes(
    reported: tuple[str, dict[str, set[Job]]],
) -> None:
    url, jobs = reported
    shared = {output for _, _, outputs in jobs["listener"] for output in outputs}
    assert shared
    for dataset in sorted(shared):
        namespace, name = dataset.split(":", 1)
        graph = httpx.get(
            f"{url}/api/v1/lineage", params={"nodeId": f"dataset:{namespace}:{name}", "depth": 1}
        )
        graph.raise_for_status()
        producers = {node["data"]["namespace"] for node in graph.json()["graph"] if node["type"] == "JOB"}
        assert producers >= set(NAMESPACES.values()), (dataset, producers)
