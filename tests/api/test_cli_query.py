"""``headwater lineage`` and ``headwater search`` straight against a database (both kinds)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.store import Store
from tests.api.retail_events import events
from tests.graph.retail import col, ds, job
from tests.store.builders import record


@pytest.fixture
def loaded_db(db_url: str) -> str:
    store = Store.open(db_url, migrate=True)
    try:
        record(store, events())
    finally:
        store.close()
    return db_url


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_lineage_json_upstream(loaded_db: str) -> None:
    answer = json.loads(
        _run("lineage", ds("gold.revenue"), "--upstream", "--depth", "2", "--format", "json",
             "--db", loaded_db)
    )
    assert {n["id"] for n in answer["nodes"]} == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        ds("raw.products"),
    }
    assert answer["direction"] == "upstream"


def test_lineage_as_of_and_table(loaded_db: str) -> None:
    output = _run("lineage", ds("gold.revenue"), "--upstream", "--as-of", "2026-03-01T23:00:00Z",
                  "--db", loaded_db)
    assert "dataset:warehouse:silver.orders" in output
    assert "raw.products" not in output
    assert "5 nodes, 4 edges" in output


def test_lineage_dot_shows_column_transformations(loaded_db: str) -> None:
    output = _run("lineage", col("gold.revenue", "total"), "--upstream", "--format", "dot",
                  "--db", loaded_db)
    assert output.startswith("digraph lineage {")
    assert (
        f'"{col("silver.orders", "amount")}" -> "{col("gold.revenue", "total")}" '
        f'[label="via {job("build_revenue")} AGGREGATION"];'
    ) in output


def test_search(loaded_db: str) -> None:
    output = _run("search", "orders", "--db", loaded_db)
    assert output.splitlines() == [
        job("clean_orders"),
        ds("raw.orders"),
        ds("silver.orders"),
    ]
    only = _run("search", "orders", "--type", "dataset", "--limit", "1", "--db", loaded_db)
    assert only.splitlines()[0] == ds("raw.orders")


def test_unknown_node_is_a_clear_error(loaded_db: str) -> None:
    result = CliRunner().invoke(main, ["lineage", ds("nope"), "--db", loaded_db])
    assert result.exit_code == 1
    assert "not found" in result.output


def test_unreachable_server_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["search", "x", "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 1
    assert "cannot reach http://127.0.0.1:9" in result.output
