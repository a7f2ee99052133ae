"""The lineage model, its questions and their failure messages, on hand-built events."""

from __future__ import annotations

import pytest

from headwater.testing import LineageAssertionError, lineage_from_events, to_snapshot
from tests.testing.events_builder import revenue_job

ROOT = "/data/lake"


@pytest.fixture
def lineage():
    return lineage_from_events(revenue_job(ROOT), root=ROOT)


def test_events_fold_into_one_action_run_under_the_application(lineage) -> None:
    [run] = lineage.runs
    assert run.state == "COMPLETE"
    assert run.job == "app.adaptive_spark_plan.gold_revenue"
    assert lineage.application == "app"
    assert lineage.spark_version == "4.1.1"
    assert [d.label for d in lineage.inputs] == ["silver/orders", "silver/customers"]
    [output] = lineage.outputs
    assert output.dataset.label == "gold/revenue"
    assert output.columns == ("country", "total", "orders")


def test_questions_read_like_the_question(lineage) -> None:
    total = lineage.output("gold.revenue").column("total")
    assert total.comes_from("silver.orders.amount", via="AGGREGATION")
    assert total.comes_from("orders.amount", via="DIRECT")
    assert total.comes_from(f"{ROOT}/silver/orders.amount")
    assert total.does_not_come_from("customers.country")
    assert (
        lineage.output("revenue")
        .column("country")
        .comes_from("customers.country", via="DIRECT/IDENTITY")
    )
    assert lineage.reads("silver.customers") and lineage.writes("gold/revenue")
    assert lineage.output("revenue").reads("orders")
    assert [e.via for e in lineage.output("revenue").dataset_edges] == ["INDIRECT/JOIN"]


def test_a_wrong_source_names_the_nearest_candidates(lineage) -> None:
    column = lineage.output("gold.revenue").column("total")
    with pytest.raises(LineageAssertionError) as caught:
        column.comes_from("orders.amout", via="AGGREGATION")
    message = str(caught.value)
    assert "does not come from orders.amout via AGGREGATION" in message
    assert "silver/orders.amount DIRECT/AGGREGATION" in message
    assert "nearest: silver/orders.amount" in message


def test_a_wrong_transformation_says_which_one_there_is(lineage) -> None:
    with pytest.raises(
        LineageAssertionError, match="only via DIRECT/AGGREGATION, not via IDENTITY"
    ):
        lineage.output("revenue").column("total").comes_from("orders.amount", via="IDENTITY")


def test_missing_outputs_columns_and_inputs_name_the_nearest(lineage) -> None:
    with pytest.raises(
        LineageAssertionError, match="no output 'gold.revenu'\n  nearest: gold/revenue"
    ):
        lineage.output("gold.revenu")
    with pytest.raises(LineageAssertionError, match="no column 'totl' .*\n  nearest: total"):
        lineage.output("revenue").column("totl")
    with pytest.raises(LineageAssertionError, match="nearest: silver/customers"):
        lineage.reads("silver.customer")
    with pytest.raises(LineageAssertionError, match="comes from silver/orders.amount"):
        lineage.output("revenue").column("total").does_not_come_from("orders.amount")


def test_the_snapshot_is_stable_sorted_and_free_of_volatile_facts(lineage) -> None:
    snapshot = to_snapshot(lineage)
    text = repr(snapshot)
    for volatile in ("0190", "2026-", "volatile text", ROOT):
        assert volatile not in text
    [run] = snapshot["runs"]
    assert list(run["inputs"]) == ["silver/customers", "silver/orders"]
    output = run["outputs"]["gold/revenue"]
    assert output["schema"] == ["country string", "total decimal(22,2)", "orders long"]
    assert output["columns"]["orders"] == ["silver/orders.order_id DIRECT/AGGREGATION masked"]
    assert output["dataset"] == ["silver/orders.cid INDIRECT/JOIN"]
    # The same events in another order give the same snapshot.
    shuffled = lineage_from_events(list(reversed(revenue_job(ROOT))), root=ROOT)
    assert to_snapshot(shuffled) == snapshot


def test_paths_outside_every_root_stay_absolute_and_labelled_roots_prefix() -> None:
    lineage = lineage_from_events(revenue_job(ROOT), root={"lake": f"{ROOT}/silver"})
    assert sorted(d.label for d in lineage.inputs) == ["lake/customers", "lake/orders"]
    assert lineage.outputs[0].dataset.label == f"{ROOT}/gold/revenue"
