"""Static lineage: OpenLineage JobEvents (and DatasetEvents) with no run put a job
between datasets -- "the revenue dashboard reads gold.revenue" -- in the graph and in
impact answers; declared through POST /api/v1/lineage, Marquez's PUT job, or
``headwater declare job``. On both databases."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.store import Store
from tests.store.builders import PRODUCER, column_lineage, dataset, record, run_event
from tests.support.cli_server import serve_cli_from

JOB_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
DATASET_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
DASHBOARD = "job:bi:revenue_dashboard"
GOLD, SILVER = "dataset:lake:gold.revenue", "dataset:lake:silver.orders"


def _declare(
    second: int,
    inputs: list[str] | None,
    outputs: list[str] | None = None,
    job: str = "revenue_dashboard",
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventTime": f"2024-01-01T00:01:{second:02d}Z",
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT,
        "job": {"namespace": "bi", "name": job, "facets": {}},
    }
    for side, names in (("inputs", inputs), ("outputs", outputs)):
        if names is not None:
            event[side] = [{"namespace": "lake", "name": name} for name in names]
    return event


PIPELINE = [
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:01Z",
        "00000000-0000-0000-0000-000000000001",
        job="load",
        namespace="etl",
        outputs=[dataset("lake", "silver.orders", [("amount", "decimal(10,2)")])],
    ),
    run_event(
        "COMPLETE",
        "2024-01-01T00:00:02Z",
        "00000000-0000-0000-0000-000000000002",
        job="revenue",
        namespace="etl",
        inputs=[dataset("lake", "silver.orders")],
        outputs=[
            dataset(
                "lake",
                "gold.revenue",
                [("revenue", "decimal(12,2)")],
                columnLineage=column_lineage({"revenue": [("lake", "silver.orders", "amount")]}),
            )
        ],
    ),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return PIPELINE


def _impacted(client: TestClient, node_id: str) -> dict[str, int]:
    response = client.get("/api/v2/impact", params={"nodeId": node_id})
    assert response.status_code == 200, response.text
    return {n["id"]: n["depth"] for n in response.json()["nodes"]}


def _readers_of_gold(client: TestClient) -> set[str]:
    response = client.get(
        "/api/v2/lineage", params={"nodeId": GOLD, "direction": "downstream", "depth": 1}
    )
    assert response.status_code == 200, response.text
    return {n["id"] for n in response.json()["nodes"] if n["id"].startswith("job:")}


def test_a_job_event_puts_the_dashboard_in_the_graph_and_the_impact(client: TestClient) -> None:
    assert DASHBOARD not in _impacted(client, SILVER)
    response = client.post("/api/v1/lineage", json=_declare(1, ["gold.revenue"]))
    assert response.status_code < 300, response.text
    assert _readers_of_gold(client) == {DASHBOARD}
    impacted = _impacted(client, SILVER)
    assert impacted[GOLD] < impacted[DASHBOARD]
    # The v1 (Marquez) lineage shows the edge too.
    v1 = client.get("/api/v1/lineage", params={"nodeId": DASHBOARD}).json()
    (dashboard,) = [n for n in v1["graph"] if n["id"] == DASHBOARD]
    assert {e["origin"] for e in dashboard["inEdges"]} == {GOLD}


def test_a_declared_job_is_marked_in_the_graph(client: TestClient) -> None:
    """v2 lineage marks a job whose edges a JobEvent declares (``data.declared``), so the
    graph can draw it apart; a job known only from its runs carries no mark."""
    response = client.post("/api/v1/lineage", json=_declare(1, ["gold.revenue"]))
    assert response.status_code < 300, response.text
    answer = client.get("/api/v2/lineage", params={"nodeId": SILVER, "depth": 4}).json()
    jobs = {n["id"]: n["data"] for n in answer["nodes"] if n["id"].startswith("job:")}
    assert jobs[DASHBOARD]["declared"] is True and jobs[DASHBOARD]["latestRun"] is None
    assert "declared" not in jobs["job:etl:revenue"]


def test_the_latest_declaration_wins_whatever_the_order(client: TestClient, store: Store) -> None:
    # The newer declaration (reads silver.orders only) arrives first; the older one late.
    record(store, [_declare(5, ["silver.orders"])])
    record(store, [_declare(1, ["gold.revenue"])])
    assert _readers_of_gold(client) == set()
    assert DASHBOARD in _impacted(client, SILVER)
    # A job event without inputs or outputs (facets only) declares nothing new ...
    record(store, [_declare(6, None)])
    assert DASHBOARD in _impacted(client, SILVER)
    # ... an empty list declares none.
    record(store, [_declare(7, [])])
    assert DASHBOARD not in _impacted(client, SILVER)


def test_a_run_of_the_job_adds_to_what_it_declares(client: TestClient, store: Store) -> None:
    record(
        store,
        [
            _declare(1, ["gold.revenue"]),
            run_event(
                "COMPLETE",
                "2024-01-01T00:02:00Z",
                "00000000-0000-0000-0000-000000000003",
                job="revenue_dashboard",
                namespace="bi",
                inputs=[dataset("lake", "silver.orders")],
            ),
        ],
    )
    lineage = client.get(
        "/api/v2/lineage", params={"nodeId": DASHBOARD, "direction": "upstream", "depth": 1}
    ).json()
    assert {n["id"] for n in lineage["nodes"]} >= {GOLD, SILVER}


def test_a_dataset_event_declares_a_dataset(client: TestClient) -> None:
    response = client.post(
        "/api/v1/lineage",
        json={
            "eventTime": "2024-01-01T00:03:00Z",
            "producer": PRODUCER,
            "schemaURL": DATASET_EVENT,
            "dataset": dataset("bi", "revenue_extract", [("day", "date")]),
        },
    )
    assert response.status_code < 300, response.text
    got = client.get("/api/v1/namespaces/bi/datasets/revenue_extract")
    assert got.status_code == 200 and [f["name"] for f in got.json()["fields"]] == ["day"]


def _cli(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_declared_by_hand_through_the_cli(
    client: TestClient, store: Store, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    serve_cli_from(monkeypatch, client, "http://declare.test")
    _cli("declare", "job", DASHBOARD, "--input", GOLD, "--url", "http://declare.test")
    assert _readers_of_gold(client) == {DASHBOARD}
    _cli("declare", "job", "job:bi:finance_report", "--input", GOLD, "--db", db_url)
    assert _readers_of_gold(client) == {DASHBOARD, "job:bi:finance_report"}
    assert "job:bi:finance_report" in _impacted(client, SILVER)
    # A dataset that does not exist is refused, naming it, and nothing is declared.
    missing = _cli(
        "declare",
        "job",
        "job:bi:other",
        "--input",
        "dataset:lake:nope",
        "--url",
        "http://declare.test",
        code=1,
    )
    assert "nope" in missing
    assert "not a dataset" in _cli(
        "declare", "job", "job:bi:other", "--input", "lake:x", "--db", db_url, code=2
    )


def _readers_of_gold_as_of(client: TestClient, as_of: str) -> dict[str, Any]:
    response = client.get(
        "/api/v2/lineage",
        params={"nodeId": GOLD, "direction": "downstream", "depth": 1, "asOf": as_of},
    )
    assert response.status_code == 200, response.text
    return {n["id"]: n["data"] for n in response.json()["nodes"] if n["id"].startswith("job:")}


def test_as_of_a_time_only_declarations_made_by_then(client: TestClient, store: Store) -> None:
    """An ``asOf`` answer has the declarations whose event time is at or before it."""
    late = "job:bi:late_dashboard"
    record(
        store, [_declare(1, ["gold.revenue"]), _declare(30, ["gold.revenue"], job="late_dashboard")]
    )
    assert set(_readers_of_gold(client)) == {DASHBOARD, late}
    then = _readers_of_gold_as_of(client, "2024-01-01T00:01:10Z")
    assert set(then) == {DASHBOARD} and then[DASHBOARD]["declared"] is True
    assert _readers_of_gold_as_of(client, "2024-01-01T00:00:30Z") == {}
    impact = client.get("/api/v2/impact", params={"nodeId": SILVER, "asOf": "2024-01-01T00:01:10Z"})
    assert impact.status_code == 200, impact.text
    impacted = {n["id"] for n in impact.json()["nodes"]}
    assert DASHBOARD in impacted and late not in impacted
    # The late dashboard's node, asked as of before its declaration, is not marked declared.
    node = client.get(
        "/api/v2/lineage", params={"nodeId": late, "depth": 0, "asOf": "2024-01-01T00:01:10Z"}
    ).json()
    assert [n.get("data", {}).get("declared") for n in node["nodes"] if n["id"] == late] in (
        [],
        [None],
    )
    # Once the dashboard declares something else, the earlier declaration still
    # answers for the times it was in force.
    record(store, [_declare(40, ["silver.orders"])])
    assert set(_readers_of_gold_as_of(client, "2024-01-01T00:01:10Z")) == {DASHBOARD}
    assert set(_readers_of_gold_as_of(client, "2024-01-01T00:01:45Z")) == {late}


def _readers_as_of(client: TestClient, node: str, as_of: str | None) -> set[str]:
    params = {"nodeId": node, "direction": "downstream", "depth": 1}
    response = client.get(
        "/api/v2/lineage", params={**params, **({"asOf": as_of} if as_of else {})}
    )
    assert response.status_code == 200, response.text
    return {n["id"] for n in response.json()["nodes"] if n["id"].startswith("job:")}


def test_a_declaration_replaced_twice_answers_as_of_each_interval(
    client: TestClient, store: Store
) -> None:
    """Gold at 00:01:10, silver at 00:01:20, nothing at 00:01:40: each answers for its
    interval, recorded newest first (each late declaration takes its place in time)."""
    record(store, [_declare(40, [])])
    record(store, [_declare(20, ["silver.orders"])])
    record(store, [_declare(10, ["gold.revenue"])])
    at = "2024-01-01T00:01:{:02d}Z".format
    expected = {
        at(5): (set(), set()),
        at(10): ({DASHBOARD}, set()),
        at(19): ({DASHBOARD}, set()),
        at(20): (set(), {DASHBOARD}),
        at(39): (set(), {DASHBOARD}),
        at(40): (set(), set()),
        None: (set(), set()),
    }
    for as_of, (of_gold, of_silver) in expected.items():
        assert _readers_as_of(client, GOLD, as_of) == of_gold, as_of
        assert (DASHBOARD in _readers_as_of(client, SILVER, as_of)) == bool(of_silver), as_of
    impact = client.get("/api/v2/impact", params={"nodeId": SILVER, "asOf": at(30)}).json()
    assert DASHBOARD in {n["id"] for n in impact["nodes"]}
    node = client.get("/api/v2/lineage", params={"nodeId": DASHBOARD, "depth": 0, "asOf": at(30)})
    nodes = node.json()["nodes"]
    assert [n.get("data", {}).get("declared") for n in nodes if n["id"] == DASHBOARD] == [True]
