"""API test fixtures: the retail events ingested through POST /api/v1/lineage/batch
into a real store (SQLite and PostgreSQL), read back through an in-process app."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.retail_events import events
from tests.store.builders import record


@pytest.fixture
def history() -> list[dict[str, Any]]:
    """Events recorded in ``store`` before ``client``'s app starts: none, unless a test
    module overrides this fixture with its own."""
    return []


@pytest.fixture
def client(store: Store, history: list[dict[str, Any]]) -> Iterator[TestClient]:
    if history:
        record(store, history)
    with TestClient(create_app(Settings(), store)) as test_client:
        yield test_client


@pytest.fixture
def retail(client: TestClient) -> TestClient:
    """``client`` after ingesting the retail events through the ingestion API."""
    response = client.post("/api/v1/lineage/batch", json=events())
    assert response.status_code < 300, response.text
    return client
