"""Each drift of ``GET /api/v2/drift`` (and ``/api/v2/drift/{id}``, ``headwater drift``)
carries its impact, on SQLite and PostgreSQL.

Datasets in ``file``, jobs in ``ns``::

    raw.amount ─D─▶ silver.amount (clean) ─D─▶ gold.total (report)
                                          ─I FILTER─▶ gold.n (report)
    raw.id     ─D─▶ silver.id (clean)
    raw ─▶ peek ─▶ /peek              (peek reports no column lineage)
    raw.amount ─D─▶ late.amount (late, which first runs after the change)

``clean`` declares it reads ``amount`` as a double; at second 10 the loader writes it as
a string: a version drift of ``raw`` and a contract drift naming ``clean``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.store import Store
from tests.store.builders import column_lineage, dataset, facet, record, run_event

RAW = "dataset:file:/raw"


def col(name: str, field: str) -> str:
    return f"datasetField:file:/{name}:{field}"


def job(name: str) -> str:
    return f"job:ns:{name}"


def _run(
    number: int, second: int, name: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]
) -> dict[str, Any]:
    return run_event(
        "COMPLETE",
        f"2024-01-01T00:00:{second:02d}Z",
        f"00000000-0000-0000-0000-{number:012d}",
        job=name,
        inputs=inputs,
        outputs=outputs,
    )


def _load(number: int, second: int, amount: str) -> dict[str, Any]:
    fields = [("id", "long"), ("amount", amount)]
    return _run(number, second, "load", [], [dataset("file", "/raw", fields)])


def _reads_raw(declared: bool = False) -> dict[str, Any]:
    read = dataset("file", "/raw")
    if declared:
        read["inputFacets"] = {
            "declaredSchema": facet(
                fields=[{"name": "id", "type": "long"}, {"name": "amount", "type": "double"}]
            )
        }
    return read


def _lineage(
    target: str,
    sources: dict[str, list[tuple[str, str]]],
    kind: str = "DIRECT",
    subtype: str = "IDENTITY",
) -> dict[str, Any]:
    return column_lineage(
        {field: [("file", f"/{name}", f) for name, f in pairs] for field, pairs in sources.items()},
        kind,
        subtype,
    )["fields"]


def _output(name: str, fields: list[str], lineage: dict[str, Any]) -> dict[str, Any]:
    return dataset(
        "file", f"/{name}", [(f, "double") for f in fields], columnLineage=facet(fields=lineage)
    )


HISTORY = [
    _load(1, 1, "double"),
    _run(
        2,
        2,
        "clean",
        [_reads_raw(declared=True)],
        [
            _output(
                "silver",
                ["id", "amount"],
                {**_lineage("silver", {"amount": [("raw", "amount")], "id": [("raw", "id")]})},
            )
        ],
    ),
    _run(
        3,
        3,
        "report",
        [dataset("file", "/silver")],
        [
            _output(
                "gold",
                ["total", "n"],
                {
                    **_lineage("gold", {"total": [("silver", "amount")]}),
                    **_lineage("gold", {"n": [("silver", "amount")]}, "INDIRECT", "FILTER"),
                },
            )
        ],
    ),
    _run(4, 4, "peek", [_reads_raw()], [dataset("file", "/peek", [("rows", "long")])]),
    _load(5, 10, "string"),
    _run(
        6,
        20,
        "late",
        [_reads_raw()],
        [_output("late", ["amount"], {**_lineage("late", {"amount": [("raw", "amount")]})})],
    ),
]

VERSION_REACHES = {
    col("silver", "amount"): (1, "direct"),
    "dataset:file:/silver": (1, "direct"),
    job("clean"): (1, "direct"),
    col("gold", "total"): (2, "direct"),
    col("gold", "n"): (2, "indirect"),
    "dataset:file:/gold": (2, "direct"),
    job("report"): (2, "direct"),
    # peek reads raw and reports no column lineage: it may use amount
    job("peek"): (1, "direct"),
    "dataset:file:/peek": (1, "direct"),
}
# The contract drift is clean's: only what clean carries the change to.
CONTRACT_REACHES = {k: v for k, v in VERSION_REACHES.items() if "peek" not in k}


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return HISTORY


def _reached(drift: dict[str, Any]) -> dict[str, tuple[int, str]]:
    return {n["id"]: (n["depth"], n["impact"]) for n in drift["impact"]["nodes"]}


def _by_kind(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in body["drifts"] if d["datasetId"] == RAW}


def test_each_drift_carries_what_it_reaches_as_of_the_change(client: TestClient) -> None:
    drifts = _by_kind(client.get("/api/v2/drift").json())
    version, contract = drifts["version"], drifts["contract"]
    # late first ran after the change: the lineage of that moment does not hold it.
    assert _reached(version) == VERSION_REACHES
    assert _reached(contract) == CONTRACT_REACHES
    assert version["impact"]["asOf"] == version["changedAt"] == "2024-01-01T00:00:10Z"
    assert version["impact"]["truncated"] is False
    assert version["impact"]["summary"] == {
        "datasets": 3,
        "columns": 3,
        "jobs": 3,
        "direct": 8,
        "indirect": 1,
    }
    total = next(n for n in version["impact"]["nodes"] if n["id"] == col("gold", "total"))
    assert total["path"] == [
        col("raw", "amount"),
        job("clean"),
        col("silver", "amount"),
        job("report"),
        col("gold", "total"),
    ]
    assert total["pathEdges"] == ["direct:IDENTITY", "direct:IDENTITY"]
    n = next(n for n in version["impact"]["nodes"] if n["id"] == col("gold", "n"))
    assert n["pathEdges"] == ["direct:IDENTITY", "indirect:FILTER"]


def test_one_drift_by_its_id(client: TestClient) -> None:
    drifts = _by_kind(client.get("/api/v2/drift", params={"impact": "false"}).json())
    assert all(d["impact"] is None for d in drifts.values())
    for kind, expected in (("version", VERSION_REACHES), ("contract", CONTRACT_REACHES)):
        drift_id = drifts[kind]["id"]
        assert drift_id.startswith(f"{kind}:")
        response = client.get(f"/api/v2/drift/{quote(drift_id, safe='')}")
        assert response.status_code == 200, response.text
        one = response.json()
        assert one["id"] == drift_id and one["consumer"] == drifts[kind]["consumer"]
        assert _reached(one) == expected
    shallow = client.get(
        f"/api/v2/drift/{drifts['version']['id']}", params={"impactDepth": 1}
    ).json()
    assert {depth for depth, _ in _reached(shallow).values()} == {1}


@pytest.mark.parametrize("drift_id", ["version:nope", "contract:x", "other:1", "version:"])
def test_an_unknown_drift_is_404(client: TestClient, drift_id: str) -> None:
    assert client.get(f"/api/v2/drift/{drift_id}").status_code == 404


def test_max_nodes_truncates_and_says_so(client: TestClient) -> None:
    body = client.get("/api/v2/drift", params={"maxNodes": 2, "kind": "version"}).json()
    (version,) = [d for d in body["drifts"] if d["datasetId"] == RAW]
    assert version["impact"]["truncated"] is True and len(version["impact"]["nodes"]) <= 2
    assert client.get("/api/v2/drift", params={"maxNodes": 0}).status_code == 400


def test_csv_has_a_row_per_impacted_node(client: TestClient) -> None:
    response = client.get("/api/v2/drift", params={"format": "csv", "kind": "version"})
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    raw_rows = {r["id"]: r for r in rows if r["datasetId"] == RAW}
    assert set(raw_rows) == set(VERSION_REACHES)
    assert raw_rows[col("gold", "total")]["path"] == " > ".join(
        [
            col("raw", "amount"),
            job("clean"),
            col("silver", "amount"),
            job("report"),
            col("gold", "total"),
        ]
    )


def _cli(*args: str) -> str:
    # Wide enough that rich does not cut the paths.
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_cli_shows_and_exports_the_impact(db_url: str) -> None:
    with Store.open(db_url, migrate=True) as store:
        record(store, HISTORY)
    answer = json.loads(_cli("drift", RAW, "--format", "json", "--db", db_url))
    assert _reached(_by_kind(answer)["version"]) == VERSION_REACHES
    table = _cli("drift", RAW, "--kind", "contract", "--db", db_url)
    assert "what the drifts reach" in table and "indirect" in table
    assert "job:ns:report" in table and "job:ns:peek" not in table
    rows = list(csv.DictReader(io.StringIO(_cli("drift", RAW, "--format", "csv", "--db", db_url))))
    assert {r["id"] for r in rows if r["kind"] == "version"} == set(VERSION_REACHES)
    bare = json.loads(_cli("drift", RAW, "--no-impact", "--format", "json", "--db", db_url))
    assert all(d["impact"] is None for d in bare["drifts"])
