"""``GET /api/v2/drift`` and ``headwater drift``, on both databases."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.store import Store
from tests.store.builders import dataset, record, run_event
from tests.support.cli_server import serve_cli_from

ORDERS, USERS = "dataset:file:/orders", "dataset:file:/users"


def _write(run: int, second: int, name: str, fields: list[tuple[str, str]]) -> dict[str, Any]:
    return run_event("COMPLETE", f"2024-01-01T00:00:{second:02d}Z",
                     f"00000000-0000-0000-0000-{run:012d}",
                     outputs=[dataset("file", name, fields)])


HISTORY = [
    _write(1, 1, "/orders", [("id", "int"), ("amount", "decimal(10,2)")]),
    _write(2, 2, "/users", [("id", "long"), ("email", "string")]),
    _write(3, 3, "/orders", [("id", "long"), ("amount", "decimal(10,2)")]),  # widened
    _write(4, 4, "/users", [("id", "long")]),  # email removed: breaking
    _write(5, 5, "/orders", [("id", "long"), ("amount", "decimal(10,2)"), ("note", "string")]),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _summary(body: dict[str, Any]) -> list[tuple[str, str, bool, list[str]]]:
    return [(d["datasetId"], d["changedAt"], d["breaking"],
             [f"{c['kind']} {c['path']}" for c in d["changes"]]) for d in body["drifts"]]


def test_drifts_newest_first_with_their_changes(client: TestClient) -> None:
    body = client.get("/api/v2/drift").json()
    assert body["totalCount"] == 3
    assert _summary(body) == [
        (ORDERS, "2024-01-01T00:00:05Z", False, ["added note"]),
        (USERS, "2024-01-01T00:00:04Z", True, ["removed email"]),
        (ORDERS, "2024-01-01T00:00:03Z", False, ["type_widened id"]),
    ]
    first = body["drifts"][0]
    assert first["changes"][0] == {"kind": "added", "path": "note", "newPath": None,
                                   "old": None, "new": "string", "breaking": False}
    assert first["previousVersion"] != first["version"]


@pytest.mark.parametrize(("query", "expected"), [
    ({"breaking": "true"}, [USERS]),
    ({"breaking": "false"}, [ORDERS, ORDERS]),
    ({"dataset": ORDERS}, [ORDERS, ORDERS]),
    ({"since": "2024-01-01T00:00:04Z"}, [ORDERS, USERS]),
    ({"until": "2024-01-01T00:00:04Z"}, [ORDERS]),
    ({"since": "2024-01-01T01:00:04+01:00", "until": "2024-01-01T00:00:05"}, [USERS]),
    ({"limit": "1", "offset": "1"}, [USERS]),
], ids=["breaking", "compatible", "dataset", "since", "until", "offset-and-naive", "paging"])
def test_filters(client: TestClient, query: dict[str, str], expected: list[str]) -> None:
    response = client.get("/api/v2/drift", params=query)
    assert response.status_code == 200, response.text
    assert [d["datasetId"] for d in response.json()["drifts"]] == expected


@pytest.mark.parametrize(("query", "status", "field"), [
    ({"since": "yesterday"}, 400, "query.since"),
    ({"until": "2024-13-01"}, 400, "query.until"),
    ({"dataset": "job:ns:x"}, 400, "query.dataset"),
    ({"dataset": "dataset:file:/orders#abc"}, 400, "query.dataset"),
    ({"dataset": "dataset:file:/nowhere"}, 404, None),
    ({"breaking": "maybe"}, 400, None),
    ({"limit": "-1"}, 400, None),
])
def test_bad_parameters(client: TestClient, query: dict[str, str], status: int,
                        field: str | None) -> None:
    response = client.get("/api/v2/drift", params=query)
    assert response.status_code == status, response.text
    if field:
        assert response.json()["field"] == field


def test_every_status_is_documented(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/v2/drift"]["get"]
    assert {"200", "400", "404", "503"} <= set(operation["responses"])


def _cli(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_cli_reads_the_database(db_url: str) -> None:
    with Store.open(db_url, migrate=True) as store:
        record(store, HISTORY)
    answer = json.loads(_cli("drift", ORDERS, "--format", "json", "--db", db_url))
    assert _summary(answer) == [
        (ORDERS, "2024-01-01T00:00:05Z", False, ["added note"]),
        (ORDERS, "2024-01-01T00:00:03Z", False, ["type_widened id"]),
    ]
    table = _cli("drift", "--breaking", "--db", db_url)
    assert "removed email" in table and "breaking" in table and "1 of 1 drifts" in table
    # --fail-on breaking: non-zero only when a breaking drift is in the answer.
    _cli("drift", ORDERS, "--fail-on", "breaking", "--db", db_url)
    _cli("drift", "--fail-on", "breaking", "--db", db_url, code=1)
    _cli("drift", "--since", "2024-01-01T00:00:05Z", "--fail-on", "breaking", "--db", db_url)
    assert "since must be an ISO-8601 time" in _cli("drift", "--since", "x", "--db", db_url,
                                                     code=1)


def test_cli_asks_the_server(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_cli_from(monkeypatch, client, "http://drift.test")
    output = _cli("drift", "--breaking", "--format", "json", "--url", "http://drift.test")
    assert [d["datasetId"] for d in json.loads(output)["drifts"]] == [USERS]
    _cli("drift", "--fail-on", "breaking", "--url", "http://drift.test", code=1)


def test_a_deleted_dataset_drops_out_until_it_is_written_again(client: TestClient) -> None:
    deleted = client.delete("/api/v1/namespaces/file/datasets/%2Fusers")
    assert deleted.status_code == 200, deleted.text
    assert [d["datasetId"] for d in client.get("/api/v2/drift").json()["drifts"]] == [
        ORDERS, ORDERS]
    assert client.get("/api/v2/drift", params={"dataset": USERS}).status_code == 404
    # An event later than the delete shows the dataset again (the soft-delete rule).
    later = run_event("COMPLETE", "2099-01-01T00:00:00Z", "00000000-0000-0000-0000-000000000006",
                      outputs=[dataset("file", "/users", [("id", "long")])])
    assert client.post("/api/v1/lineage", json=later).status_code == 200
    assert USERS in [d["datasetId"] for d in client.get("/api/v2/drift").json()["drifts"]]
