"""Namespace rules through the command line, on SQLite and PostgreSQL: a store split by
producers' spellings, ``headwater namespaces check`` naming the rules that would merge
it, ``headwater rebuild --namespace-rules`` applying them, a changed rule set reported."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.config import Settings
from headwater.server.app import open_store
from headwater.store import Store, aliases
from tests.cli.test_backup import fresh_url
from tests.store.dump import dump
from tests.store.test_namespace_aliases import CONNECT, SPARK, TRINO
from tests.support.lineage_events import stored_datasets

RULES = """
# The orders cluster, however a producer spells its bootstrap list.
[[kafka.clusters]]
name = "orders-cluster"
brokers = ["b1:9092", "b2:9092"]

[paths]
trim_trailing_slash = true

[symlinks]
resolve = true
"""
MERGED = {("kafka://orders-cluster", "orders"), ("s3://lake", "silver/orders")}


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={})
    return result.exit_code, result.stdout, result.stderr


def write_events(path: Path, *events: dict[str, Any]) -> Path:
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return path


def comparable(url: str) -> dict[str, list[str]]:
    with Store.open(url, migrate=False) as store:
        tables = dump(store)
    del tables["namespace_rules_applied"]  # holds the time the rules were taken
    return tables


def test_check_then_rebuild_with_rules_merges_what_check_found(
    db_url: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # The report names the table before any event names its location: a split.
    events = write_events(tmp_path / "events.jsonl", TRINO, CONNECT, SPARK)
    code, out, err = cli("ingest", "--db", db_url, str(events))
    assert code == 0, err
    code, out, err = cli("namespaces", "check", "--db", db_url, "--format", "json")
    assert code == 0, err
    found = json.loads(out)
    assert found["rulesInForce"] is None
    kinds = {s["kind"]: s for s in found["suspects"]}
    assert set(kinds) == {"kafka", "symlink"}
    assert kinds["kafka"]["rule"] == (
        '[[kafka.clusters]]\nname = "CLUSTER"\nbrokers = ["b1:9092", "b2:9092"]'
    )
    assert {d["nodeId"] for d in kinds["symlink"]["datasets"]} == {
        "dataset:hive://metastore:silver.orders",
        "dataset:s3://lake:silver/orders/",
    }
    code, out, _ = cli("namespaces", "check", "--db", db_url)
    assert "2 group(s) of datasets that look like one" in out and "[symlinks]" in out

    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    kind = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    into = fresh_url(kind, request, tmp_path)
    code, out, err = cli(
        "rebuild", "--from-raw", "--db", db_url, "--into", into, "--namespace-rules", str(rules)
    )
    assert code == 0, err
    assert "namespace rules applied: " in out
    with Store.open(into, migrate=False) as rebuilt:
        assert stored_datasets(rebuilt) == MERGED
        with rebuilt.engine.connect() as conn:
            assert aliases.resolve(conn, "hive://metastore", "silver.orders") == (
                "s3://lake",
                "silver/orders",
            )
    code, out, err = cli("namespaces", "check", "--db", into, "--format", "json")
    assert json.loads(out)["suspects"] == []
    assert json.loads(out)["rulesInForce"] is not None

    # The rebuilt store equals one that took the events live with the rules, its
    # location first.
    live = fresh_url("sqlite", request, tmp_path)
    events = write_events(tmp_path / "live.jsonl", CONNECT, SPARK, TRINO)
    code, _, err = cli("ingest", "--db", live, "--namespace-rules", str(rules), str(events))
    assert code == 0, err
    assert comparable(into) == comparable(live)


def test_a_store_opened_with_other_rules_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    with caplog.at_level(logging.WARNING, logger="headwater.server.app"):
        open_store(Settings(db_url=url, namespace_rules=rules)).close()  # empty: taken as is
        assert not caplog.records
        code, _, err = cli(
            "ingest",
            "--db",
            url,
            "--namespace-rules",
            str(rules),
            str(write_events(tmp_path / "e.jsonl", CONNECT)),
        )
        assert code == 0, err
        open_store(Settings(db_url=url, namespace_rules=rules)).close()
        assert not caplog.records
        rules.write_text(RULES.replace('"b2:9092"', '"b2:9092", "b3:9092"'))
        open_store(Settings(db_url=url, namespace_rules=rules)).close()
        open_store(Settings(db_url=url)).close()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert all(
        "namespace rules changed since this store was derived" in m
        and "headwater rebuild --from-raw --namespace-rules FILE" in m
        for m in messages
    )
    assert messages[1].endswith(
        "configured: no rules): new events follow the configured "
        "rules, stored ones keep the old names until "
        "`headwater rebuild --from-raw --namespace-rules FILE` derives "
        "the store again"
    )


def test_check_says_when_the_rules_are_not_those_the_store_follows(
    db_url: str, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    events = write_events(tmp_path / "e.jsonl", CONNECT, SPARK)
    code, _, err = cli("ingest", "--db", db_url, "--namespace-rules", str(rules), str(events))
    assert code == 0, err
    code, out, err = cli("namespaces", "check", "--db", db_url, "--namespace-rules", str(rules))
    assert code == 0 and "WARNING" not in err, err
    changed = tmp_path / "changed.toml"
    changed.write_text(RULES.replace('"b2:9092"', '"b2:9092", "b3:9092"'))
    for args in ([], ["--format", "json"]):
        code, out, err = cli(
            "namespaces", "check", "--db", db_url, "--namespace-rules", str(changed), *args
        )
        assert code == 0, err
        assert err.startswith("WARNING: the namespace rules changed since this store was derived")
        assert "headwater rebuild --from-raw --namespace-rules FILE" in err
    answer = json.loads(out)
    assert answer["rulesConfigured"] != answer["rulesInForce"] is not None
    assert answer["rulesChanged"] == err.removeprefix("WARNING: ").strip()
    # Without a rules file to compare with, --db reports none.
    code, out, err = cli("namespaces", "check", "--db", db_url, "--format", "json")
    assert "WARNING" not in err and json.loads(out)["rulesChanged"] is None


def test_a_bad_rules_file_is_a_clear_error_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "rules.toml"
    bad.write_text('[[kafka.clusters]]\nname = "c"\nbrokers = ["b1:9092", 7]\n')
    events = write_events(tmp_path / "e.jsonl", CONNECT)
    url = f"sqlite:///{tmp_path / 'h.db'}"
    code, _, err = cli("ingest", "--db", url, "--namespace-rules", str(bad), str(events))
    assert code == 1
    assert f"{bad}: kafka.clusters[0].brokers[1]: must be a string, got 7" in err
    bad.write_text("[paths\n")
    code, _, err = cli("ingest", "--db", url, "--namespace-rules", str(bad), str(events))
    assert code == 1 and "not valid TOML" in err and "line 1" in err
    assert "Traceback" not in err
