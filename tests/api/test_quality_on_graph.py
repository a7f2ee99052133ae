"""Failed assertions marked on the lineage graph: a dataset node of ``/api/v2/lineage``
carries ``failedAssertions`` while its newest assertions have failures, on both databases."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.test_root_cause import GOLD, HISTORY, NS, _assertions, _run
from tests.store.builders import record, run_event


@pytest.fixture
def store(db_url: str) -> Any:
    opened = Store.open(db_url, migrate=True)
    record(opened, HISTORY)
    try:
        yield opened
    finally:
        opened.close()


def _marks(client: TestClient) -> dict[str, int]:
    body = client.get("/api/v2/lineage", params={"nodeId": GOLD, "direction": "upstream"}).json()
    return {
        n["id"]: n["data"]["failedAssertions"]
        for n in body["nodes"]
        if n["data"] and "failedAssertions" in n["data"]
    }


def test_only_the_newest_assertions_mark_a_node(store: Store) -> None:
    with TestClient(create_app(Settings(), store)) as client:
        # mid's assertions failed, then passed: no mark.
        assert _marks(client) == {}
        record(
            store,
            [
                run_event(
                    "COMPLETE",
                    "2026-03-03T00:00:00Z",
                    _run(20),
                    job="dq",
                    namespace=NS,
                    inputs=[
                        _assertions(
                            ("not_null", "amount", False),
                            ("unique", "id", False),
                            ("accepted_values", "amount", True),
                        )
                    ],
                )
            ],
        )
        assert _marks(client) == {f"dataset:{NS}:mid": 2}
