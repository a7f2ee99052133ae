"""Contract drift in ``GET /api/v2/drift`` and ``headwater drift``, on both databases."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.store import Store
from tests.store.builders import record
from tests.store.test_contract import DECLARED, WRITTEN_DOUBLE, WRITTEN_STRING, _read, _write

TOPIC = "dataset:kafka://broker:9092:orders"
# The producer writes amount as a double, the consumer declares a double, then
# the producer writes a string; a second consumer reads a subset and never drifts.
HISTORY = [
    _write(1, 1, WRITTEN_DOUBLE),
    _read(1, 2, DECLARED),
    _read(2, 3, [("order_id", "long")], job="ids"),
    _write(2, 6, WRITTEN_STRING),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _summary(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            d["kind"],
            d["datasetId"],
            d["changedAt"],
            d["breaking"],
            d["consumer"] and d["consumer"]["jobId"],
            [(c["kind"], c["path"], c["old"], c["new"]) for c in d["changes"]],
        )
        for d in body["drifts"]
    ]


def test_the_feed_lists_both_kinds_naming_the_consumer(client: TestClient) -> None:
    body = client.get("/api/v2/drift").json()
    assert body["totalCount"] == 2
    assert _summary(body) == [
        (
            "version",
            TOPIC,
            "2024-01-01T00:00:06Z",
            False,
            None,
            [("type_widened", "value.amount", "double", "string")],
        ),
        (
            "contract",
            TOPIC,
            "2024-01-01T00:00:06Z",
            True,
            "job:ns:consumer",
            [("type_narrowed", "value.amount", "string", "double")],
        ),
    ]
    contract = body["drifts"][1]
    assert contract["previousVersion"] is None
    assert contract["version"] == body["drifts"][0]["version"]  # the version it compares with
    assert contract["consumer"]["run"] == "00000000-0000-0000-0001-000000000001"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"kind": "contract"}, ["contract"]),
        ({"kind": "version"}, ["version"]),
        ({"breaking": "true"}, ["contract"]),
        ({"breaking": "false"}, ["version"]),
        ({"since": "2024-01-01T00:00:07Z"}, []),
        ({"dataset": TOPIC, "kind": "contract"}, ["contract"]),
    ],
)
def test_filters(client: TestClient, query: dict[str, str], expected: list[str]) -> None:
    body = client.get("/api/v2/drift", params=query).json()
    assert [d["kind"] for d in body["drifts"]] == expected
    assert body["totalCount"] == len(expected)


def test_an_unknown_kind_is_a_400_naming_the_field(client: TestClient) -> None:
    response = client.get("/api/v2/drift", params={"kind": "schema"})
    assert response.status_code in (400, 422)
    assert "kind" in response.text


def test_cli_lists_and_fails_on_a_breaking_contract(db_url: str) -> None:
    with Store.open(db_url, migrate=True) as store:
        record(store, HISTORY)
    runner = CliRunner(env={"COLUMNS": "250"})
    table = runner.invoke(
        main, ["drift", "--kind", "contract", "--db", db_url], catch_exceptions=False
    )
    assert table.exit_code == 0, table.output
    assert "contract (job:ns:consumer)" in table.output and "type_narrowed" in table.output
    assert "1 of 1 drifts" in table.output
    failed = runner.invoke(
        main,
        [
            "drift",
            "--kind",
            "contract",
            "--fail-on",
            "breaking",
            "--format",
            "json",
            "--db",
            db_url,
        ],
        catch_exceptions=False,
    )
    assert failed.exit_code == 1
    assert [d["kind"] for d in json.loads(failed.output)["drifts"]] == ["contract"]
    fine = runner.invoke(
        main,
        ["drift", "--kind", "version", "--fail-on", "breaking", "--db", db_url],
        catch_exceptions=False,
    )
    assert fine.exit_code == 0, fine.output
