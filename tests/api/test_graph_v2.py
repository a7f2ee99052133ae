"""GET /api/v2/lineage on the retail events, on SQLite and PostgreSQL.

Expected nodes and edges are listed by hand (see tests/graph/retail.py and
tests/api/retail_events.py for the graph and its two days of runs).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.retail_events import run_id
from tests.graph.retail import col, ds, job


def _v2(client: TestClient, node_id: str, **params: Any) -> dict[str, Any]:
    response = client.get("/api/v2/lineage", params={"nodeId": node_id, **params})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _nodes(body: dict[str, Any]) -> set[str]:
    return {n["id"] for n in body["nodes"]}


def _edges(body: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["upstream"], e["downstream"]) for e in body["edges"]}


def test_upstream_of_gold_revenue_now(retail: TestClient) -> None:
    body = _v2(retail, ds("gold.revenue"), direction="upstream", depth=10)
    assert not body["truncated"]
    assert _nodes(body) == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        ds("raw.products"),
        job("clean_orders"),
        ds("raw.orders"),
    }
    assert _edges(body) == {
        (job("build_revenue"), ds("gold.revenue")),
        (ds("silver.orders"), job("build_revenue")),
        (ds("raw.products"), job("build_revenue")),
        (job("clean_orders"), ds("silver.orders")),
        (ds("raw.orders"), job("clean_orders")),
    }


def test_as_of_day_one_uses_the_job_version_current_then(retail: TestClient) -> None:
    body = _v2(retail, ds("gold.revenue"), direction="upstream", asOf="2026-03-01T23:00:00Z")
    assert _nodes(body) == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        job("clean_orders"),
        ds("raw.orders"),
    }
    now = _v2(retail, job("build_revenue"), direction="upstream", depth=0)
    then = _v2(
        retail, job("build_revenue"), direction="upstream", depth=0, asOf="2026-03-01T23:00:00Z"
    )
    assert now["nodes"][0]["data"]["version"] != then["nodes"][0]["data"]["version"]
    assert then["asOf"] == "2026-03-01T23:00:00Z"


def test_before_anything_ran_there_is_no_lineage(retail: TestClient) -> None:
    body = _v2(retail, ds("gold.revenue"), direction="both", asOf="2026-02-01T00:00:00Z")
    assert _nodes(body) == {ds("gold.revenue")}
    assert body["edges"] == []


def test_downstream_is_directed_no_siblings(retail: TestClient) -> None:
    body = _v2(retail, ds("silver.orders"), direction="downstream")
    assert _nodes(body) == {
        ds("silver.orders"),
        job("build_revenue"),
        job("build_ltv"),
        ds("gold.revenue"),
        ds("gold.ltv"),
        job("publish"),
        ds("report.dash"),
    }
    assert ds("raw.products") not in _nodes(body)
    assert ds("silver.customers") not in _nodes(body)


def test_both_from_a_job(retail: TestClient) -> None:
    body = _v2(retail, job("build_ltv"), direction="both", depth=1)
    assert _edges(body) == {
        (ds("silver.orders"), job("build_ltv")),
        (ds("silver.customers"), job("build_ltv")),
        (job("build_ltv"), ds("gold.ltv")),
    }


def test_max_nodes_truncates_and_says_so(retail: TestClient) -> None:
    body = _v2(retail, ds("gold.revenue"), direction="upstream", maxNodes=3)
    assert body["truncated"] is True
    assert len(body["nodes"]) == 3
    for upstream, downstream in _edges(body):
        assert {upstream, downstream} <= _nodes(body)
    # The nodes whose neighbours were cut are named, and asking for one reaches past the cut.
    assert body["truncatedNodes"]
    assert set(body["truncatedNodes"]) <= _nodes(body)
    further = _v2(retail, body["truncatedNodes"][0], direction="upstream", depth=1)
    assert _nodes(further) - _nodes(body)
    whole = _v2(retail, ds("gold.revenue"), direction="upstream")
    assert whole["truncated"] is False
    assert whole["truncatedNodes"] == []


def test_column_lineage_crosses_jobs_with_transformations(retail: TestClient) -> None:
    body = _v2(retail, col("gold.revenue", "total"), direction="upstream")
    got = {
        (e["upstream"], e["downstream"], e["via"], e["transformations"][0]["subtype"])
        for e in body["edges"]
    }
    total, amount = col("gold.revenue", "total"), col("silver.orders", "amount")
    revenue, clean = job("build_revenue"), job("clean_orders")
    assert got == {
        (amount, total, revenue, "AGGREGATION"),
        (col("raw.products", "discount"), total, revenue, "TRANSFORMATION"),
        (col("raw.orders", "price"), amount, clean, "TRANSFORMATION"),
        (col("raw.orders", "qty"), amount, clean, "TRANSFORMATION"),
    }
    types = {n["id"]: n["data"]["type"] for n in body["nodes"]}
    assert types[col("gold.revenue", "total")] == "string"


def test_run_lineage_names_the_run_that_produced_what_a_run_read(retail: TestClient) -> None:
    reader = run_id("build_revenue", 2)
    body = _v2(retail, f"run:{reader}", direction="upstream", depth=2)
    producers = {n["id"] for n in body["nodes"] if n["type"] == "RUN"} - {f"run:{reader}"}
    # Day 2's build_revenue read the silver.orders version written by day 2's clean_orders,
    # not day 1's.
    assert producers == {f"run:{run_id('clean_orders', 2)}"}
    version_nodes = [n for n in body["nodes"] if n["id"].startswith(ds("silver.orders") + "#")]
    assert len(version_nodes) == 1
    version_node = version_nodes[0]["id"]
    assert (version_node, f"run:{reader}") in _edges(body)
    assert (f"run:{run_id('clean_orders', 2)}", version_node) in _edges(body)

    downstream = _v2(retail, version_node, direction="downstream", depth=1)
    assert _edges(downstream) == {
        (version_node, f"run:{reader}"),
        (version_node, f"run:{run_id('build_ltv', 2)}"),
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"nodeId": "table:warehouse:x"}, "query.nodeId"),
        ({"nodeId": ds("gold.revenue"), "direction": "sideways"}, "query.direction"),
        ({"nodeId": ds("gold.revenue"), "depth": "-1"}, "query.depth"),
        ({"nodeId": ds("gold.revenue"), "maxNodes": "0"}, "query.maxNodes"),
        ({"nodeId": ds("gold.revenue"), "asOf": "yesterday"}, "query.asOf"),
        ({}, "query.nodeId"),
    ],
)
def test_bad_parameters_are_400_naming_the_field(
    client: TestClient, params: dict[str, str], field: str
) -> None:
    response = client.get("/api/v2/lineage", params=params)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


@pytest.mark.parametrize(
    "node_id",
    [
        ds("nope"),
        job("nope"),
        "run:00000000-0000-4000-8000-999999999999",
        col("gold.revenue", "nope"),
    ],
)
def test_unknown_nodes_are_404(retail: TestClient, node_id: str) -> None:
    response = retail.get("/api/v2/lineage", params={"nodeId": node_id})
    assert response.status_code == 404, response.text
    assert "not found" in response.json()["error"]


def _revenue_versions(client: TestClient) -> tuple[str, str]:
    """(day 1, day 2) versions of gold.revenue."""
    body = client.get("/api/v1/namespaces/warehouse/datasets/gold.revenue/versions").json()
    newest, oldest = [v["version"] for v in body["versions"]]
    return oldest, newest


def test_column_lineage_as_of_a_pinned_version(retail: TestClient) -> None:
    day_1, day_2 = _revenue_versions(retail)
    total, discount = col("gold.revenue", "total"), col("raw.products", "discount")
    then = _v2(retail, f"{total}#{day_1}", direction="upstream")
    assert then["nodeId"] == total
    assert then["asOf"] == "2026-03-01T12:30:00Z"
    assert discount not in _nodes(then)
    assert col("raw.orders", "price") in _nodes(then)
    now = _v2(retail, f"{total}#{day_2}", direction="upstream")
    assert discount in _nodes(now)
    missing = retail.get("/api/v2/lineage", params={"nodeId": f"{total}#nope"})
    assert missing.status_code == 404, missing.text
