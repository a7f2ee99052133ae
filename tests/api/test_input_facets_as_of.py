"""A dataset facet sent on a run's input (its dataset facets, not ``inputFacets``) makes
no dataset version; ``dataset_facet_history`` keeps it per event, so on both databases
the compliance report's dataset owners and the graph's failed-assertion marks as of a
time use the one in force then, the later event recorded first, and a dataset's quality
history shows each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.classification_events import SILVER, events, ownership, run_id
from tests.api.test_quality_on_graph import _marks
from tests.api.test_root_cause import HISTORY, NS, _run
from tests.store.builders import dataset, facet, record, run_event

SILVER_DATASET = f"dataset:file:{SILVER}"
MID = f"dataset:{NS}:mid"


def _reads_silver(at: str, run: int, owner: str) -> dict[str, Any]:
    """A run that reads the silver dataset and sends its owners on the input."""
    read = dataset("file", SILVER, ownership=ownership(owner))
    return run_event("COMPLETE", at, run_id(run), job="steward", inputs=[read])


def _owners(client: TestClient, as_of: str | None) -> list[dict[str, Any]]:
    params = {"tag": "PII", **({"asOf": as_of} if as_of else {})}
    response = client.get("/api/v2/compliance", params=params)
    assert response.status_code == 200, response.text
    report = response.json()
    [found] = [item["owners"] for item in report["datasets"] if item["nodeId"] == SILVER_DATASET]
    return list(found)


def _facet_owner(name: str, current: bool) -> dict[str, Any]:
    return {"name": name, "type": "team", "source": "facet", "current": current}


def test_an_inputs_owners_changed_by_a_later_run_as_of_a_time(store: Store) -> None:
    record(store, events())
    # The later run arrives first; the earlier one still holds in between.
    record(store, [_reads_silver("2024-03-01T00:03:00Z", 31, "team:stewards")])
    record(store, [_reads_silver("2024-03-01T00:02:00Z", 30, "team:curators")])
    with TestClient(create_app(Settings(), store)) as client:
        assert _owners(client, "2024-03-01T00:01:00Z") == []
        assert _owners(client, "2024-03-01T00:02:30Z") == [_facet_owner("team:curators", False)]
        assert _owners(client, "2024-03-01T00:03:30Z") == [_facet_owner("team:stewards", False)]
        assert _owners(client, None) == [_facet_owner("team:stewards", True)]


def _checks_mid(at: str, run: int, passed: bool) -> dict[str, Any]:
    """A run that reads mid and sends assertions as the input's dataset facet."""
    read = dataset(
        NS,
        "mid",
        dataQualityAssertions=facet(
            assertions=[{"assertion": "not_null", "column": "amount", "success": passed}]
        ),
    )
    return run_event("COMPLETE", at, _run(run), job="checker", namespace=NS, inputs=[read])


@pytest.fixture
def checked(store: Store) -> Iterator[TestClient]:
    record(store, HISTORY)
    # A passing check at 03-05 recorded before the failing one at 03-04.
    record(store, [_checks_mid("2026-03-05T00:00:00Z", 41, True)])
    record(store, [_checks_mid("2026-03-04T00:00:00Z", 40, False)])
    with TestClient(create_app(Settings(), store)) as client:
        yield client


def test_failing_assertions_on_an_input_mark_it_as_of_their_time(checked: TestClient) -> None:
    assert _marks(checked) == {}
    # Before: the newest is the history's passing run of 03-02.
    assert _marks(checked, "2026-03-03T12:00:00Z") == {}
    assert _marks(checked, "2026-03-04T12:00:00Z") == {MID: 1}
    assert _marks(checked, "2026-03-05T12:00:00Z") == {}


def test_a_datasets_quality_history_shows_each_inputs_assertions(checked: TestClient) -> None:
    path = f"/api/v2/datasets/{quote(MID, safe='')}/quality"
    body = checked.get(path, params={"since": "2026-03-03T00:00:00Z"}).json()
    [line] = [s for s in body["series"] if s["assertion"] == "not_null"]
    points = [(p["time"], p["success"]) for p in line["points"]]
    assert points == [("2026-03-04T00:00:00Z", False), ("2026-03-05T00:00:00Z", True)]
