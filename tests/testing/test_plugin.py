"""The pytest plugin as a user meets it: loaded by its entry point, snapshots written with
``--lineage-update``, a changed lineage failing with its diff. No Spark: the inner
tests fold recorded events, so these runs take a second or two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.events_builder import revenue_job

pytest_plugins = ["pytester"]

INNER_TEST = """
import json, os

from headwater.testing import lineage_from_events


def test_revenue(lineage_snapshot):
    events = json.loads(open(os.environ["LINEAGE_EVENTS"]).read())
    lineage_snapshot(lineage_from_events(events, root="/data/lake"), "revenue")
"""


@pytest.fixture
def events_file(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = pytester.path / "events.json"
    path.write_text(json.dumps(revenue_job("/data/lake")))
    monkeypatch.setenv("LINEAGE_EVENTS", str(path))
    pytester.makepyfile(test_revenue=INNER_TEST)
    return path


def test_the_plugin_loads_by_entry_point_without_importing_spark(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys

        def test_loaded(pytestconfig):
            assert pytestconfig.pluginmanager.has_plugin("headwater")
            heavy = [m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j", "yaml")]
            assert heavy == []
            assert "headwater.agent" not in sys.modules

        def test_fixtures_are_there(lineage_capture, lineage_snapshot):
            assert lineage_snapshot.directory.name == "lineage_snapshots"
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_a_missing_snapshot_fails_until_update_writes_it(
    pytester: pytest.Pytester, events_file: Path
) -> None:
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no lineage snapshot */lineage_snapshots/revenue.lineage.yaml",
            "*run pytest --lineage-update to write it",
        ]
    )
    result = pytester.runpytest("--lineage-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 lineage snapshot(s) written*"])
    written = pytester.path / "lineage_snapshots" / "revenue.lineage.yaml"
    assert "- silver/orders.amount DIRECT/AGGREGATION" in written.read_text()
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_changed_lineage_fails_with_its_diff_and_update_accepts_it(
    pytester: pytest.Pytester, events_file: Path
) -> None:
    pytester.runpytest("--lineage-update").assert_outcomes(passed=1)
    events_file.write_text(json.dumps(revenue_job("/data/lake", drop_customers=True)))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*lineage of revenue on Spark 4.1.1 differs from */revenue.lineage.yaml:",
            "*lineage differs (- snapshot, + this run, ~ changed):",
            "*  job app.adaptive_spark_plan.gold_revenue",
            "*    - input silver/customers",
            "*    output gold/revenue",
            "*      - schema country string",
            "*      - column country <- silver/customers.country DIRECT/IDENTITY",
            "*      - dataset <- silver/orders.cid INDIRECT/JOIN",
            "*run pytest --lineage-update to accept the change (--lineage-update-line to keep it "
            "for Spark 4.1 only)",
        ]
    )
    pytester.runpytest("--lineage-update").assert_outcomes(passed=1)
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_line_of_its_own_wins_on_that_line(pytester: pytest.Pytester, events_file: Path) -> None:
    pytester.runpytest("--lineage-update").assert_outcomes(passed=1)
    generic = pytester.path / "lineage_snapshots" / "revenue.lineage.yaml"
    kept = generic.read_text()
    events_file.write_text(json.dumps(revenue_job("/data/lake", total_type="double")))
    pytester.runpytest("--lineage-update-line").assert_outcomes(passed=1)
    own = pytester.path / "lineage_snapshots" / "revenue.spark4.1.lineage.yaml"
    assert "- total double" in own.read_text()
    assert generic.read_text() == kept
    pytester.runpytest().assert_outcomes(passed=1)


def test_the_snapshot_directory_and_root_come_from_the_ini(
    pytester: pytest.Pytester, events_file: Path
) -> None:
    pytester.makeini("[pytest]\nlineage_snapshot_dir = snapshots/lineage\n")
    pytester.runpytest("--lineage-update").assert_outcomes(passed=1)
    assert (pytester.path / "snapshots" / "lineage" / "revenue.lineage.yaml").exists()
