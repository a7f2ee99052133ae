"""Owners as of a time, on both databases: a job's ``ownership`` facets kept per event
(a later JobEvent changes the owner, an earlier time still answers with the old one),
owners set through the API kept from their PUT to their DELETE, and a dataset's from
DatasetEvents, kept with the version each makes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.classification_events import events, ownership
from tests.store.builders import PRODUCER, record

JOB_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
SILVER_JOB, SILVER_DATASET = "job:ns:silver", "dataset:file:/silver/customers"


def _owner_event(at: str, *names: str) -> dict[str, Any]:
    """A JobEvent that changes the silver job's owners and declares nothing."""
    return {
        "eventTime": at,
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT,
        "job": {"namespace": "ns", "name": "silver", "facets": {"ownership": ownership(*names)}},
    }


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    # silver's runs send team:silver at 00:00:11; the JobEvent hands it to team:privacy
    # at 00:01:00, recorded first (the later facet arrives before the earlier one).
    record(store, [_owner_event("2024-03-01T00:01:00Z", "team:privacy")])
    record(store, events())
    with TestClient(create_app(Settings(), store)) as test_client:
        yield test_client


def _owners(client: TestClient, as_of: str | None) -> dict[str, list[dict[str, Any]]]:
    params = {"tag": "PII", **({"asOf": as_of} if as_of else {})}
    response = client.get("/api/v2/compliance", params=params)
    assert response.status_code == 200, response.text
    report = response.json()
    return {item["nodeId"]: item["owners"] for item in report["datasets"] + report["jobs"]}


def _facet(name: str, current: bool) -> dict[str, Any]:
    return {"name": name, "type": "team", "source": "facet", "current": current}


def test_a_jobs_facet_owners_as_of_before_between_and_after_a_change(client: TestClient) -> None:
    # At its START silver's run had sent neither its lineage nor its owners (its COMPLETE
    # at 00:00:11 sends both): no PII flows through the job yet, so the report leaves it out.
    assert SILVER_JOB not in _owners(client, "2024-03-01T00:00:10Z")
    assert _owners(client, "2024-03-01T00:00:30Z")[SILVER_JOB] == [_facet("team:silver", False)]
    assert _owners(client, "2024-03-01T00:01:00Z")[SILVER_JOB] == [_facet("team:privacy", False)]
    assert _owners(client, None)[SILVER_JOB] == [_facet("team:privacy", True)]
    # The current owners are the latest facet's, whatever the arrival order.
    latest = client.get("/api/v2/owners", params={"nodeId": SILVER_JOB}).json()["owners"]
    assert latest == [{"name": "team:privacy", "type": "team", "source": "facet"}]


def _moment() -> str:
    """Now, between two API calls (the store's times are the wall clock's, to the µs)."""
    time.sleep(0.002)
    moment = datetime.now(UTC).isoformat()
    time.sleep(0.002)
    return moment


def test_api_owners_as_of_before_between_and_after_put_and_delete(client: TestClient) -> None:
    owner = {"nodeId": SILVER_DATASET, "name": "alice", "type": "user"}
    before = _moment()
    assert client.put("/api/v2/owners", json=owner).status_code == 200
    while_owner = _moment()
    assert client.delete("/api/v2/owners", params=owner).status_code == 204
    after_delete = _moment()
    assert client.put("/api/v2/owners", json=owner).status_code == 200
    again = _moment()
    alice = {"name": "alice", "type": "user", "source": "api"}
    assert _owners(client, before)[SILVER_DATASET] == []
    assert _owners(client, while_owner)[SILVER_DATASET] == [{**alice, "current": False}]
    assert _owners(client, after_delete)[SILVER_DATASET] == []
    assert _owners(client, again)[SILVER_DATASET] == [{**alice, "current": False}]
    assert _owners(client, None)[SILVER_DATASET] == [{**alice, "current": True}]
    # Taking it off for good: answers as of earlier times keep both spans.
    assert client.delete("/api/v2/owners", params=owner).status_code == 204
    assert client.delete("/api/v2/owners", params=owner).status_code == 404
    assert _owners(client, None)[SILVER_DATASET] == []
    assert _owners(client, while_owner)[SILVER_DATASET] == [{**alice, "current": False}]
    assert _owners(client, again)[SILVER_DATASET] == [{**alice, "current": False}]
    assert _owners(client, after_delete)[SILVER_DATASET] == []


def _dataset_owner_event(at: str, *names: str) -> dict[str, Any]:
    """A DatasetEvent that changes the silver dataset's owners: a version of its own."""
    return {
        "eventTime": at,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": "file",
            "name": "/silver/customers",
            "facets": {"ownership": ownership(*names)},
        },
    }


def test_a_datasets_owners_from_dataset_events_as_of_a_time(
    client: TestClient, store: Store
) -> None:
    # The later DatasetEvent arrives first; the earlier one still holds in between.
    record(store, [_dataset_owner_event("2024-03-01T00:03:00Z", "team:stewards")])
    record(store, [_dataset_owner_event("2024-03-01T00:02:00Z", "team:curators")])
    at = "2024-03-01T00:02:30Z"
    assert _owners(client, at)[SILVER_DATASET] == [_facet("team:curators", False)]
    at = "2024-03-01T00:03:00Z"
    assert _owners(client, at)[SILVER_DATASET] == [_facet("team:stewards", False)]
    assert _owners(client, None)[SILVER_DATASET] == [_facet("team:stewards", True)]
