"""Marquez-compatible reads (/api/v1/...) on the retail events, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tests.api.retail_events import PRODUCER, SCHEMA_URL, run_id
from tests.graph.retail import NS, col, ds, job


def _get(client: TestClient, path: str, **params: Any) -> Any:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_namespaces(retail: TestClient) -> None:
    body = _get(retail, "/api/v1/namespaces")
    assert [n["name"] for n in body["namespaces"]] == [NS]
    assert body["totalCount"] == 1
    assert _get(retail, f"/api/v1/namespaces/{NS}")["name"] == NS
    assert _get(retail, "/api/v1/sources")["sources"][0]["name"] == NS


def test_datasets_list_with_paging(retail: TestClient) -> None:
    everything = _get(retail, f"/api/v1/namespaces/{NS}/datasets")
    names = [d["name"] for d in everything["datasets"]]
    assert names == sorted(
        [
            "gold.ltv",
            "gold.revenue",
            "raw.customers",
            "raw.orders",
            "raw.products",
            "report.dash",
            "silver.customers",
            "silver.orders",
        ]
    )
    assert everything["totalCount"] == 8
    second_page = _get(retail, f"/api/v1/namespaces/{NS}/datasets", limit=3, offset=3)
    assert [d["name"] for d in second_page["datasets"]] == names[3:6]
    assert second_page["totalCount"] == 8


def test_dataset_shape_and_versions(retail: TestClient) -> None:
    dataset = _get(retail, f"/api/v1/namespaces/{NS}/datasets/silver.orders")
    assert dataset["id"] == {"namespace": NS, "name": "silver.orders"}
    assert [f["name"] for f in dataset["fields"]] == ["amount", "order_id"]
    assert {entry["name"] for entry in dataset["columnLineage"]} == {"amount", "order_id"}
    versions = _get(retail, f"/api/v1/namespaces/{NS}/datasets/silver.orders/versions")
    assert versions["totalCount"] == 2
    newest, oldest = versions["versions"]
    assert newest["version"] == dataset["currentVersion"]
    assert newest["createdByRun"]["id"] == run_id("clean_orders", 2)
    assert oldest["createdByRun"]["id"] == run_id("clean_orders", 1)
    base = f"/api/v1/namespaces/{NS}/datasets/silver.orders/versions"
    one = _get(retail, f"{base}/{oldest['version']}")
    assert one["id"]["version"] == oldest["version"]


def test_jobs_versions_and_runs(retail: TestClient) -> None:
    body = _get(retail, f"/api/v1/namespaces/{NS}/jobs")
    assert body["totalCount"] == 5
    revenue = _get(retail, f"/api/v1/namespaces/{NS}/jobs/build_revenue")
    assert revenue["inputs"] == [
        {"namespace": NS, "name": "raw.products"},
        {"namespace": NS, "name": "silver.orders"},
    ]
    assert revenue["outputs"] == [{"namespace": NS, "name": "gold.revenue"}]
    assert revenue["latestRun"]["id"] == run_id("build_revenue", 2)
    assert revenue["latestRun"]["state"] == "COMPLETED"
    versions = _get(retail, f"/api/v1/namespaces/{NS}/jobs/build_revenue/versions")
    assert versions["totalCount"] == 2
    assert versions["versions"][0]["version"] == revenue["currentVersion"]
    assert versions["versions"][1]["inputs"] == [{"namespace": NS, "name": "silver.orders"}]
    runs = _get(retail, f"/api/v1/namespaces/{NS}/jobs/build_revenue/runs")
    newest_first = [run_id("build_revenue", 2), run_id("build_revenue", 1)]
    assert [r["id"] for r in runs["runs"]] == newest_first
    assert runs["totalCount"] == 2


def test_run_records_the_versions_it_read(retail: TestClient) -> None:
    run = _get(retail, f"/api/v1/jobs/runs/{run_id('build_revenue', 1)}")
    assert run["state"] == "COMPLETED"
    assert run["durationMs"] == 30 * 60 * 1000
    versions = _get(retail, f"/api/v1/namespaces/{NS}/datasets/silver.orders/versions")
    day_one_version = versions["versions"][1]["version"]
    assert [v["datasetVersionId"] for v in run["inputDatasetVersions"]] == [
        {"namespace": NS, "name": "silver.orders", "version": day_one_version}
    ]
    facets = _get(retail, f"/api/v1/jobs/runs/{run_id('build_revenue', 1)}/facets", type="run")
    assert facets["runId"] == run_id("build_revenue", 1)


def test_v1_lineage_is_marquez_shaped_and_directed(retail: TestClient) -> None:
    body = _get(retail, "/api/v1/lineage", nodeId=ds("gold.revenue"), depth=20)
    nodes = {n["id"]: n for n in body["graph"]}
    assert set(nodes) == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        ds("raw.products"),
        job("clean_orders"),
        ds("raw.orders"),
        job("publish"),
        ds("report.dash"),
    }
    revenue = nodes[ds("gold.revenue")]
    assert revenue["type"] == "DATASET"
    assert revenue["data"]["name"] == "gold.revenue"
    into = {"origin": job("build_revenue"), "destination": ds("gold.revenue")}
    assert revenue["inEdges"] == [into]
    assert revenue["outEdges"] == [{"origin": ds("gold.revenue"), "destination": job("publish")}]
    assert nodes[job("build_revenue")]["type"] == "JOB"
    assert nodes[job("build_revenue")]["data"]["latestRun"]["state"] == "COMPLETED"


def test_v1_column_lineage(retail: TestClient) -> None:
    upstream = _get(retail, "/api/v1/column-lineage", nodeId=col("silver.orders", "amount"))
    assert {n["id"] for n in upstream["graph"]} == {
        col("silver.orders", "amount"),
        col("raw.orders", "price"),
        col("raw.orders", "qty"),
    }
    node = next(n for n in upstream["graph"] if n["id"] == col("silver.orders", "amount"))
    assert node["type"] == "DATASET_FIELD"
    assert {(f["dataset"], f["field"]) for f in node["data"]["inputFields"]} == {
        ("raw.orders", "price"),
        ("raw.orders", "qty"),
    }
    amount = col("silver.orders", "amount")
    both = _get(retail, "/api/v1/column-lineage", nodeId=amount, withDownstream="true")
    assert {col("gold.revenue", "total"), col("gold.ltv", "value"), col("report.dash", "total")} < {
        n["id"] for n in both["graph"]
    }
    by_job = _get(retail, "/api/v1/column-lineage", nodeId=job("clean_orders"), depth=1)
    assert {n["id"] for n in by_job["graph"]} == {
        col("silver.orders", "amount"),
        col("silver.orders", "order_id"),
        col("raw.orders", "price"),
        col("raw.orders", "qty"),
        col("raw.orders", "id"),
    }


def test_names_with_slashes_are_addressed_percent_encoded(client: TestClient) -> None:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-01T10:00:00Z",
        "run": {"runId": "00000000-0000-4000-8000-00000000abcd"},
        "job": {"namespace": "spark", "name": "copy"},
        "inputs": [{"namespace": "s3://bucket", "name": "raw/orders"}],
        "outputs": [{"namespace": "file", "name": "/data/out/orders"}],
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }
    assert client.post("/api/v1/lineage", json=event).status_code < 300
    namespace, name = quote("s3://bucket", safe=""), quote("raw/orders", safe="")
    dataset = _get(client, f"/api/v1/namespaces/{namespace}/datasets/{name}")
    assert dataset["id"] == {"namespace": "s3://bucket", "name": "raw/orders"}
    out = _get(client, f"/api/v1/namespaces/file/datasets/{quote('/data/out/orders', safe='')}")
    assert out["name"] == "/data/out/orders"
    lineage = _get(client, "/api/v1/lineage", nodeId="dataset:s3://bucket:raw/orders")
    assert {n["id"] for n in lineage["graph"]} == {
        "dataset:s3://bucket:raw/orders",
        "job:spark:copy",
        "dataset:file:/data/out/orders",
    }


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces/nope",
        "/api/v1/namespaces/nope/datasets",
        f"/api/v1/namespaces/{NS}/datasets/nope",
        f"/api/v1/namespaces/{NS}/datasets/silver.orders/versions/"
        "00000000-0000-4000-8000-000000000000",
        f"/api/v1/namespaces/{NS}/jobs/nope",
        f"/api/v1/namespaces/{NS}/jobs/nope/runs",
        "/api/v1/jobs/runs/00000000-0000-4000-8000-999999999999",
        "/api/v1/sources/nope",
    ],
)
def test_unknown_ids_are_404_with_a_message(retail: TestClient, path: str) -> None:
    response = retail.get(path)
    assert response.status_code == 404, response.text
    assert "not found" in response.json()["error"]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/v1/namespaces?limit=-1", "query.limit"),
        ("/api/v1/namespaces?offset=abc", "query.offset"),
        ("/api/v1/jobs/runs/not-a-uuid", "path.id"),
        ("/api/v1/lineage?nodeId=run:00000000-0000-4000-8000-000000000000", "query.nodeId"),
        ("/api/v1/lineage?nodeId=dataset:x:y&depth=x", "query.depth"),
        ("/api/v1/column-lineage?nodeId=oops", "query.nodeId"),
    ],
)
def test_bad_parameters_are_400(client: TestClient, path: str, field: str) -> None:
    response = client.get(path)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_v1_column_lineage_pins_a_version(retail: TestClient) -> None:
    versions = retail.get("/api/v1/namespaces/warehouse/datasets/gold.revenue/versions").json()
    day_2, day_1 = [v["version"] for v in versions["versions"]]
    discount = "datasetField:warehouse:raw.products:discount"

    def ids(node_id: str) -> set[str]:
        response = retail.get("/api/v1/column-lineage", params={"nodeId": node_id})
        assert response.status_code == 200, response.text
        return {n["id"] for n in response.json()["graph"]}

    field = "datasetField:warehouse:gold.revenue:total"
    assert discount not in ids(f"{field}#{day_1}")
    assert discount in ids(f"{field}#{day_2}")
    assert discount not in ids(f"dataset:warehouse:gold.revenue#{day_1}")
    assert discount in ids(f"dataset:warehouse:gold.revenue#{day_2}")
    assert discount in ids(field)
    unknown = retail.get("/api/v1/column-lineage", params={"nodeId": f"{field}#nope"})
    assert unknown.status_code == 404, unknown.text
