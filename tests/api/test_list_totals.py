"""The dataset and job lists' ``totalCount`` is the number of items paging through the
list gives, on every page, after deletes and after a later event shows a deleted
object again (the count is kept by the store: ``store.namespace_counts``), SQLite
and PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.retail_events import PRODUCER, SCHEMA_URL
from tests.graph.retail import NS

LISTS = {"datasets": f"/api/v1/namespaces/{NS}/datasets", "jobs": f"/api/v1/namespaces/{NS}/jobs"}


def _paged(client: TestClient, field: str) -> tuple[list[str], set[int]]:
    """Every item's name, paging by cursor three at a time, and the totals answered."""
    names: list[str] = []
    totals: set[int] = set()
    cursor = None
    for _ in range(100):
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        body = client.get(LISTS[field], params=params).json()
        names += [item["name"] for item in body[field]]
        totals.add(body["totalCount"])
        cursor = body["nextCursor"]
        if cursor is None:
            return names, totals
    raise AssertionError("the cursor never ended")


def _assert_totals(client: TestClient) -> dict[str, list[str]]:
    seen = {}
    for field in LISTS:
        names, totals = _paged(client, field)
        assert totals == {len(names)}, (field, totals, len(names))
        assert len(set(names)) == len(names)
        seen[field] = names
    return seen


def test_total_count_is_what_paging_gives(retail: TestClient) -> None:
    before = _assert_totals(retail)
    assert len(before["datasets"]) > 3 and len(before["jobs"]) > 3  # several pages
    assert retail.delete(f"{LISTS['datasets']}/gold.ltv").status_code == 200
    assert retail.delete(f"{LISTS['jobs']}/build_ltv").status_code == 200
    hidden = _assert_totals(retail)
    assert len(hidden["datasets"]) == len(before["datasets"]) - 1
    assert len(hidden["jobs"]) == len(before["jobs"]) - 1
    # A later run of the job writing the dataset, and a new dataset beside them.
    later = {
        "eventType": "COMPLETE",
        "eventTime": "2100-01-01T00:00:00Z",
        "run": {"runId": "00000000-0000-4000-8000-00000000c001"},
        "job": {"namespace": NS, "name": "build_ltv"},
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "inputs": [],
        "outputs": [{"namespace": NS, "name": n} for n in ("gold.ltv", "gold.ltv_copy")],
    }
    assert retail.post("/api/v1/lineage/batch", json=[later]).status_code < 300
    shown = _assert_totals(retail)
    assert len(shown["datasets"]) == len(before["datasets"]) + 1
    assert sorted(shown["jobs"]) == sorted(before["jobs"])
