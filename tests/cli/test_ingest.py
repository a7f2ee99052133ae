"""``headwater ingest``: JSON arrays, JSON Lines, one object, stdin; into a store or a server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.store import Store
from tests.server.events import dataset_event, run_event
from tests.server.live import running_server


def count_events(db_url: str) -> int:
    with Store.open(db_url, migrate=False) as store:
        return store.counts()["events"]


def invoke(*args: str, input: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["ingest", *args], input=input, env={})
    return result.exit_code, result.stdout, result.stderr


def test_json_array_file(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_text(json.dumps([run_event(), run_event(), dataset_event()]))
    code, out, _ = invoke(str(path), "--db", db_url)
    assert code == 0, out
    assert "ingested 3 of 3 events (3 new, 0 duplicates, 0 rejected)" in out
    assert count_events(db_url) == 3


def test_jsonl_with_bad_lines_reports_them_by_line(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    good = run_event()
    lines = [json.dumps(good), "", json.dumps(run_event(run_id="nope")), "{not json",
             json.dumps(good), json.dumps(dataset_event())]
    path = tmp_path / "spool.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = invoke(str(path), "--db", db_url, "--batch-size", "2")
    assert code == 1
    assert "ingested 3 of 5 events (2 new, 1 duplicates, 2 rejected)" in out
    assert "rejected line 3: run.runId must be a UUID" in err
    assert "rejected line 4: malformed JSON" in err
    assert count_events(db_url) == 2


def test_single_pretty_printed_event_from_stdin(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    code, out, _ = invoke("-", "--db", db_url, input=json.dumps(run_event(), indent=2).encode())
    assert code == 0, out
    assert "ingested 1 of 1 events" in out
    assert count_events(db_url) == 1


def test_not_json_at_all_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("[1, 2,")
    code, _, err = invoke(str(path), "--db", f"sqlite:///{tmp_path / 'hw.db'}")
    assert code == 1
    assert "not valid JSON" in err


def test_progress_bar_on_request(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(json.dumps(run_event()) for _ in range(40)))
    code, out, err = invoke(str(path), "--db", db_url, "--progress", "--batch-size", "10")
    assert code == 0, out
    assert "ingesting" in err
    assert count_events(db_url) == 40


def test_progress_bar_counts_events_of_a_json_array(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    path = tmp_path / "many.json"
    path.write_text(json.dumps([run_event() for _ in range(30)]))
    code, out, err = invoke(str(path), "--db", db_url, "--progress", "--batch-size", "7")
    assert code == 0, out
    assert "ingesting" in err  # (the bar itself is drawn only on a terminal)
    assert count_events(db_url) == 30


def test_db_and_url_are_exclusive(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text("[]")
    code, _, err = invoke(str(path), "--db", "sqlite://", "--url", "http://127.0.0.1:1")
    assert code == 2
    assert "not both" in err


@pytest.mark.live
@pytest.mark.slow
def test_ingest_posts_to_a_running_server(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([json.dumps(run_event()), json.dumps(run_event(run_id="bad")),
                               json.dumps(dataset_event())]))
    with running_server("--db", db_url, "--api-key", "k1") as url:
        code, out, err = invoke(str(path), "--url", url, "--api-key", "k1")
        assert code == 1, out
        assert "ingested 2 of 3 events (2 new, 0 duplicates, 1 rejected)" in out
        assert "rejected line 2: run.runId" in err
        code, _, err = invoke(str(path), "--url", url, "--api-key", "wrong")
        assert code == 1
        assert "401" in err
    assert count_events(db_url) == 2


def test_progress_on_a_terminal_is_a_bar_with_events_per_second(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    path = tmp_path / "many.json"
    path.write_text(json.dumps([run_event(run_id=_run_id(i)) for i in range(30)]))
    # FORCE_COLOR makes rich take stderr for a terminal, as a tty would be.
    result = CliRunner().invoke(main, ["ingest", str(path), "--db", db_url, "--progress",
                                       "--batch-size", "7"], env={"FORCE_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "\x1b[" in result.stderr  # drawn with terminal codes, redrawn in place
    assert "━" in result.stderr and "100%" in result.stderr
    assert "events/s" in result.stderr
    assert "ingesting:" not in result.stderr  # no plain lines on a terminal
    assert count_events(db_url) == 30


def test_progress_off_a_terminal_is_periodic_plain_lines(tmp_path: Path) -> None:
    import subprocess
    import sys

    db_url = f"sqlite:///{tmp_path / 'hw.db'}"
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(json.dumps(run_event(run_id=_run_id(i))) for i in range(50)))
    # A real process whose stderr is a pipe, not a terminal; interval 0: a line per batch.
    command = [sys.executable, "-m", "headwater", "ingest", str(path), "--db", db_url,
               "--progress", "--batch-size", "10", "--status-interval", "0"]
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("ingesting: ")]
    assert len(lines) == 6, done.stderr  # one per batch of 10, and the overall one
    assert "\x1b[" not in done.stderr
    assert all("events/s" in line and "bytes)" in line for line in lines)
    assert lines[0].startswith("ingesting: 10 events (")
    assert lines[-1].startswith("ingesting: 50 events (100% of ") and "overall" in lines[-1]
    assert count_events(db_url) == 50


def _run_id(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"
