"""File (JSONL) and console transports, the type registry, and the spool files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from headwater.errors import ConfigError
from headwater.transport import create_transport, transport_types
from headwater.transport.base import DeliveryError
from headwater.transport.console import ConsoleTransport
from headwater.transport.file import FileTransport
from headwater.transport.http import HttpTransport
from headwater.transport.spool import Spool


def test_file_transport_appends_one_json_object_per_line(tmp_path: Path) -> None:
    location = tmp_path / "nested" / "events.jsonl"
    transport = create_transport({"type": "file", "location": str(location)})
    assert isinstance(transport, FileTransport)
    transport.emit({"a": 1})
    assert transport.emit_batch([{"b": 2}, {"c": "x\ny"}]) == []
    lines = location.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"a": 1}, {"b": 2}, {"c": "x\ny"}]


def test_file_transport_accepts_the_python_client_key(tmp_path: Path) -> None:
    transport = create_transport({"type": "file", "log_file_path": str(tmp_path / "e.jsonl")})
    transport.emit({"a": 1})
    assert (tmp_path / "e.jsonl").exists()


def test_file_transport_failure_is_a_delivery_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    transport = create_transport({"type": "file", "location": str(blocker / "events.jsonl")})
    with pytest.raises(DeliveryError):
        transport.emit({"a": 1})


def test_console_transport_logs_at_info(caplog: pytest.LogCaptureFixture) -> None:
    transport = create_transport({"type": "console"})
    assert isinstance(transport, ConsoleTransport)
    with caplog.at_level(logging.INFO, logger="headwater.transport.console"):
        transport.emit({"eventType": "START"})
    assert json.loads(caplog.records[-1].getMessage()) == {"eventType": "START"}


def test_factory_knows_the_types_and_names_an_unknown_one() -> None:
    assert transport_types() == ["console", "file", "http", "kafka"]
    assert isinstance(create_transport({"type": "http", "url": "http://127.0.0.1:1"}), HttpTransport)
    with pytest.raises(ConfigError, match="transport.type 'carrier-pigeon'"):
        create_transport({"type": "carrier-pigeon"})
    with pytest.raises(ConfigError, match="transport.location"):
        create_transport({"type": "file"})


def test_spool_round_trip_claims_other_files_only(tmp_path: Path) -> None:
    earlier = Spool(tmp_path)
    earlier.append([{"n": 1}, {"n": 2}])
    earlier.reject([{"bad": True}])
    (tmp_path / "spool-garbage.jsonl").write_text('{"n": 3}\nnot json\n[1]\n')
    current = Spool(tmp_path)
    current.append([{"mine": True}])
    claimed = {path.name.split(".")[0]: events for path, events in current.claim()}
    assert sorted(claimed.values(), key=len) == [[{"n": 3}], [{"n": 1}, {"n": 2}]]
    # The current process's own file and the rejected file are never claimed.
    assert current.path.exists()
    assert earlier.rejected_path.exists()
    assert list(current.claim()) == []


def test_spool_writer_reopens_a_file_renamed_under_it(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    spool.append([{"n": 1}])
    spool.path.rename(tmp_path / "elsewhere.jsonl")
    spool.append([{"n": 2}])
    assert spool.path.read_text().splitlines() == ['{"n":2}']
