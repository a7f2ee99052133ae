"""``GET /api/v2/datasets/{nodeId}/root-cause`` and ``headwater root-cause``, on both
databases, over a small synthetic pipeline with a sibling and an unrelated job::

    ingest -> src -> clean -> mid -> agg -> gold
                              mid -> other -> side        (a sibling of agg)
                              mid -> dq                   (runs assertions on mid)
    x -> xjob -> y                                         (unrelated)
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from tests.store.builders import dataset, facet, run_event

NS = "wh"
GOLD = f"dataset:{NS}:gold"
PATH = f"/api/v2/datasets/{quote(GOLD, safe='')}/root-cause"
WEEK = {"until": "2026-03-08T00:00:00Z"}  # since defaults to 7 days before: 03-01


def _run(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def _fields(amount: str) -> list[tuple[str, str]]:
    return [("id", "long"), ("amount", amount)]


def _declared(name: str) -> dict[str, Any]:
    read = dataset(NS, name)
    read["inputFacets"] = {
        "declaredSchema": facet(fields=[{"name": n, "type": t} for n, t in _fields("double")])
    }
    return read


def _assertions(*results: tuple[str, str, bool]) -> dict[str, Any]:
    read = dataset(NS, "mid")
    read["inputFacets"] = {
        "dataQualityAssertions": facet(
            assertions=[{"assertion": a, "column": c, "success": s} for a, c, s in results]
        )
    }
    return read


def _at(day: int, hour: int) -> str:
    return f"2026-{3 if day > 0 else 2:02d}-{day if day > 0 else 20:02d}T{hour:02d}:00:00Z"


HISTORY = [
    # Before the window: a failure of clean that is not in the answer.
    run_event("FAIL", _at(0, 1), _run(90), job="clean", namespace=NS, inputs=[dataset(NS, "src")]),
    run_event(
        "COMPLETE",
        _at(1, 1),
        _run(1),
        job="ingest",
        namespace=NS,
        outputs=[dataset(NS, "src", _fields("double"))],
    ),
    run_event(
        "COMPLETE",
        _at(1, 2),
        _run(2),
        job="clean",
        namespace=NS,
        inputs=[_declared("src")],
        outputs=[dataset(NS, "mid", _fields("double"))],
    ),
    run_event(
        "COMPLETE",
        _at(1, 3),
        _run(3),
        job="agg",
        namespace=NS,
        inputs=[dataset(NS, "mid")],
        outputs=[dataset(NS, "gold", [("total", "double")])],
    ),
    run_event(
        "COMPLETE",
        _at(1, 4),
        _run(4),
        job="other",
        namespace=NS,
        inputs=[dataset(NS, "mid")],
        outputs=[dataset(NS, "side", [("n", "long")])],
    ),
    run_event(
        "COMPLETE",
        _at(1, 5),
        _run(5),
        job="xjob",
        namespace=NS,
        inputs=[dataset(NS, "x")],
        outputs=[dataset(NS, "y", [("v", "long")])],
    ),
    # The source's amount becomes a string: a version drift, and a contract drift
    # against clean, which declares a double.
    run_event(
        "COMPLETE",
        _at(2, 0),
        _run(6),
        job="ingest",
        namespace=NS,
        outputs=[dataset(NS, "src", _fields("string"))],
    ),
    run_event("START", _at(2, 1), _run(7), job="clean", namespace=NS, inputs=[_declared("src")]),
    run_event("FAIL", _at(2, 1), _run(7), job="clean", namespace=NS, inputs=[_declared("src")]),
    run_event(
        "COMPLETE",
        _at(2, 2),
        _run(8),
        job="dq",
        namespace=NS,
        inputs=[_assertions(("not_null", "amount", False), ("unique", "id", True))],
    ),
    # A sibling's and an unrelated job's failures, and passing assertions: not causes.
    run_event("FAIL", _at(2, 3), _run(9), job="other", namespace=NS, inputs=[dataset(NS, "mid")]),
    run_event("FAIL", _at(2, 3), _run(10), job="xjob", namespace=NS, inputs=[dataset(NS, "x")]),
    run_event(
        "COMPLETE",
        _at(2, 4),
        _run(11),
        job="dq",
        namespace=NS,
        inputs=[_assertions(("not_null", "amount", True))],
    ),
]


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _summary(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["kind"], c["subject"], c["time"], c["depth"]) for c in body["causes"]]


SRC_PATH = [f"dataset:{NS}:src", f"job:{NS}:clean", f"dataset:{NS}:mid", f"job:{NS}:agg", GOLD]


def test_what_changed_upstream_oldest_first_with_paths(client: TestClient) -> None:
    response = client.get(PATH, params=WEEK)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["since"] == "2026-03-01T00:00:00Z"
    assert (body["upstreamDatasets"], body["upstreamJobs"], body["truncated"]) == (3, 3, False)
    assert _summary(body) == [
        ("versionDrift", f"dataset:{NS}:src", "2026-03-02T00:00:00Z", 2),
        ("contractDrift", f"dataset:{NS}:src", "2026-03-02T01:00:00Z", 2),
        ("failedRun", f"job:{NS}:clean", "2026-03-02T01:00:00Z", 2),
        ("qualityFailure", f"dataset:{NS}:mid", "2026-03-02T02:00:00Z", 1),
    ]
    drift, contract, failed, quality = body["causes"]
    assert drift["path"] == SRC_PATH
    assert [(c["kind"], c["path"]) for c in drift["detail"]["changes"]] == [
        ("type_widened", "amount")
    ]
    assert contract["consumer"] == f"job:{NS}:clean"
    assert contract["path"] == SRC_PATH
    assert contract["detail"]["breaking"] is True
    assert failed["path"] == SRC_PATH[1:]
    assert failed["detail"]["runId"] == _run(7)
    assert quality["path"] == SRC_PATH[2:]
    assert quality["detail"]["failed"] == [{"assertion": "not_null", "column": "amount"}]
    assert quality["detail"]["runId"] == _run(8)


@pytest.mark.parametrize(
    ("params", "kinds"),
    [
        ({**WEEK, "depth": "1"}, ["qualityFailure"]),
        ({**WEEK, "depth": "0"}, []),
        ({"since": "2026-03-02T01:30:00Z", **WEEK}, ["qualityFailure"]),
        (
            {"since": "2026-02-01T00:00:00Z", **WEEK},
            ["failedRun", "versionDrift", "contractDrift", "failedRun", "qualityFailure"],
        ),
        ({**WEEK, "limit": "2"}, ["versionDrift", "contractDrift"]),
    ],
)
def test_depth_window_and_limit(
    client: TestClient, params: dict[str, str], kinds: list[str]
) -> None:
    body = client.get(PATH, params=params).json()
    assert [c["kind"] for c in body["causes"]] == kinds
    if params.get("limit") == "2":
        assert body["totalCount"] == 4


def test_the_sibling_sees_its_own_failure_not_cleans_path(client: TestClient) -> None:
    side = quote(f"dataset:{NS}:side", safe="")
    body = client.get(f"/api/v2/datasets/{side}/root-cause", params=WEEK).json()
    assert [(c["kind"], c["subject"]) for c in body["causes"]] == [
        ("versionDrift", f"dataset:{NS}:src"),
        ("contractDrift", f"dataset:{NS}:src"),
        ("failedRun", f"job:{NS}:clean"),
        ("qualityFailure", f"dataset:{NS}:mid"),
        ("failedRun", f"job:{NS}:other"),
    ]


@pytest.mark.parametrize(
    ("path", "params", "status", "field"),
    [
        (PATH, {"since": "yesterday"}, 400, "query.since"),
        (PATH, {"since": "2026-03-09T00:00:00Z", **WEEK}, 400, "query.since"),
        (PATH, {"depth": "-1"}, 400, "query.depth"),
        (f"/api/v2/datasets/{quote(f'job:{NS}:agg', safe='')}/root-cause", {}, 400, "query.nodeId"),
        (f"/api/v2/datasets/{quote(f'dataset:{NS}:nope', safe='')}/root-cause", {}, 404, None),
    ],
)
def test_bad_requests_name_the_field(
    client: TestClient, path: str, params: dict[str, str], status: int, field: str | None
) -> None:
    response = client.get(path, params=params)
    assert response.status_code == status, response.text
    if field is not None:
        assert field in response.text


def test_cli_prints_a_table_and_json(client: TestClient, db_url: str) -> None:
    runner = CliRunner(env={"COLUMNS": "250"})
    args = ["root-cause", GOLD, "--until", WEEK["until"], "--db", db_url]
    table = runner.invoke(main, args)
    assert table.exit_code == 0, table.output
    assert "qualityFailure" in table.output and "not_null(amount)" in table.output
    assert "src > clean > mid > agg > gold" in table.output
    as_json = runner.invoke(main, [*args, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output) == client.get(PATH, params=WEEK).json()
