"""Server test fixtures: a real store on SQLite and PostgreSQL, an in-process app."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store


@pytest.fixture
def make_client(store: Store) -> Iterator[Any]:
    """Build a TestClient for an app with the given settings overrides, on ``store``."""
    clients: list[TestClient] = []

    def build(**settings: Any) -> TestClient:
        client = TestClient(create_app(Settings(**settings), store))
        client.__enter__()
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Any) -> TestClient:
    return make_client()  # type: ignore[no-any-return]
