"""GET /api/v2/impact on the retail events plus one filtering job, on SQLite and PostgreSQL.

The retail events (tests/api/retail_events.py) hold only DIRECT column edges. On a
third day ``flag_orders`` reads ``silver.orders`` and ``silver.customers`` and writes
``gold.flagged`` (order_id, amount)::

    silver.orders.order_id ─DIRECT IDENTITY─▶ gold.flagged.order_id
    silver.orders.amount   ─INDIRECT FILTER─▶ gold.flagged.order_id
    silver.orders.amount   ─DIRECT IDENTITY─▶ gold.flagged.amount
    silver.customers.customer_id ─INDIRECT JOIN─▶ gold.flagged (a dataset-level entry)

``silver.customers.customer_id`` feeds no column edge of the retail graph: a walk of
DIRECT edges reaches nothing from it, the impact walk reaches all of ``gold.flagged``.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.retail_events import PRODUCER, SCHEMA_URL
from tests.graph.retail import NS, col, ds, job

DAY_3 = "2026-03-03"
FLAG_RUN = "00000000-0000-4000-8000-000300000001"


def _facet(kind: str, **body: Any) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-1/{kind}.json",
        **body,
    }


def _source(name: str, field: str, kind: str, subtype: str) -> dict[str, Any]:
    return {
        "namespace": NS, "name": name, "field": field,
        "transformations": [{"type": kind, "subtype": subtype}],
    }


def _flag_orders_events() -> list[dict[str, Any]]:
    lineage = _facet(
        "ColumnLineageDatasetFacet",
        fields={
            "order_id": {"inputFields": [
                _source("silver.orders", "order_id", "DIRECT", "IDENTITY"),
                _source("silver.orders", "amount", "INDIRECT", "FILTER"),
            ]},
            "amount": {"inputFields": [_source("silver.orders", "amount", "DIRECT", "IDENTITY")]},
        },
        dataset=[_source("silver.customers", "customer_id", "INDIRECT", "JOIN")],
    )
    schema = _facet(
        "SchemaDatasetFacet",
        fields=[{"name": "order_id", "type": "string"}, {"name": "amount", "type": "string"}],
    )
    base = {
        "run": {"runId": FLAG_RUN, "facets": {}},
        "job": {"namespace": NS, "name": "flag_orders", "facets": {}},
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "inputs": [{"namespace": NS, "name": "silver.orders"},
                   {"namespace": NS, "name": "silver.customers"}],
    }
    output = {"namespace": NS, "name": "gold.flagged",
              "facets": {"schema": schema, "columnLineage": lineage}}
    return [
        {**base, "eventType": "START", "eventTime": f"{DAY_3}T10:00:00Z",
         "outputs": [{"namespace": NS, "name": "gold.flagged"}]},
        {**base, "eventType": "COMPLETE", "eventTime": f"{DAY_3}T10:30:00Z", "outputs": [output]},
    ]


@pytest.fixture
def flagged(retail: TestClient) -> TestClient:
    response = retail.post("/api/v1/lineage/batch", json=_flag_orders_events())
    assert response.status_code < 300, response.text
    return retail


def _impact(client: TestClient, node_id: str, **params: Any) -> dict[str, Any]:
    response = client.get("/api/v2/impact", params={"nodeId": node_id, **params})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _reached(body: dict[str, Any]) -> dict[str, tuple[int, str]]:
    return {n["id"]: (n["depth"], n["impact"]) for n in body["nodes"]}


def test_a_join_column_reaches_only_indirectly(flagged: TestClient) -> None:
    body = _impact(flagged, col("silver.customers", "customer_id"))
    assert _reached(body) == {
        col("gold.flagged", "order_id"): (1, "indirect"),
        col("gold.flagged", "amount"): (1, "indirect"),
        ds("gold.flagged"): (1, "indirect"),
        job("flag_orders"): (1, "indirect"),
    }
    assert body["summary"] == {"datasets": 1, "columns": 2, "jobs": 1, "direct": 0, "indirect": 4}
    assert not body["truncated"]
    amount = next(n for n in body["nodes"] if n["id"] == col("gold.flagged", "amount"))
    assert amount["path"] == [
        col("silver.customers", "customer_id"), job("flag_orders"), col("gold.flagged", "amount")
    ]
    assert amount["pathEdges"] == ["indirect:JOIN"]
    # Following DIRECT edges only (what a column-lineage walk does), nothing breaks.
    assert _impact(flagged, col("silver.customers", "customer_id"), edges="direct")["nodes"] == []


def test_a_column_reaches_direct_and_filter_dependants(flagged: TestClient) -> None:
    body = _impact(flagged, col("silver.orders", "amount"))
    assert _reached(body) == {
        col("gold.revenue", "total"): (1, "direct"),
        col("gold.ltv", "value"): (1, "direct"),
        col("gold.flagged", "amount"): (1, "direct"),
        col("gold.flagged", "order_id"): (1, "indirect"),
        col("report.dash", "total"): (2, "direct"),
        ds("gold.revenue"): (1, "direct"),
        ds("gold.ltv"): (1, "direct"),
        ds("gold.flagged"): (1, "direct"),
        ds("report.dash"): (2, "direct"),
        job("build_revenue"): (1, "direct"),
        job("build_ltv"): (1, "direct"),
        job("flag_orders"): (1, "direct"),
        job("publish"): (2, "direct"),
    }
    report = next(n for n in body["nodes"] if n["id"] == col("report.dash", "total"))
    assert report["path"] == [
        col("silver.orders", "amount"), job("build_revenue"), col("gold.revenue", "total"),
        job("publish"), col("report.dash", "total"),
    ]
    assert report["pathEdges"] == ["direct:AGGREGATION", "direct:IDENTITY"]
    order_id = next(n for n in body["nodes"] if n["id"] == col("gold.flagged", "order_id"))
    assert order_id["pathEdges"] == ["indirect:FILTER"]
    assert body["summary"] == {
        "datasets": 4, "columns": 5, "jobs": 4, "direct": 12, "indirect": 1
    }
    only_indirect = _impact(flagged, col("silver.orders", "amount"), edges="indirect")
    assert _reached(only_indirect) == {
        col("gold.flagged", "order_id"): (1, "indirect"),
        ds("gold.flagged"): (1, "indirect"),
        job("flag_orders"): (1, "indirect"),
    }


def test_depth_and_filters(flagged: TestClient) -> None:
    shallow = _reached(_impact(flagged, col("silver.orders", "amount"), depth=1))
    assert col("report.dash", "total") not in shallow
    assert col("gold.revenue", "total") in shallow
    through = _impact(flagged, col("silver.orders", "amount"), job=job("build_ltv"))
    assert set(_reached(through)) == {col("gold.ltv", "value"), ds("gold.ltv"), job("build_ltv")}
    elsewhere = _impact(flagged, col("silver.orders", "amount"), namespace="elsewhere")
    assert elsewhere["nodes"] == []
    assert _impact(flagged, col("silver.orders", "amount"), namespace=NS)["summary"]["columns"] == 5


def test_max_nodes_truncates(flagged: TestClient) -> None:
    body = _impact(flagged, col("silver.orders", "amount"), maxNodes=3)
    assert body["truncated"] is True
    assert 0 < len(body["nodes"]) <= 3
    assert body["maxNodes"] == 3


def test_a_dataset_start_adds_table_lineage(flagged: TestClient) -> None:
    body = _impact(flagged, ds("silver.customers"))
    # build_ltv reports no column edge from silver.customers: table lineage finds it.
    assert _reached(body) == {
        job("build_ltv"): (1, "direct"),
        ds("gold.ltv"): (1, "direct"),
        job("flag_orders"): (1, "indirect"),
        ds("gold.flagged"): (1, "indirect"),
        col("gold.flagged", "order_id"): (1, "indirect"),
        col("gold.flagged", "amount"): (1, "indirect"),
    }
    ltv = next(n for n in body["nodes"] if n["id"] == ds("gold.ltv"))
    assert ltv["path"] == [ds("silver.customers"), job("build_ltv"), ds("gold.ltv")]


def test_as_of_leaves_out_later_edges(flagged: TestClient) -> None:
    before = _impact(flagged, col("silver.customers", "customer_id"), asOf="2026-03-02T23:00:00Z")
    assert before["nodes"] == []
    assert before["asOf"].startswith("2026-03-02T23:00:00")


def test_csv_has_one_row_per_impacted_node(flagged: TestClient) -> None:
    response = flagged.get(
        "/api/v2/impact",
        params={"nodeId": col("silver.customers", "customer_id"), "format": "csv"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 4
    amount = next(r for r in rows if r["id"] == col("gold.flagged", "amount"))
    assert amount == {
        "id": col("gold.flagged", "amount"), "type": "DATASET_FIELD", "depth": "1",
        "impact": "indirect",
        "path": " > ".join([col("silver.customers", "customer_id"), job("flag_orders"),
                            col("gold.flagged", "amount")]),
        "pathEdges": "indirect:JOIN",
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"nodeId": "job:warehouse:publish"}, "query.nodeId"),
        ({"nodeId": "nonsense"}, "query.nodeId"),
        ({"depth": "101"}, "query.depth"),
        ({"depth": "-1"}, "query.depth"),
        ({"edges": "some"}, "query.edges"),
        ({"maxNodes": "0"}, "query.maxNodes"),
        ({"maxNodes": "100001"}, "query.maxNodes"),
        ({"asOf": "yesterday"}, "query.asOf"),
        ({"job": "build_ltv"}, "query.job"),
        ({"format": "xml"}, "query.format"),
        ({"namespace": "a\0b"}, "query.namespace"),
    ],
)
def test_bad_parameters_are_400_naming_them(
    retail: TestClient, params: dict[str, str], field: str
) -> None:
    response = retail.get(
        "/api/v2/impact", params={"nodeId": col("silver.orders", "amount"), **params}
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_unknown_start_is_404(retail: TestClient) -> None:
    response = retail.get("/api/v2/impact", params={"nodeId": ds("nowhere")})
    assert response.status_code == 404
    assert "nowhere" in response.json()["error"]


def test_a_pinned_version_answers_as_of_its_time(flagged: TestClient) -> None:
    versions = flagged.get(f"/api/v1/namespaces/{NS}/datasets/silver.customers/versions").json()
    # The day-1 version of silver.customers: the flag_orders edges came two days later.
    day_1 = min(versions["versions"], key=lambda v: v["createdAt"])["version"]
    node = col("silver.customers", "customer_id")
    body = _impact(flagged, f"{node}#{day_1}")
    assert body["nodes"] == []
    assert body["asOf"] is not None
    missing = flagged.get("/api/v2/impact", params={"nodeId": f"{node}#nope"})
    assert missing.status_code == 404
