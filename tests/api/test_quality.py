"""``GET /api/v2/datasets/{nodeId}/quality`` and ``headwater quality``, on both databases."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.store import Store
from tests.store.builders import PRODUCER, dataset, facet, record, run_event

ORDERS = "dataset:file:/orders"
PATH = f"/api/v2/datasets/{quote(ORDERS, safe='')}/quality"


def _run(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


def _write(n: int, second: int, rows: int, nulls: int) -> dict[str, Any]:
    """The loading job writes /orders with its output statistics and column metrics."""
    out = dataset(
        "file",
        "/orders",
        [("id", "long"), ("email", "string")],
        dataQualityMetrics=facet(
            rowCount=rows,
            columnMetrics={"email": {"nullCount": nulls, "distinctCount": rows - nulls}},
        ),
    )
    out["outputFacets"] = {"outputStatistics": facet(rowCount=rows, size=rows * 10, fileCount=1)}
    return run_event(
        "COMPLETE", f"2024-01-01T00:00:{second:02d}Z", _run(n), job="load", outputs=[out]
    )


def _test(n: int, second: int, not_null_email: bool) -> dict[str, Any]:
    """A test job reads /orders and reports its assertions as input facets (as dbt-ol does)."""
    read = dataset("file", "/orders")
    read["inputFacets"] = {
        "dataQualityAssertions": facet(
            assertions=[
                {
                    "assertion": "not_null",
                    "column": "email",
                    "success": not_null_email,
                    "severity": "error",
                    "expected": "0",
                    "actual": "0" if not_null_email else "2",
                },
                {"assertion": "unique", "column": "id", "success": True},
            ]
        )
    }
    return run_event(
        "FAIL" if not not_null_email else "COMPLETE",
        f"2024-01-01T00:00:{second:02d}Z",
        _run(n),
        job="test_orders",
        inputs=[read],
    )


HISTORY = [
    _write(1, 1, 100, 0),
    _test(2, 2, True),
    _write(3, 3, 120, 2),
    _test(4, 4, False),
    # A dataset event (no run) reporting a row count measured elsewhere.
    {
        "eventTime": "2024-01-01T00:00:05Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent",
        "dataset": dataset("file", "/orders", dataQualityMetrics=facet(rowCount=121)),
    },
    # Another dataset's quality is not this one's.
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:06Z",
        _run(6),
        job="other",
        outputs=[
            {**dataset("file", "/users"), "outputFacets": {"outputStatistics": facet(rowCount=7)}}
        ],
    ),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _series(body: dict[str, Any]) -> dict[tuple[str, str | None, str | None], list[Any]]:
    return {
        (s["metric"], s["column"], s["assertion"]): [
            (p["time"][-3:-1], p["value"] if p["success"] is None else p["success"])
            for p in s["points"]
        ]
        for s in body["series"]
    }


def test_history_per_metric(client: TestClient) -> None:
    response = client.get(PATH)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["datasetId"] == ORDERS
    assert _series(body) == {
        ("rowCount", None, None): [("01", 100), ("03", 120), ("05", 121)],
        ("bytes", None, None): [("01", 1000), ("03", 1200)],
        ("fileCount", None, None): [("01", 1), ("03", 1)],
        ("nullCount", "email", None): [("01", 0), ("03", 2)],
        ("distinctCount", "email", None): [("01", 100), ("03", 118)],
        ("assertion", "email", "not_null"): [("02", True), ("04", False)],
        ("assertion", "id", "unique"): [("02", True), ("04", True)],
    }
    observations = body["observations"]
    assert [(o["runId"], o["job"]) for o in observations] == [
        (_run(1), "job:ns:load"),
        (_run(2), "job:ns:test_orders"),
        (_run(3), "job:ns:load"),
        (_run(4), "job:ns:test_orders"),
        (None, None),
    ]
    # A writing run's observation names the version it wrote; a reading run's none.
    assert observations[0]["version"] and observations[1]["version"] is None


def test_latest(client: TestClient) -> None:
    latest = client.get(PATH).json()["latest"]
    assert latest["time"] == "2024-01-01T00:00:05Z"
    assert [(m["metric"], m["value"]) for m in latest["metrics"]] == [
        ("bytes", 1200),
        ("fileCount", 1),
        ("rowCount", 121),
    ]
    failed = [a for a in latest["assertions"] if not a["success"]]
    assert latest["failedAssertions"] == 1
    assert failed == [
        {
            "assertion": "not_null",
            "column": "email",
            "name": None,
            "success": False,
            "severity": "error",
            "expected": "0",
            "actual": "2",
            "time": "2024-01-01T00:00:04Z",
            "runId": _run(4),
            "job": "job:ns:test_orders",
        }
    ]


@pytest.mark.parametrize(
    ("query", "times"),
    [
        ({"since": "2024-01-01T00:00:03Z"}, ["03", "04", "05"]),
        ({"until": "2024-01-01T00:00:03Z"}, ["01", "02"]),
        ({"since": "2024-01-01T01:00:02+01:00", "until": "2024-01-01T00:00:04"}, ["02", "03"]),
    ],
    ids=["since", "until", "offset-and-naive"],
)
def test_window(client: TestClient, query: dict[str, str], times: list[str]) -> None:
    response = client.get(PATH, params=query)
    assert response.status_code == 200, response.text
    assert [o["time"][-3:-1] for o in response.json()["observations"]] == times


@pytest.mark.parametrize(
    ("path", "query", "status", "field"),
    [
        (PATH, {"since": "yesterday"}, 400, "query.since"),
        ("/api/v2/datasets/job%3Ans%3Aload/quality", {}, 400, "query.nodeId"),
        ("/api/v2/datasets/dataset%3Afile%3A%2Fmissing/quality", {}, 404, None),
    ],
    ids=["bad-time", "not-a-dataset", "missing"],
)
def test_bad_requests(
    client: TestClient, path: str, query: dict[str, str], status: int, field: str | None
) -> None:
    response = client.get(path, params=query)
    assert response.status_code == status, response.text
    if field:
        assert response.json()["field"] == field


def test_a_dataset_without_quality_facets(client: TestClient) -> None:
    client.post(
        "/api/v1/lineage",
        json=run_event(
            "COMPLETE", "2024-01-01T00:00:09Z", _run(9), outputs=[dataset("file", "/plain")]
        ),
    )
    body = client.get("/api/v2/datasets/dataset%3Afile%3A%2Fplain/quality").json()
    assert body["series"] == [] and body["latest"]["time"] is None


def test_documented(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/v2/datasets/{nodeId}/quality"][
        "get"
    ]
    assert {"200", "400", "404"} <= set(operation["responses"])


def test_cli_reads_the_database(db_url: str) -> None:
    with Store.open(db_url, migrate=True) as store:
        record(store, HISTORY)
    result = CliRunner().invoke(
        main, ["quality", ORDERS, "--format", "json", "--db", db_url], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert _series(json.loads(result.output))[("rowCount", None, None)][-1] == ("05", 121)
    table = CliRunner().invoke(main, ["quality", ORDERS, "--db", db_url], catch_exceptions=False)
    assert table.exit_code == 0, table.output
    assert "assertion not_null" in table.output and ".x" in table.output
    assert "1 of 2 assertions failing" in table.output
