"""``GET /api/v2/datasets/{nodeId}/readers`` and ``headwater readers``, on both databases."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.store import Store
from tests.store.builders import dataset, facet, record, run_event

ORDERS = "dataset:file:/orders"
PATH = f"/api/v2/datasets/{quote(ORDERS, safe='')}/readers"
APP, WRITER, COLLECT, OTHER, PLAIN = (
    f"00000000-0000-0000-0000-00000000000{n}" for n in range(1, 6)
)


def _parent(run_id: str) -> dict[str, Any]:
    return {"parent": facet(run={"runId": run_id}, job={"namespace": "spark", "name": "app"})}


HISTORY = [
    # The Spark application's run names its user; its actions' runs point at it.
    run_event(
        "START",
        "2024-01-01T00:00:01Z",
        APP,
        job="app",
        namespace="spark",
        run_facets={"spark_applicationDetails": facet(userName="alice", appName="app")},
    ),
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:02Z",
        WRITER,
        job="app.write_out",
        namespace="spark",
        inputs=[dataset("file", "/orders")],
        outputs=[dataset("file", "/out")],
        run_facets=_parent(APP),
    ),
    # A read-only action (collect) with its own application details.
    run_event(
        "START",
        "2024-01-01T00:00:03Z",
        COLLECT,
        job="notebook.collect",
        namespace="spark",
        inputs=[dataset("file", "/orders")],
        run_facets={"spark_applicationDetails": facet(userName="bob")},
    ),
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:04Z",
        COLLECT,
        job="notebook.collect",
        namespace="spark",
        inputs=[dataset("file", "/orders")],
    ),
    # Reads another dataset: not a reader of /orders.
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:05Z",
        OTHER,
        job="other",
        namespace="spark",
        inputs=[dataset("file", "/users")],
    ),
    # A reader with no Spark facets at all.
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:06Z",
        PLAIN,
        job="export",
        namespace="bi",
        inputs=[dataset("file", "/orders")],
    ),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _summary(body: dict[str, Any]) -> list[tuple[str, str, str | None, bool]]:
    return [(r["runId"], r["job"], r["sparkUser"], r["readOnly"]) for r in body["readers"]]


def test_readers_newest_first_with_users(client: TestClient) -> None:
    response = client.get(PATH)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["totalCount"] == 3
    assert _summary(body) == [
        (PLAIN, "job:bi:export", None, True),
        (COLLECT, "job:spark:notebook.collect", "bob", True),
        (WRITER, "job:spark:app.write_out", "alice", False),
    ]
    assert body["users"] == ["alice", "bob"]
    assert body["jobs"] == [
        "job:bi:export",
        "job:spark:app.write_out",
        "job:spark:notebook.collect",
    ]
    collect = body["readers"][1]
    # Read when its first event listed the input; its state from the last.
    assert collect["readAt"] == "2024-01-01T00:00:03Z" and collect["state"] == "COMPLETE"
    assert body["readers"][2]["parentRunId"] == APP


@pytest.mark.parametrize(
    ("query", "runs"),
    [
        ({"since": "2024-01-01T00:00:03Z"}, [PLAIN, COLLECT]),
        ({"until": "2024-01-01T00:00:03Z"}, [WRITER]),
        ({"since": "2024-01-01T01:00:02+01:00", "until": "2024-01-01T00:00:06"}, [COLLECT, WRITER]),
        ({"limit": "1", "offset": "1"}, [COLLECT]),
    ],
    ids=["since", "until", "offset-and-naive", "paging"],
)
def test_window(client: TestClient, query: dict[str, str], runs: list[str]) -> None:
    response = client.get(PATH, params=query)
    assert response.status_code == 200, response.text
    assert [r["runId"] for r in response.json()["readers"]] == runs


@pytest.mark.parametrize(
    ("path", "query", "status", "field"),
    [
        (PATH, {"until": "soon"}, 400, "query.until"),
        ("/api/v2/datasets/run%3Ax/readers", {}, 400, "query.nodeId"),
        ("/api/v2/datasets/dataset%3Afile%3A%2Fnope/readers", {}, 404, None),
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


def test_a_deleted_job_drops_out(client: TestClient) -> None:
    deleted = client.delete("/api/v1/namespaces/bi/jobs/export")
    assert deleted.status_code == 200, deleted.text
    assert [r["runId"] for r in client.get(PATH).json()["readers"]] == [COLLECT, WRITER]


def test_cli_reads_the_database(db_url: str) -> None:
    with Store.open(db_url, migrate=True) as store:
        record(store, HISTORY)
    result = CliRunner().invoke(
        main,
        ["readers", ORDERS, "--format", "json", "--db", db_url, "--since", "2024-01-01T00:00:03Z"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert _summary(json.loads(result.output))[1] == (
        COLLECT,
        "job:spark:notebook.collect",
        "bob",
        True,
    )
    table = CliRunner().invoke(main, ["readers", ORDERS, "--db", db_url], catch_exceptions=False)
    assert table.exit_code == 0, table.output
    assert "bob" in table.output and "3 of 3 runs; users: alice, bob" in table.output
