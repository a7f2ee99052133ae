"""Keyset paging: every list pages with ``cursor`` to the same items as one big page,
none skipped or repeated when items are inserted between pages; cursors are opaque
and checked; ``offset`` is bounded; /openapi.json documents both (SQLite and PostgreSQL)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.retail_events import events, run_id
from tests.graph.retail import NS

# (path, params, the answer's list field, an item's identity)
LISTS: list[tuple[str, dict[str, Any], str, str]] = [
    (f"/api/v1/namespaces/{NS}/datasets", {}, "datasets", "name"),
    (f"/api/v1/namespaces/{NS}/jobs", {}, "jobs", "name"),
    (f"/api/v1/namespaces/{NS}/jobs/build_revenue/runs", {}, "runs", "id"),
    (f"/api/v1/namespaces/{NS}/jobs/build_revenue/versions", {}, "versions", "version"),
    (f"/api/v1/namespaces/{NS}/datasets/gold.revenue/versions", {}, "versions", "version"),
    ("/api/v1/events/lineage", {}, "events", "eventTime"),
    ("/api/v1/events/lineage", {"sortDirection": "asc"}, "events", "eventTime"),
    ("/api/v1/search", {"q": "e"}, "results", "nodeId"),
    ("/api/v1/search", {"q": "e", "sort": "updated_at"}, "results", "nodeId"),
]


def _identity(item: dict[str, Any], field: str) -> Any:
    if field == "eventTime":  # events: the whole event is its identity
        return (item["eventTime"], item["eventType"], item["run"]["runId"])
    return item[field]


def _walk(client: TestClient, path: str, params: dict[str, Any], field: str,
          limit: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(200):
        query = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
        answer = client.get(path, params=query)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        items += body[field]
        cursor = body["nextCursor"]
        if cursor is None:
            return items
    raise AssertionError("the cursor never ended")


@pytest.mark.parametrize(("path", "params", "field", "key"), LISTS)
def test_cursor_pages_give_the_whole_list_once(
    retail: TestClient, path: str, params: dict[str, Any], field: str, key: str
) -> None:
    whole = retail.get(path, params={**params, "limit": 10_000}).json()
    assert whole["nextCursor"] is None
    expected = [_identity(i, key) for i in whole[field]]
    assert len(expected) >= 2, expected  # enough to need several pages of 1
    for limit in (1, 2):
        paged = [_identity(i, key) for i in _walk(retail, path, params, field, limit)]
        assert paged == expected, (limit, paged)


@pytest.mark.parametrize("field", ["jobs", "datasets"])
def test_offset_and_cursor_pages_hold_the_whole_records(retail: TestClient, field: str) -> None:
    # A page is cut before its rows are joined to their versions: the records must not change.
    path = f"/api/v1/namespaces/{NS}/{field}"
    whole = retail.get(path, params={"limit": 10_000}).json()[field]
    if field == "jobs":
        assert any(job["inputs"] and job["outputs"] for job in whole)  # versions joined
    by_offset = [
        item
        for offset in range(0, len(whole), 2)
        for item in retail.get(path, params={"limit": 2, "offset": offset}).json()[field]
    ]
    assert by_offset == whole
    assert _walk(retail, path, {}, field, 2) == whole


def _event(name: str, day: str) -> dict[str, Any]:
    """A one-dataset DatasetEvent: a new dataset named ``name`` in NS."""
    return {
        "eventTime": f"{day}T12:00:00Z",
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": NS, "name": name, "facets": {}},
    }


def test_inserts_between_pages_skip_and_repeat_nothing(retail: TestClient) -> None:
    path = f"/api/v1/namespaces/{NS}/datasets"
    before = [d["name"] for d in retail.get(path, params={"limit": 10_000}).json()["datasets"]]
    first = retail.get(path, params={"limit": 2}).json()
    seen = [d["name"] for d in first["datasets"]]
    # Names before, between and after the ones paged so far.
    new = ["a.first", seen[-1] + ".0", "zz.last"]
    posted = retail.post("/api/v1/lineage/batch", json=[_event(n, "2026-04-01") for n in new])
    assert posted.status_code < 300, posted.text
    cursor = first["nextCursor"]
    offset_seen = list(seen)
    offset = 2
    while cursor:
        body = retail.get(path, params={"limit": 2, "cursor": cursor}).json()
        seen += [d["name"] for d in body["datasets"]]
        cursor = body["nextCursor"]
    while True:  # the same walk by offset shifts: an insert before it repeats an item
        page = retail.get(path, params={"limit": 2, "offset": offset}).json()["datasets"]
        if not page:
            break
        offset_seen += [d["name"] for d in page]
        offset += 2
    assert len(seen) == len(set(seen)), seen  # nothing repeated
    assert set(before) <= set(seen)  # nothing skipped
    assert seen == sorted(seen)
    assert "a.first" not in seen  # sorted before the cursor: not on a later page
    assert {seen[1] + ".0", "zz.last"} <= set(seen)
    assert len(offset_seen) != len(set(offset_seen))  # what the cursor avoids


def test_runs_inserted_between_pages(retail: TestClient) -> None:
    path = f"/api/v1/namespaces/{NS}/jobs/clean_orders/runs"
    first = retail.get(path, params={"limit": 1}).json()
    newest = first["runs"][0]["id"]
    late = copy.deepcopy([e for e in events() if e["run"]["runId"] == run_id("clean_orders", 2)])
    for event in late:
        event["run"]["runId"] = "00000000-0000-4000-8000-000000099999"
        event["eventTime"] = event["eventTime"].replace("2026-03-02", "2026-03-05")
    assert retail.post("/api/v1/lineage/batch", json=late).status_code < 300
    rest = _walk(retail, path, {"cursor": first["nextCursor"]}, "runs", 1)
    ids = [newest] + [r["id"] for r in rest]
    assert ids == [run_id("clean_orders", 2), run_id("clean_orders", 1)]


@pytest.mark.parametrize(
    "cursor",
    ["not base64 !", "e30", "WyJqb2JzIixbImEiXV0", "W10", "WyJkYXRhc2V0cyIsWzFdXQ"],
)
def test_a_foreign_or_malformed_cursor_is_a_400_naming_it(retail: TestClient, cursor: str) -> None:
    # e30 = {}, WyJqb2JzIixbImEiXV0 = ["jobs",["a"]] (another list), W10 = [],
    # WyJkYXRhc2V0cyIsWzFdXQ = ["datasets",[1]] (a number where a name goes)
    answer = retail.get(f"/api/v1/namespaces/{NS}/datasets", params={"cursor": cursor})
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "query.cursor"


def test_the_events_cursor_names_its_direction(retail: TestClient) -> None:
    desc = retail.get("/api/v1/events/lineage", params={"limit": 1}).json()["nextCursor"]
    answer = retail.get("/api/v1/events/lineage",
                        params={"limit": 1, "cursor": desc, "sortDirection": "asc"})
    assert answer.status_code == 400
    assert answer.json()["field"] == "query.cursor"


def test_openapi_documents_cursor_and_next_cursor(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    for path in {p for p, _, _, _ in LISTS}:
        templated = path.replace(NS, "{namespace}").replace("gold.revenue", "{dataset}")
        templated = templated.replace("build_revenue", "{job}")
        get = document["paths"][templated]["get"]
        assert any(p["name"] == "cursor" for p in get["parameters"]), templated
        ref = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert "nextCursor" in schemas[ref.rsplit("/", 1)[-1]]["properties"], templated
