"""``headwater tags ...`` and ``headwater compliance`` on a database (both kinds) and
against a server, answering as the API does."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.classification_events import (
    GOLD_CONTACT,
    RAW_EMAIL,
    SILVER,
    SILVER_EMAIL,
    SILVER_HASH,
    events,
)
from tests.store.builders import record
from tests.support.cli_server import serve_cli_from

BEFORE_GOLD_V2 = "2024-03-01T00:00:30Z"


def _cli(*args: str, code: int = 0) -> str:
    # Wide enough that rich wraps no table cell.
    result = CliRunner(env={"COLUMNS": "300"}).invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def filled(db_url: str) -> str:
    with Store.open(db_url, migrate=True) as store:
        record(store, events())
    return db_url


def test_show_and_datasets(filled: str) -> None:
    answer = json.loads(_cli("tags", "show", SILVER_EMAIL, "--format", "json", "--db", filled))
    [item] = answer["columns"][0]["propagated"]
    assert item["origin"] == RAW_EMAIL
    table = _cli("tags", "show", f"dataset:file:{SILVER}", "--db", filled)
    assert "PII from /raw/customers.email via job silver" in table
    assert "masking" in table
    then = json.loads(_cli("tags", "show", GOLD_CONTACT, "--as-of", BEFORE_GOLD_V2,
                           "--format", "json", "--db", filled))
    assert [p["tag"] for p in then["columns"][0]["propagated"]] == ["PII"]
    badges = json.loads(_cli("tags", "datasets", "--format", "json", "--db", filled))
    assert {d["nodeId"] for d in badges["datasets"]} == {
        "dataset:file:/raw/customers", f"dataset:file:{SILVER}"}
    assert "asOf must be an ISO-8601 time" in _cli(
        "tags", "show", SILVER_EMAIL, "--as-of", "soon", "--db", filled, code=1)


def test_define_block_unblock(filled: str) -> None:
    _cli("tags", "define", "PII", "--no-propagates", "--db", filled)
    assert "no" in _cli("tags", "definitions", "--db", filled)
    shown = json.loads(_cli("tags", "show", SILVER_EMAIL, "--format", "json", "--db", filled))
    assert shown["columns"][0]["propagated"] == []
    _cli("tags", "undefine", "PII", "--db", filled)
    out = _cli("tags", "block", "--job", "job:ns:silver", "--source", RAW_EMAIL, "--target",
               SILVER_EMAIL, "--reason", "tokenised", "--db", filled)
    block_id = out.split()[1]
    shown = json.loads(_cli("tags", "show", SILVER_EMAIL, "--format", "json", "--db", filled))
    assert shown["columns"][0]["stopped"][0]["block"] == int(block_id)
    listed = json.loads(_cli("tags", "blocks", "--format", "json", "--db", filled))
    assert [b["reason"] for b in listed["blocks"]] == ["tokenised"]
    _cli("tags", "unblock", block_id, "--db", filled)
    assert json.loads(_cli("tags", "blocks", "--format", "json", "--db", filled))["blocks"] == []
    assert "both ends" in _cli("tags", "block", "--job", "job:ns:silver", "--source",
                               RAW_EMAIL, "--db", filled, code=1)
    assert "not found" in _cli("tags", "block", "--job", "job:ns:nope", "--db", filled, code=1)


def test_compliance_formats(filled: str, tmp_path: Path) -> None:
    table = _cli("compliance", "--tag", "PII", "--as-of", BEFORE_GOLD_V2, "--db", filled)
    assert "2 columns reached, 1 stops" in table and "team:silver" in table
    report = json.loads(_cli("compliance", RAW_EMAIL, "--format", "json", "--db", filled))
    assert [f["column"] for f in report["flows"]] == [SILVER_EMAIL]
    out = tmp_path / "report.csv"
    _cli("compliance", "--tag", "PII", "--format", "csv", "--out", str(out), "--db", filled)
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["kind"], r["column"]) for r in rows] == [("flow", SILVER_EMAIL),
                                                        ("stop", SILVER_HASH)]
    assert "give a NODE, a --tag, or both" in _cli("compliance", "--db", filled, code=2)


def test_cli_asks_the_server(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(db_url, migrate=True) as store:
        record(store, events())
        with TestClient(create_app(Settings(), store)) as client:
            serve_cli_from(monkeypatch, client, "http://tags.test")
            server = ("--url", "http://tags.test")
            on_db = json.loads(_cli("tags", "show", f"dataset:file:{SILVER}", "--format",
                                    "json", "--db", db_url))
            assert json.loads(_cli("tags", "show", f"dataset:file:{SILVER}", "--format", "json",
                                   *server)) == on_db
            csv_db = _cli("compliance", "--tag", "PII", "--format", "csv", "--db", db_url)
            assert _cli("compliance", "--tag", "PII", "--format", "csv", *server) == csv_db
            out = _cli("tags", "block", "--job", "job:ns:silver", "--tag", "PII", *server)
            assert out.startswith("block 1 in force")
            _cli("tags", "define", "finance", "--propagates", *server)
            assert "finance" in _cli("tags", "definitions", *server)
            _cli("tags", "unblock", "1", *server)
            assert "no block 1 in force" in _cli("tags", "unblock", "1", *server, code=1)
            _cli("owners", "add", f"dataset:file:{SILVER}", "bob", *server)
            assert "bob  from api" in _cli("owners", "show", f"dataset:file:{SILVER}", *server)
            _cli("owners", "remove", f"dataset:file:{SILVER}", "bob", *server)
            assert "has no owner" in _cli("owners", "show", f"dataset:file:{SILVER}", *server)


def test_owners(filled: str) -> None:
    node = f"dataset:file:{SILVER}"
    assert "has no owner" in _cli("owners", "show", node, "--db", filled)
    _cli("owners", "add", node, "alice", "--type", "user", "--db", filled)
    assert "alice (user)  from api" in _cli("owners", "show", node, "--db", filled)
    shown = json.loads(_cli("owners", "show", "job:ns:silver", "--format", "json", "--db", filled))
    assert shown["owners"] == [{"name": "team:silver", "type": "team", "source": "facet"}]
    _cli("owners", "remove", node, "alice", "--type", "user", "--db", filled)
    assert "not an owner" in _cli("owners", "remove", node, "alice", "--db", filled, code=1)
    assert "not found" in _cli("owners", "add", "dataset:file:/nope", "x", "--db", filled, code=1)
