"""``headwater connect watch --once`` against the real worker: events to a JSONL
file, a second run with the same state file adds nothing, bad options are
clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from headwater.cli import main
from tests.connect.helpers import delete, put, running, unique, wait_state

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_watch_once_to_a_file_then_again_sends_nothing(
    connect_worker, kafka_bootstrap, tmp_path: Path
):
    name = unique("cli-src")
    put(
        connect_worker.url,
        name,
        {
            "connector.class": "FileStreamSource",
            "file": str(tmp_path / "in.txt"),
            "topic": unique("cli"),
        },
    )
    wait_state(connect_worker.url, name, running)
    out, state = tmp_path / "events.jsonl", tmp_path / "state.json"
    args = [
        "connect",
        "watch",
        "--connect-url",
        connect_worker.url,
        "--bootstrap-servers",
        kafka_bootstrap,
        "--file",
        str(out),
        "--state",
        str(state),
        "--once",
    ]
    try:
        first = CliRunner().invoke(main, args)
        assert first.exit_code == 0, first.output
        mine = [
            e for e in map(json.loads, out.read_text().splitlines()) if e["job"]["name"] == name
        ]
        assert [e["eventType"] for e in mine] == ["START"]
        lines = out.read_text().count("\n")
        second = CliRunner().invoke(main, args)
        assert second.exit_code == 0, second.output
        assert out.read_text().count("\n") == lines
        # No destination: JSON lines on standard output.
        printed = CliRunner().invoke(
            main, args[:6] + ["--state", str(tmp_path / "s2.json"), "--once"]
        )
        assert printed.exit_code == 0, printed.output
        events = [json.loads(line) for line in printed.stdout.splitlines()]
        assert [e["eventType"] for e in events if e["job"]["name"] == name] == ["START"]
    finally:
        delete(connect_worker.url, name)


def test_watch_refuses_bad_options(tmp_path: Path):
    bad_url = CliRunner().invoke(
        main,
        [
            "connect",
            "watch",
            "--connect-url",
            "connect:8083",
            "--once",
            "--state",
            str(tmp_path / "s.json"),
        ],
    )
    assert bad_url.exit_code != 0 and "--connect-url must be http(s)" in bad_url.output
    both = CliRunner().invoke(
        main,
        [
            "connect",
            "watch",
            "--connect-url",
            "http://c:8083",
            "--url",
            "http://h:5000",
            "--file",
            str(tmp_path / "x"),
        ],
    )
    assert both.exit_code != 0 and "not both" in both.output
    interval = CliRunner().invoke(
        main, ["connect", "watch", "--connect-url", "http://c:8083", "--interval", "soon"]
    )
    assert interval.exit_code != 0 and "--interval" in interval.output


def test_deliver_through_the_http_transport_into_a_server(tmp_path: Path):
    from fastapi.testclient import TestClient

    from headwater.cli.connect import _deliver
    from headwater.config import Settings
    from headwater.connect.events import run_id_for
    from headwater.server.app import create_app
    from headwater.store import Store
    from headwater.transport.http import HttpConfig, HttpTransport
    from tests.connect.test_watcher import FakeConnect, _watcher

    fake = FakeConnect()
    fake.set("orders-sink", "RUNNING", [("RUNNING", None)])
    store = Store.open(f"sqlite:///{tmp_path / 'l.db'}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            transport = HttpTransport(HttpConfig.from_dict({"url": "http://testserver"}), client)
            _watcher(fake, _deliver(transport), tmp_path / "s.json").poll()
            run_id = run_id_for("kafka-connect://connect.example.com:8083", "orders-sink", 0)
            run = client.get(f"/api/v1/jobs/runs/{run_id}")
            assert run.status_code == 200, run.text
            assert run.json()["state"] == "RUNNING"
    finally:
        store.close()


def test_every_watch_option_and_connector_family_is_documented():
    from headwater.cli.connect import watch
    from headwater.connect.connectors import FAMILIES

    docs = (Path(__file__).resolve().parents[2] / "docs" / "connect.md").read_text()
    for param in watch.params:
        for option in param.opts:
            assert f"`{option}" in docs, option
    for connector_class in FAMILIES:
        assert f"`{connector_class}`" in docs, connector_class
