"""``headwater export``, ``import`` and ``rebuild --from-raw`` give back the same store.

A generated history (jobs chained through datasets, two producers, schema
changes, DatasetEvents and JobEvents) is recorded in shuffled lots with
duplicates into store A. Exported and imported into store B (SQLite to
PostgreSQL and back), and rebuilt from A's raw log into store C, each must
dump (``tests/store/dump.py``) exactly as A does, with three things left out
of the comparison: surrogate ids (arrival order), ``events.received_at``
(the clock) and the ``quarantine`` table (refused events are not in the raw
log, so export does not carry them; A holds one on purpose). ``rebuild``
copies the quarantine and the access tokens as they are, which is checked apart.
"""

from __future__ import annotations

import gzip
import json
import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.server.ingest import ingest_batch
from headwater.store import Store
from headwater.store.access import create_token, list_tokens
from tests.store.builders import record
from tests.store.dump import dump
from tests.store.generate import generate
from tests.support.pgcluster import PgCluster

EVENTS = 1_500


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={})
    return result.exit_code, result.stdout, result.stderr


def fill(url: str, *, seed: int = 5) -> dict[str, list[str]]:
    """Store A: the history in shuffled lots with 10% repeats, one refused event; its dump."""
    rng = random.Random(seed)
    events = generate(EVENTS, seed=seed)
    replay = events + rng.sample(events, len(events) // 10)
    rng.shuffle(replay)
    with Store.open(url) as store:
        i = 0
        while i < len(replay):
            size = rng.choice((1, 13, 200, 500, 777))
            record(store, replay[i:i + size])
            i += size
        outcome = ingest_batch(store, [{"eventTime": "yesterday", "producer": "x"}])
        assert len(outcome.failed) == 1
        assert store.counts()["events"] == len(events)
        return comparable(store)


def comparable(store: Store) -> dict[str, list[str]]:
    tables = dump(store)
    del tables["quarantine"]
    return tables


def dumped(url: str) -> dict[str, list[str]]:
    with Store.open(url, migrate=False) as store:
        return comparable(store)


def assert_same(actual: dict[str, list[str]], expected: dict[str, list[str]]) -> None:
    assert set(actual) == set(expected)
    differ = [table for table in expected if actual[table] != expected[table]]
    assert not differ, f"{differ} differ"
    # Not vacuous: every fact table holds rows.
    for table in ("events", "runs", "dataset_versions", "job_versions", "column_lineage",
                  "facets", "event_subjects", "run_input_versions"):
        assert expected[table], table


def fresh_url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / f'{uuid.uuid4().hex[:8]}.db'}"
    cluster: PgCluster | None = request.getfixturevalue("pg_cluster")
    if cluster is None:
        pytest.skip("needs a throwaway PostgreSQL cluster for a second database")
    return cluster.create_database(f"t_{uuid.uuid4().hex[:12]}")


def exported_lines(path: Path) -> list[bytes]:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        return handle.read().splitlines()


@pytest.mark.slow
def test_export_then_import_into_the_other_database_and_back(
    db_url: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    expected = fill(db_url)
    other = "postgresql" if db_url.startswith("sqlite") else "sqlite"

    first = tmp_path / "a.jsonl.gz"
    code, _, err = cli("export", "--db", db_url, "--out", str(first))
    assert code == 0, err
    assert f"exported {len(expected['events'])} events" in err
    lines = exported_lines(first)
    assert len(lines) == len(expected["events"])
    # Oldest first, ties by hash: the order of the canonical payloads' (time, hash).
    with Store.open(db_url, migrate=False) as store:
        from headwater.store import raw_log

        assert [p.encode() for _, p in raw_log.payloads(store.engine, page=97)] == lines

    b_url = fresh_url(other, request, tmp_path)
    code, out, err = cli("import", "--db", b_url, str(first))
    assert code == 0, err
    n = len(lines)
    assert f"imported {n} of {n} events ({n} new, 0 already stored, 0 refused)" in out
    assert_same(dumped(b_url), expected)

    # And back: B's export is byte for byte A's, and imports into a third store.
    second = tmp_path / "b.jsonl"
    code, _, err = cli("export", "--db", b_url, "--out", str(second))
    assert code == 0, err
    assert second.read_bytes().splitlines() == lines
    back = fresh_url(db_url.split(":")[0].split("+")[0], request, tmp_path)
    code, out, err = cli("import", "--db", back, str(second))
    assert code == 0, err
    assert_same(dumped(back), expected)
    # Importing the same file again stores nothing new.
    code, out, _ = cli("import", "--db", back, str(second))
    assert code == 0
    assert f"(0 new, {n} already stored, 0 refused)" in out


@pytest.mark.slow
def test_rebuild_from_raw_gives_an_identical_store_and_leaves_the_old_one(
    db_url: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    fill(db_url, seed=9)
    with Store.open(db_url, migrate=False) as store:
        _, token = create_token(store.engine, "ci", ["ingest"])
    before = expected = dumped(db_url)
    kind = "sqlite" if db_url.startswith("sqlite") else "postgresql"
    args = ["rebuild", "--from-raw", "--db", db_url]
    if kind == "postgresql":
        code, _, err = cli(*args)
        assert code != 0 and "needs --into" in err
        into = fresh_url(kind, request, tmp_path)
        args += ["--into", into]
    code, out, err = cli(*args)
    assert code == 0, err
    n = len(expected["events"])
    assert f"rebuilt {n} of {n} events into" in out
    assert ("carried over: 1 rows of quarantine, 1 rows of api_tokens, 0 rows of audit_log"
            in out)
    assert "not carried over" not in err
    if kind == "sqlite":
        [built] = [p for p in tmp_path.glob("headwater.rebuilt-*.db")]
        into = f"sqlite:///{built}"
    assert_same(dumped(into), expected)
    assert dumped(db_url) == before  # the rebuilt store is only read
    # The tables no event can make again come over as they were: a swapped-in
    # store keeps its tokens (so it does not answer everyone) and its quarantine.
    with Store.open(db_url, migrate=False) as old, Store.open(into, migrate=False) as new:
        for table in ("quarantine", "api_tokens"):
            assert dump(new)[table] == dump(old)[table] != []
        assert [t.digest for t in list_tokens(new.engine)] == [token.digest]

    # A store that already holds events is not rebuilt into.
    code, _, err = cli("rebuild", "--from-raw", "--db", db_url, "--into", into)
    assert code != 0 and "is not empty" in err


def test_import_reports_and_quarantines_what_it_refuses(tmp_path: Path) -> None:
    good = generate(3, seed=1)[:3]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([json.dumps(good[0]), "{broken", json.dumps({"eventTime": "x"}),
                               json.dumps(good[1]), json.dumps(good[2])]) + "\n")
    url = f"sqlite:///{tmp_path / 'hw.db'}"
    code, out, err = cli("import", "--db", url, str(path))
    assert code == 1
    assert "imported 3 of 5 events (3 new, 0 already stored, 2 refused)" in out
    assert "refused line 2:" in err and "refused line 3:" in err
    with Store.open(url, migrate=False) as store:
        counts = store.counts()
    assert counts["events"] == 3
    assert counts["quarantine"] == 1  # the undecodable line never reached the write path
