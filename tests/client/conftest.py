"""Client test fixtures: one store loaded through the client itself, served in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from headwater.client import Client
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api import classification_events, retail_events
from tests.api.test_drift import HISTORY

# The retail graph (two days, namespace "warehouse"), the PII pipeline (namespace
# "file") and a schema history with drift: every read operation has something to say.
EVENTS = [*retail_events.events(), *classification_events.events(), *HISTORY]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("client") / "headwater.db"
    opened = Store.open(f"sqlite:///{path}", migrate=True)
    try:
        yield opened
    finally:
        opened.close()


class Recorder:
    """Every request an httpx client sends, as (method, path) pairs."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.cursors: list[str] = []  # the cursor parameters sent

    def __call__(self, request: httpx.Request) -> None:
        self.requests.append((request.method, request.url.raw_path.decode().split("?")[0]))
        if "cursor" in request.url.params:
            self.cursors.append(request.url.params["cursor"])


@pytest.fixture(scope="module")
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def app(store: Store) -> Any:
    return create_app(Settings(), store)


@pytest.fixture(scope="module")
def client(app: Any, recorder: Recorder) -> Iterator[Client]:
    """A strict client (unknown fields are errors) over a TestClient, the events loaded."""
    with TestClient(app) as http:
        http.event_hooks = {"request": [recorder], "response": []}
        with Client("http://testserver", http=http, strict=True) as loaded:
            result = loaded.ingest_batch(EVENTS, gzip=True)
            assert result.summary.failed == 0, result.failed_events
            yield loaded
