"""The client's data quality read against an in-process app holding quality facets:
decoded strictly and checked against the raw answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from headwater.client import Client, NotFound
from headwater.client.operations import headwater as v2
from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.test_quality import HISTORY, ORDERS
from tests.client.test_client_reads import check


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    path: Path = tmp_path_factory.mktemp("quality") / "headwater.db"
    store = Store.open(f"sqlite:///{path}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as http:
            loaded = Client("http://testserver", http=http, strict=True)
            assert loaded.ingest_batch(HISTORY).summary.failed == 0
            yield loaded
    finally:
        store.close()


def test_quality_latest_series_and_observations(client: Client) -> None:
    answer = check(client, v2.quality(ORDERS))
    assert answer.datasetId == ORDERS
    assert {m.metric: m.value for m in answer.latest.metrics}["rowCount"] == 121
    assert answer.latest.failedAssertions == 1
    failed = next(a for a in answer.latest.assertions if not a.success)
    assert (failed.assertion, failed.column, failed.actual) == ("not_null", "email", "2")
    rows = next(s for s in answer.series if s.metric == "rowCount" and s.column is None)
    assert [p.value for p in rows.points] == [100, 120, 121]
    assert answer.observations[0].columnMetrics["email"]["nullCount"] == 0
    early = check(client, v2.quality(ORDERS, until="2024-01-01T00:00:03Z"))
    assert early.latest.failedAssertions == 0
    with pytest.raises(NotFound):
        client.quality("dataset:file:/nowhere")
