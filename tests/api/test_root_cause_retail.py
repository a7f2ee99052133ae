"""Root cause on a realistic pipeline: the retail sample's three nights (the events the
agent emits for a bronze -> silver -> gold medallion pipeline), where night 2's
customer-lifetime-value run fails and is retried, and night 3 adds a column to
silver/orders. Both databases."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.samples.retail import retail_events
from headwater.server.app import create_app
from headwater.store import Store

WINDOW = {"since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00Z"}
ROOT = "/warehouse/retail"


def ds(path: str) -> str:
    return f"dataset:file:{ROOT}/{path}"


def job(name: str) -> str:
    return f"job:retail:{name}"


@pytest.fixture
def client(db_url: str) -> Any:
    store = Store.open(db_url, migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as test_client:
            posted = test_client.post("/api/v1/lineage/batch", json=retail_events())
            assert posted.status_code < 300, posted.text
            yield test_client
    finally:
        store.close()


def _causes(client: TestClient, dataset: str) -> list[tuple[str, str, int, list[str]]]:
    response = client.get(f"/api/v2/datasets/{quote(dataset, safe='')}/root-cause", params=WINDOW)
    assert response.status_code == 200, response.text
    return [(c["kind"], c["subject"], c["depth"], c["path"]) for c in response.json()["causes"]]


def test_customer_ltv_its_failed_run_then_the_silver_drift(client: TestClient) -> None:
    assert _causes(client, ds("gold/customer_ltv")) == [
        (
            "failedRun",
            job("gold.customer_lifetime_value"),
            1,
            [job("gold.customer_lifetime_value"), ds("gold/customer_ltv")],
        ),
        (
            "versionDrift",
            ds("silver/orders"),
            1,
            [ds("silver/orders"), job("gold.customer_lifetime_value"), ds("gold/customer_ltv")],
        ),
    ]


def test_daily_revenue_sees_the_drift_two_jobs_up_and_not_a_siblings_failure(
    client: TestClient,
) -> None:
    assert _causes(client, ds("gold/daily_revenue")) == [
        (
            "versionDrift",
            ds("silver/orders"),
            2,
            [
                ds("silver/orders"),
                job("silver.build_order_lines"),
                ds("silver/order_lines"),
                job("gold.daily_revenue"),
                ds("gold/daily_revenue"),
            ],
        )
    ]
