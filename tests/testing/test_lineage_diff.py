"""The lineage diff between two snapshots: what each kind of change reads like."""

from __future__ import annotations

from headwater.testing import diff_snapshots, lineage_from_events, to_snapshot
from tests.testing.events_builder import revenue_job

ROOT = "/data/lake"


def _snapshot(**changes):
    return to_snapshot(lineage_from_events(revenue_job(ROOT, **changes), root=ROOT))


def test_the_same_lineage_has_no_difference() -> None:
    difference = diff_snapshots(
        _snapshot(), _snapshot(run_id="01900000-0000-7000-8000-0000000000ff")
    )
    assert not difference
    assert difference.render() == "lineage is the same"


def test_a_dropped_input_shows_the_input_column_edges_and_schema_it_took() -> None:
    difference = diff_snapshots(_snapshot(), _snapshot(drop_customers=True))
    assert difference.counts() == {"-": 4, "+": 0, "~": 0}
    assert difference.render("snapshot", "this run") == "\n".join(
        [
            "lineage differs (- snapshot, + this run, ~ changed):",
            "  job app.adaptive_spark_plan.gold_revenue",
            "    - input silver/customers",
            "    output gold/revenue",
            "      - schema country string",
            "      - column country <- silver/customers.country DIRECT/IDENTITY",
            "      - dataset <- silver/orders.cid INDIRECT/JOIN",
        ]
    )


def test_a_type_change_and_a_reorder_are_changes() -> None:
    difference = diff_snapshots(_snapshot(), _snapshot(total_type="double"))
    assert [c.line() for c in difference.changes] == ["~ schema total decimal(22,2) -> double"]
    old = _snapshot()
    new = _snapshot()
    schema = new["runs"][0]["outputs"]["gold/revenue"]["schema"]
    schema.reverse()
    [change] = diff_snapshots(old, new).changes
    assert change.text == "column order country, total, orders -> orders, total, country"


def test_added_and_removed_runs_list_their_datasets() -> None:
    old = _snapshot()
    new = {"application": "app", "runs": []}
    lines = [c.line() for c in diff_snapshots(old, new).changes]
    assert lines == [
        "- run (the job no longer runs)",
        "- input silver/customers",
        "- input silver/orders",
        "- output gold/revenue",
    ]
    lines = [c.line() for c in diff_snapshots(new, old).changes]
    assert lines[0] == "+ run (a new job)"
