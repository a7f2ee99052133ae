"""Answers as of a time inside a run -- its START before, its COMPLETE after -- take the
run's facets as its events had sent them by then, on SQLite and PostgreSQL, whatever
order the events were recorded in: column lineage for classification and the
compliance report, and assertions for the failed-assertion marks on the graph.

The mirror job copies silver's customers twice over:

* run 7 STARTs at 00:00:50 copying silver's ``email`` into ``addr`` (PII) and
  COMPLETEs at 00:00:55 copying ``name`` instead (no PII);
* run 8 STARTs at 00:01:00 with no columnLineage and COMPLETEs at 00:01:05
  copying ``email`` again: between the two, run 8 had reported no lineage, so run
  7's (``name``) is in force.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.classification_events import RAW_EMAIL, SILVER, edge, events, lineage, run_id
from tests.store.builders import dataset, record, run_event

MIRROR = "/mirror/customers"
ADDR = f"datasetField:file:{MIRROR}:addr"
PII_ADDR = f"PII<-{RAW_EMAIL}"


def _mirror(run: int, event_type: str, second: int, column_lineage: Any) -> dict[str, Any]:
    facets = {} if column_lineage is None else {"columnLineage": column_lineage}
    return run_event(
        event_type,
        f"2024-03-01T00:{second // 60:02d}:{second % 60:02d}Z",
        run_id(run),
        job="mirror",
        inputs=[dataset("file", SILVER)],
        outputs=[dataset("file", MIRROR, [("addr", "string")], **facets)],
    )


MIRROR_EVENTS = [
    _mirror(7, "START", 50, lineage(addr=[edge(SILVER, "email")])),
    _mirror(7, "COMPLETE", 55, lineage(addr=[edge(SILVER, "name")])),
    _mirror(8, "START", 60, None),
    _mirror(8, "COMPLETE", 65, lineage(addr=[edge(SILVER, "email")])),
]

#: asOf -> whether mirror's addr is PII (from silver's email) then.
ADDR_IS_PII = {
    "2024-03-01T00:00:45Z": False,  # before run 7: mirror has no lineage
    "2024-03-01T00:00:50Z": True,  # run 7's START, at its very time
    "2024-03-01T00:00:52Z": True,  # inside run 7: its START's lineage
    "2024-03-01T00:00:57Z": False,  # after run 7: its COMPLETE's
    "2024-03-01T00:01:02Z": False,  # inside run 8, which sent none yet: run 7's
    "2024-03-01T00:01:10Z": True,  # after run 8
    None: True,
}

ORDERS = {
    "in order": lambda evs: [evs],
    # Every COMPLETE (and every later event) recorded before the STARTs it follows.
    "complete first": lambda evs: [list(reversed(evs))],
    "one by one, newest first": lambda evs: [[e] for e in reversed(evs)],
}


@pytest.fixture(params=list(ORDERS))
def client(request: pytest.FixtureRequest, store: Store) -> Iterator[TestClient]:
    for lot in ORDERS[request.param]([*events(), *MIRROR_EVENTS]):
        record(store, lot)
    with TestClient(create_app(Settings(), store)) as test_client:
        yield test_client


def _params(as_of: str | None, **more: str) -> dict[str, str]:
    return {**more, **({"asOf": as_of} if as_of else {})}


def test_classification_takes_a_straddling_runs_lineage_as_sent_by_then(
    client: TestClient,
) -> None:
    for as_of, pii in ADDR_IS_PII.items():
        response = client.get("/api/v2/classification", params=_params(as_of, nodeId=ADDR))
        assert response.status_code == 200, response.text
        [column] = response.json()["columns"]
        propagated = [f"{p['tag']}<-{p['origin']}" for p in column["propagated"]]
        assert propagated == ([PII_ADDR] if pii else []), as_of


def test_the_compliance_report_follows_the_lineage_in_force_then(client: TestClient) -> None:
    for as_of, pii in ADDR_IS_PII.items():
        response = client.get("/api/v2/compliance", params=_params(as_of, tag="PII"))
        assert response.status_code == 200, response.text
        report = response.json()
        assert (ADDR in {f["column"] for f in report["flows"]}) is pii, as_of
        assert ("job:ns:mirror" in {j["nodeId"] for j in report["jobs"]}) is pii, as_of
