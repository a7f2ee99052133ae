"""``headwater retention --keep``: deletes the old runs of a store and says what it did."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from click.testing import CliRunner

from headwater.cli import main
from headwater.events import parse_event
from headwater.store import Store
from headwater.store import tables as t
from tests.store.builders import run_event


def test_retention_command_deletes_runs_older_than_the_window(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hw.db'}"
    now = datetime.now(UTC).replace(tzinfo=None)
    old = [
        run_event(
            "COMPLETE",
            (now - timedelta(days=d)).isoformat() + "Z",
            str(uuid.uuid4()),
            job="nightly",
        )
        for d in (200, 150, 100)
    ]
    new = run_event(
        "COMPLETE", (now - timedelta(days=2)).isoformat() + "Z", str(uuid.uuid4()), job="nightly"
    )
    with Store.open(url) as store:
        store.record([parse_event(e) for e in [*old, new]])
    result = CliRunner().invoke(
        main, ["retention", "--keep", "90d", "--db", url, "--settle", "0"], env={}
    )
    assert result.exit_code == 0, result.output
    # The job's latest run before the window is its version at the window's start: kept.
    assert "deleted 2 runs, 2 raw events" in result.output
    assert "kept 1 older runs" in result.output
    with Store.open(url) as store, store.engine.connect() as conn:
        assert set(conn.scalars(sa.select(t.runs.c.uuid))) == {
            old[2]["run"]["runId"],
            new["run"]["runId"],
        }
    bad = CliRunner().invoke(main, ["retention", "--keep", "soon", "--db", url], env={})
    assert bad.exit_code == 2 and "--keep" in bad.output
