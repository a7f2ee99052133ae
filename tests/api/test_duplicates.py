"""``GET /api/v2/duplicates`` and ``headwater duplicates``, on both databases, over
column lineage sent as producers send it (field entries and dataset-level ones)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from tests.store.builders import dataset, facet, run_event

ORDERS = ("wh", "orders")


def _input(field: str, kind: str, subtype: str) -> dict[str, Any]:
    return {
        "namespace": ORDERS[0],
        "name": ORDERS[1],
        "field": field,
        "transformations": [{"type": kind, "subtype": subtype}],
    }


def _revenue(customer: str, total: str, filter_on: str, dataset_level: bool) -> dict[str, Any]:
    """Revenue per customer filtered on ``filter_on``; the filter and grouping sent per
    field, or (``dataset_level``) once for the whole dataset."""
    rows = [_input("customer", "INDIRECT", "GROUP_BY"), _input(filter_on, "INDIRECT", "FILTER")]
    fields = {
        customer: [_input("customer", "DIRECT", "IDENTITY")],
        total: [_input("amount", "DIRECT", "AGGREGATION")],
    }
    body: dict[str, Any] = {
        "fields": {
            name: {"inputFields": inputs + ([] if dataset_level else rows)}
            for name, inputs in fields.items()
        }
    }
    if dataset_level:
        body["dataset"] = rows
    return facet(**body)


def _job(n: int, namespace: str, job: str, out: str, lineage: dict[str, Any]) -> dict[str, Any]:
    target = dataset(namespace, out, [("c", "string")], columnLineage=lineage)
    return run_event(
        "COMPLETE",
        f"2026-03-01T00:00:0{n}Z",
        f"00000000-0000-4000-9000-{n:012d}",
        job=job,
        namespace=namespace,
        inputs=[dataset(*ORDERS)],
        outputs=[target],
    )


HISTORY = [
    _job(1, "wh", "sql_revenue", "revenue_sql", _revenue("customer", "total", "status", False)),
    # The same computation by another team, its columns renamed, its filter sent once.
    _job(2, "team2", "df_revenue", "revenue_df", _revenue("cust", "revenue", "status", True)),
    # The same columns over other rows.
    _job(3, "wh", "eu_revenue", "revenue_eu", _revenue("customer", "total", "region", False)),
    # Shares nothing.
    _job(
        4,
        "wh",
        "ids",
        "order_ids",
        facet(fields={"id": {"inputFields": [_input("id", "DIRECT", "IDENTITY")]}}),
    ),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _summary(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            p["relation"],
            [j["job"] for j in p["jobs"]],
            [(j["sameColumns"], j["sameValues"], j["columns"]) for j in p["jobs"]],
        )
        for p in body["duplicates"]
    ]


SQL, DF, EU = "job:wh:sql_revenue", "job:team2:df_revenue", "job:wh:eu_revenue"


def test_equal_and_partial_pairs(client: TestClient) -> None:
    response = client.get("/api/v2/duplicates")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["totalCount"] == 3
    assert _summary(body) == [
        ("equal", [DF, SQL], [(2, 2, 2), (2, 2, 2)]),
        ("partial", [DF, EU], [(0, 2, 2), (0, 2, 2)]),
        ("partial", [EU, SQL], [(0, 2, 2), (0, 2, 2)]),
    ]
    equal = body["duplicates"][0]
    assert equal["score"] == 1.0 and equal["jobs"][0]["share"] == 1.0
    assert equal["jobs"][0]["matches"] == [
        {
            "column": "dataset:team2:revenue_df:cust",
            "other": "dataset:wh:revenue_sql:customer",
            "match": "exact",
        },
        {
            "column": "dataset:team2:revenue_df:revenue",
            "other": "dataset:wh:revenue_sql:total",
            "match": "exact",
        },
    ]
    assert body["duplicates"][1]["jobs"][0]["matches"][0]["match"] == "values"


@pytest.mark.parametrize(
    ("params", "pairs"),
    [
        ({"namespace": "team2"}, [[DF, SQL], [DF, EU]]),
        ({"job": SQL}, [[DF, SQL], [EU, SQL]]),
        ({"job": "job:wh:ids", "minShare": "0"}, []),
        ({"minShare": "1", "limit": "1"}, [[DF, SQL]]),
        ({"namespace": "nobody"}, []),
    ],
)
def test_filters(client: TestClient, params: dict[str, str], pairs: list[list[str]]) -> None:
    body = client.get("/api/v2/duplicates", params=params).json()
    assert [[j["job"] for j in p["jobs"]] for p in body["duplicates"]] == pairs


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"minShare": "2"}, 400, "query.minShare"),
        ({"job": "dataset:wh:orders"}, 400, "query.job"),
        ({"job": "job:wh:missing"}, 404, None),
    ],
)
def test_bad_requests(
    client: TestClient, params: dict[str, str], status: int, field: str | None
) -> None:
    response = client.get("/api/v2/duplicates", params=params)
    assert response.status_code == status, response.text
    if field:
        assert field in response.text


def test_cli_table_and_json(client: TestClient, db_url: str) -> None:
    runner = CliRunner(env={"COLUMNS": "250"})
    table = runner.invoke(main, ["duplicates", "--db", db_url])
    assert table.exit_code == 0, table.output
    assert "equal" in table.output and "2/2 exact" in table.output and "0/2 exact" in table.output
    as_json = runner.invoke(main, ["duplicates", "--job", SQL, "--format", "json", "--db", db_url])
    assert as_json.exit_code == 0, as_json.output
    assert (
        json.loads(as_json.output) == client.get("/api/v2/duplicates", params={"job": SQL}).json()
    )
