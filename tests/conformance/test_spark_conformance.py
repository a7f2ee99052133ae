"""The OpenLineage Spark suite's expected events, matched against headwater's agent.

PySpark jobs equivalent to the suite's scenarios (``spark/scenarios.py``) run
in one subprocess per warehouse directory (a static Spark setting), with the
agent configured through ``spark.openlineage.*`` keys and a file transport.
Each expected file must be a subset of some emitted event, in the listed
order (``spark/matching.py``). Every emitted event must also validate against
the OpenLineage spec.

Expected files headwater does not produce yet are listed in ``KNOWN_GAPS`` with
the reason; their tests are strict xfails, so one that starts passing fails
the suite until it is moved out of the list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.spec import validate_event
from tests.conformance.spark.matching import matches
from tests.conformance.spark.scenarios import SCENARIOS, Scenario
from tests.conformance.spark.scenarios_jdbc import PG_URL_VARIABLE
from tests.conformance.spark.scenarios_kafka import BOOTSTRAP_VARIABLE
from tests.conformance.spark.sessions import PROFILE_CONNECTORS
from tests.support.kafka_broker import start_broker
from tests.support.pgcluster import PgCluster
from tests.support.spark_packages import missing_connectors, needs_connectors

# A JVM per warehouse and session profile runs in the module fixture: far beyond the
# suite's default 600 s per test on a busy 2-core machine.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(3600)]

REPO = Path(__file__).resolve().parents[2]
EXPECTED = REPO / ".." / "shared" / "conformance" / "openlineage-spark" / "expected"

#: expected file -> why headwater's events do not match it (yet).
KNOWN_GAPS: dict[str, str] = {}


#: scenario -> the traceback of its job, when the job raised.
JOB_ERRORS: dict[str, str] = {}


def _file_name(name: str) -> str:
    return name.replace(" ", "_") + ".jsonl"


@pytest.fixture(scope="module")
def kafka_env() -> Iterator[dict[str, str]]:
    """One real broker for the Kafka scenarios' JVM, named to it in an environment variable."""
    with start_broker() as broker:
        yield {BOOTSTRAP_VARIABLE: broker.bootstrap}


@pytest.fixture(scope="module")
def pg_env(pg_cluster: PgCluster | None) -> dict[str, str]:
    """The PostgreSQL database ``test`` the JDBC scenarios read and write, named to their JVM."""
    if pg_cluster is None:
        pytest.fail("the JDBC scenarios need PostgreSQL's server binaries (apt-get install postgresql)")
    pg_cluster.create_database("test")
    return {PG_URL_VARIABLE: f"postgresql://postgres@127.0.0.1:{pg_cluster.port}/test"}


@pytest.fixture(scope="module")
def emitted(
    kafka_env: dict[str, str], pg_env: dict[str, str]
) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Run every scenario (one JVM per warehouse and session profile) and read back
    each one's events."""
    Path("/test_data").mkdir(exist_ok=True)
    Path("/test_data/data.txt").write_text("hello world\nhello headwater lineage\n")
    Path("/test_data/test_data.csv").write_text("5,6\n7,8\n")
    # Not tmp_path_factory: pytest prunes old base temp dirs, and other pytest
    # processes on the machine may do so while these long runs are writing.
    out = Path(tempfile.mkdtemp(prefix="hw-spark-conformance-"))
    groups: dict[tuple[str, str], list[Scenario]] = defaultdict(list)
    for scenario in SCENARIOS:
        groups[(scenario.warehouse, scenario.session)].append(scenario)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO), **kafka_env, **pg_env}
    for (warehouse, profile), scenarios in groups.items():
        if missing_connectors(*PROFILE_CONNECTORS[profile]):
            continue  # its tests are skipped, naming the missing build
        result = subprocess.run(
            [sys.executable, "-m", "tests.conformance.spark.run_jobs", str(out), warehouse, profile]
            + [s.name for s in scenarios],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, result.stderr[-4000:]
    events: dict[str, list[dict[str, Any]]] = {}
    for scenario in SCENARIOS:
        path = out / _file_name(scenario.name)
        error = path.with_suffix(".error")
        if error.exists():
            JOB_ERRORS[scenario.name] = error.read_text()
        lines = path.read_text().splitlines() if path.exists() else []
        events[scenario.name] = [json.loads(line) for line in lines if line.strip()]
    yield events
    shutil.rmtree(out, ignore_errors=True)


def _needs_profile(scenario: Scenario) -> pytest.MarkDecorator:
    return needs_connectors(*PROFILE_CONNECTORS[scenario.session])


def _cases() -> list[Any]:
    cases = []
    for scenario in SCENARIOS:
        for index, expected in enumerate(scenario.expected):
            marks = [_needs_profile(scenario)]
            if expected in KNOWN_GAPS:
                marks.append(pytest.mark.xfail(reason=KNOWN_GAPS[expected], strict=True))
            cases.append(pytest.param(scenario, index, id=f"{scenario.name}:{expected}", marks=marks))
    return cases


@pytest.mark.parametrize(("scenario", "index"), _cases())
def test_expected_event_is_emitted_in_order(
    emitted: dict[str, list[dict[str, Any]]], scenario: Scenario, index: int
) -> None:
    assert scenario.name not in JOB_ERRORS, JOB_ERRORS[scenario.name]
    events = emitted[scenario.name]
    assert events, f"no events for {scenario.name}"
    # The files before this one must match in order; this one must match at or after
    # the last of them. Two consecutive files may describe the same event (a CTAS's
    # COMPLETE, once with its schema and once with its column lineage): as subsets,
    # one event can satisfy both, and a run completes once.
    position = 0
    for earlier in scenario.expected[:index]:
        expected = json.loads((EXPECTED / f"{earlier}.json").read_text())
        found = next((i for i in range(position, len(events)) if matches(expected, events[i])), None)
        if found is not None:
            position = found
    expected = json.loads((EXPECTED / f"{scenario.expected[index]}.json").read_text())
    assert any(matches(expected, event) for event in events[position:]), (
        f"{scenario.expected[index]} not matched; emitted jobs: "
        + ", ".join(f"{e['eventType']} {e['job']['name']}" for e in events)
    )


@pytest.mark.parametrize(
    "scenario",
    [pytest.param(s, id=s.name, marks=[_needs_profile(s)]) for s in SCENARIOS],
)
def test_every_event_validates_against_the_spec(
    emitted: dict[str, list[dict[str, Any]]], scenario: Scenario
) -> None:
    assert scenario.name not in JOB_ERRORS, JOB_ERRORS[scenario.name]
    for event in emitted[scenario.name]:
        validate_event(event)
