"""Answers as of a time inside a run -- its START before, its COMPLETE after -- take the
run's facets as its events had sent them by then, on SQLite and PostgreSQL, whatever
order the events were recorded in: column lineage for classification and the
compliance report, and assertions for the failed-assertion marks on the graph; and a
time window ending inside a run -- root cause, quality history -- takes its assertions
as sent before the window's end.

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
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.classification_events import RAW_EMAIL, SILVER, edge, events, lineage, run_id
from tests.api.test_root_cause import NS, _assertions, _run
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


# -- assertions ------------------------------------------------------------------------

MID = f"dataset:{NS}:mid"


def _check(event_type: str, hour: int, run: int, *results: tuple[str, str, bool]) -> Any:
    return run_event(
        event_type,
        f"2026-03-10T{hour:02d}:00:00Z",
        _run(run),
        job="dq",
        namespace=NS,
        inputs=[_assertions(*results)],
        outputs=[dataset(NS, "report")],
    )


ASSERTION_EVENTS = [
    # Run 40 finds two failures.
    _check("COMPLETE", 1, 40, ("not_null", "amount", False), ("unique", "id", False)),
    # Run 41 STARTs with every assertion passing; its COMPLETE brings one failure.
    _check("START", 3, 41, ("not_null", "amount", True), ("unique", "id", True)),
    _check("COMPLETE", 5, 41, ("not_null", "amount", False), ("unique", "id", True)),
]

#: asOf -> mid's failedAssertions mark then (absent: none).
MARKS = {
    "2026-03-10T00:00:00Z": None,  # before any assertion
    "2026-03-10T02:00:00Z": 2,  # run 40's
    "2026-03-10T04:00:00Z": None,  # inside run 41: its START's, all passing
    "2026-03-10T06:00:00Z": 1,  # after run 41's COMPLETE
    None: 1,
}


@pytest.mark.parametrize("order", list(ORDERS))
def test_assertions_a_run_sends_after_as_of_do_not_mark_the_node_then(
    store: Store, order: str
) -> None:
    for lot in ORDERS[order](ASSERTION_EVENTS):
        record(store, lot)
    with TestClient(create_app(Settings(), store)) as client:
        for as_of, mark in MARKS.items():
            response = client.get(
                "/api/v2/lineage", params=_params(as_of, nodeId=MID, direction="downstream")
            )
            assert response.status_code == 200, response.text
            [node] = [n for n in response.json()["nodes"] if n["id"] == MID]
            assert (node["data"] or {}).get("failedAssertions") == mark, as_of


# -- time windows ----------------------------------------------------------------------

REPORT_ROOT_CAUSE = f"/api/v2/datasets/{quote(f'dataset:{NS}:report', safe='')}/root-cause"
SINCE = "2026-03-10T02:00:00Z"  # after run 40's failures, so only run 41's can show

WINDOW_EVENTS = [
    *ASSERTION_EVENTS,
    # Run 42 STARTs at 07:00 failing unique(id); its COMPLETE at 09:00 passes everything.
    _check("START", 7, 42, ("not_null", "amount", True), ("unique", "id", False)),
    _check("COMPLETE", 9, 42, ("not_null", "amount", True), ("unique", "id", True)),
]

#: until -> (run, failed assertions) of the quality failures in [SINCE, until).
WINDOW_FAILURES: dict[str, list[tuple[int, list[str]]]] = {
    "2026-03-10T04:00:00Z": [],  # inside run 41: its START passes every assertion
    "2026-03-10T06:00:00Z": [(41, ["not_null"])],  # after run 41's COMPLETE
    "2026-03-10T08:00:00Z": [(41, ["not_null"]), (42, ["unique"])],  # inside run 42: its START
    "2026-03-10T10:00:00Z": [(41, ["not_null"])],  # after run 42's COMPLETE, all passing
}


@pytest.mark.parametrize("order", ["in order", "complete first"])
def test_a_window_takes_a_straddling_runs_assertions_as_sent_before_its_end(
    store: Store, order: str
) -> None:
    for lot in ORDERS[order](WINDOW_EVENTS):
        record(store, lot)
    with TestClient(create_app(Settings(), store)) as client:
        for until, failures in WINDOW_FAILURES.items():
            response = client.get(REPORT_ROOT_CAUSE, params={"since": SINCE, "until": until})
            assert response.status_code == 200, response.text
            found = [
                (c["detail"]["runId"], [f["assertion"] for f in c["detail"]["failed"]])
                for c in response.json()["causes"]
                if c["kind"] == "qualityFailure"
            ]
            assert sorted(found) == [(_run(n), names) for n, names in failures], until
        # The quality history of the same windows: inside a run, its START's observation.
        for until in WINDOW_FAILURES:
            history = client.get(
                f"/api/v2/datasets/{quote(MID, safe='')}/quality",
                params={"since": SINCE, "until": until},
            )
            assert history.status_code == 200, history.text
            runs = {o["runId"] for o in history.json()["observations"]}
            assert runs == {_run(41), *([_run(42)] if until > "2026-03-10T07" else [])}, until
