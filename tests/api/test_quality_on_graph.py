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


def _marks(client: TestClient, as_of: str | None = None) -> dict[str, int]:
    params = {"nodeId": GOLD, "direction": "upstream"}
    if as_of is not None:
        params["asOf"] = as_of
    body = client.get("/api/v2/lineage", params=params).json()
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


def test_as_of_a_time_the_assertions_sent_by_then_mark_a_node(store: Store) -> None:
    """With ``asOf``, the mark comes from the newest assertions sent at or before it."""
    with TestClient(create_app(Settings(), store)) as client:
        record(
            store,
            [
                run_event(
                    "COMPLETE",
                    "2026-03-03T00:00:00Z",
                    _run(20),
                    job="dq",
                    namespace=NS,
                    inputs=[_assertions(("not_null", "amount", False), ("unique", "id", False))],
                )
            ],
        )
        assert _marks(client) == {f"dataset:{NS}:mid": 2}
        # Before the later failures mid's assertions passed: no mark then.
        assert _marks(client, "2026-03-02T05:00:00Z") == {}
        # Between the failing run and the passing one: marked, with that run's count.
        assert _marks(client, "2026-03-02T03:00:00Z") == {f"dataset:{NS}:mid": 1}
        # Before any assertion: none.
        assert _marks(client, "2026-03-01T06:00:00Z") == {}


def _dataset_event(time: str, *results: tuple[str, str, bool]) -> dict[str, Any]:
    """A DatasetEvent on mid at ``time`` carrying assertions: a version of its own."""
    return {
        "eventTime": time,
        "producer": "https://example.com/quality-checker",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": NS,
            "name": "mid",
            "facets": {
                "dataQualityAssertions": {
                    "_producer": "https://example.com/quality-checker",
                    "_schemaURL": "https://example.com/DataQualityAssertionsDatasetFacet.json",
                    "assertions": [
                        {"assertion": a, "column": c, "success": s} for a, c, s in results
                    ],
                }
            },
        },
    }


def test_as_of_a_time_a_datasets_own_assertions_replaced_later_still_mark_it(
    store: Store,
) -> None:
    """Assertions sent on the dataset itself (DatasetEvents) answer as of a time with the
    one in force then, the later one arriving first: it does not hide the earlier."""
    record(store, [_dataset_event("2026-03-05T00:00:00Z", ("not_null", "amount", True))])
    record(store, [_dataset_event("2026-03-04T00:00:00Z", ("not_null", "amount", False))])
    with TestClient(create_app(Settings(), store)) as client:
        assert _marks(client) == {}
        assert _marks(client, "2026-03-04T12:00:00Z") == {f"dataset:{NS}:mid": 1}
        assert _marks(client, "2026-03-05T12:00:00Z") == {}
        assert _marks(client, "2026-03-03T12:00:00Z") == {}
