"""Connectors on the session's real Connect worker, and a watcher that keeps what it sends."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from headwater.connect import ConnectClient, ConnectWatcher

__all__ = ["Collected", "delete", "put", "unique", "wait_state", "watcher_for"]


def unique(label: str) -> str:
    # The worker is shared by the session: every test names connectors of its own.
    return f"{label}-{uuid.uuid4().hex[:8]}"


def put(url: str, name: str, config: dict[str, str]) -> None:
    answer = httpx.put(f"{url}/connectors/{name}/config", json=config, timeout=30)
    assert answer.status_code in (200, 201), answer.text


def delete(url: str, name: str) -> None:
    answer = httpx.delete(f"{url}/connectors/{name}", timeout=30)
    assert answer.status_code in (204, 404), answer.text


def wait_state(
    url: str, name: str, check: Callable[[dict[str, Any]], bool], timeout: float = 60
) -> dict[str, Any]:
    """The connector's status once ``check`` accepts it."""
    deadline = time.monotonic() + timeout
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        answer = httpx.get(f"{url}/connectors/{name}/status", timeout=10)
        if answer.status_code == 200:
            status = answer.json()
            if check(status):
                return status
        time.sleep(0.2)
    raise AssertionError(f"{name} never reached the expected state: {status}")


def running(status: dict[str, Any]) -> bool:
    return (
        status["connector"]["state"] == "RUNNING"
        and bool(status["tasks"])
        and all(t["state"] == "RUNNING" for t in status["tasks"])
    )


class Collected:
    """An ``emit`` that keeps every event, and can be told to fail."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.fail_next = False

    def __call__(self, events: list[dict[str, Any]]) -> None:
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("the destination is down")
        self.events.extend(events)

    def of(self, job: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["job"]["name"] == job]


def watcher_for(url: str, bootstrap: str, state: Path, emit: Collected) -> ConnectWatcher:
    return ConnectWatcher(ConnectClient(url), emit, bootstrap_servers=bootstrap, state_path=state)
