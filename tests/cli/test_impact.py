"""``headwater impact`` against a database (both kinds) and against a server's API."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.retail_events import events
from tests.api.test_impact import _flag_orders_events
from tests.graph.retail import col, ds, job
from tests.store.builders import record
from tests.support.cli_server import serve_cli_from


@pytest.fixture
def loaded_db(db_url: str) -> str:
    store = Store.open(db_url, migrate=True)
    try:
        record(store, events() + _flag_orders_events())
    finally:
        store.close()
    return db_url


def _run(*args: str) -> str:
    # Wide enough that the table's path column is not wrapped.
    result = CliRunner(env={"COLUMNS": "400"}).invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_json_names_indirect_impact(loaded_db: str) -> None:
    output = _run("impact", col("silver.customers", "customer_id"), "--format", "json",
                  "--db", loaded_db)
    answer = json.loads(output)
    assert {n["id"]: n["impact"] for n in answer["nodes"]} == {
        col("gold.flagged", "order_id"): "indirect",
        col("gold.flagged", "amount"): "indirect",
        ds("gold.flagged"): "indirect",
        job("flag_orders"): "indirect",
    }
    assert answer["summary"]["indirect"] == 4


def test_table_shows_paths_and_summary(loaded_db: str) -> None:
    output = _run("impact", col("silver.orders", "amount"), "--depth", "2", "--db", loaded_db)
    assert f"{job('flag_orders')} [indirect:FILTER] > {col('gold.flagged', 'order_id')}" in output
    assert "4 datasets, 5 columns, 4 jobs: 12 direct, 1 indirect" in output


def test_csv_and_filters(loaded_db: str) -> None:
    output = _run("impact", col("silver.orders", "amount"), "--format", "csv", "--edges",
                  "direct", "--job", job("build_ltv"), "--db", loaded_db)
    rows = list(csv.DictReader(io.StringIO(output)))
    assert {r["id"] for r in rows} == {col("gold.ltv", "value"), ds("gold.ltv"), job("build_ltv")}


def test_max_nodes_and_as_of(loaded_db: str) -> None:
    output = _run("impact", col("silver.orders", "amount"), "--max-nodes", "2", "--db", loaded_db)
    assert "cut at 2 nodes" in output
    before = json.loads(_run("impact", col("silver.customers", "customer_id"), "--as-of",
                             "2026-03-02T23:00:00Z", "--format", "json", "--db", loaded_db))
    assert before["nodes"] == []


def test_errors_exit_1_with_the_reason(loaded_db: str) -> None:
    result = CliRunner().invoke(main, ["impact", ds("nope"), "--db", loaded_db])
    assert result.exit_code == 1
    assert "nope" in result.output
    result = CliRunner().invoke(main, ["impact", job("publish"), "--db", loaded_db])
    assert result.exit_code == 1
    assert "nodeId must be a dataset, datasetField node id" in result.output


def test_over_http_sends_the_api_parameters(
    loaded_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(loaded_db, migrate=False)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            serve_cli_from(monkeypatch, client, "http://headwater")
            args = ["impact", col("silver.orders", "amount"), "--url", "http://headwater",
                    "--namespace", "warehouse", "--edges", "indirect", "--format", "json"]
            answer = json.loads(_run(*args))
    finally:
        store.close()
    assert answer["edges"] == "indirect"
    assert {n["id"] for n in answer["nodes"]} == {
        col("gold.flagged", "order_id"), ds("gold.flagged"), job("flag_orders")
    }
