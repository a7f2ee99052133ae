"""Out-of-range input is a 400 naming the parameter, never a 5xx, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from headwater.server.routes.reading import MAX_LIMIT, MAX_OFFSET
from tests.api.retail_events import events, run_id
from tests.graph.retail import NS

RUN = run_id("publish", 2)

LISTS = [
    "/api/v1/namespaces",
    "/api/v1/sources",
    f"/api/v1/namespaces/{NS}/datasets",
    f"/api/v1/namespaces/{NS}/datasets/gold.revenue/versions",
    f"/api/v1/namespaces/{NS}/jobs",
    f"/api/v1/namespaces/{NS}/jobs/publish/versions",
    f"/api/v1/namespaces/{NS}/jobs/publish/runs",
    f"/api/v1/jobs/runs/{RUN}/children",
    "/api/v1/events/lineage",
    "/api/v1/tags",
]


@pytest.mark.parametrize("path", LISTS)
def test_paging_bounds_are_inclusive(retail: TestClient, path: str) -> None:
    response = retail.get(path, params={"limit": MAX_LIMIT, "offset": MAX_OFFSET})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("path", LISTS)
def test_paging_out_of_range_is_400_naming_it(client: TestClient, path: str) -> None:
    for name, value in [
        ("offset", MAX_OFFSET + 1),
        ("offset", 2**64 * 10**20),
        ("offset", -1),
        ("limit", MAX_LIMIT + 1),
        ("limit", -1),
    ]:
        response = client.get(path, params={name: value})
        assert response.status_code == 400, (name, value, response.text)
        assert response.json()["field"] == f"query.{name}"


BEYOND_UTC = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"]
V2 = {"nodeId": f"dataset:{NS}:gold.revenue"}

#: (method, path, query parameters, JSON body, the field the 400 names)
BAD_INPUT: list[tuple[str, str, dict[str, object], object, str]] = [
    ("GET", "/api/v1/search", {"q": "o", "limit": 0}, None, "query.limit"),
    ("GET", "/api/v1/search", {"q": "o", "limit": MAX_LIMIT + 1}, None, "query.limit"),
    ("GET", "/api/v1/lineage", {**V2, "depth": 101}, None, "query.depth"),
    ("GET", "/api/v2/lineage", {**V2, "maxNodes": 100_001}, None, "query.maxNodes"),
    ("GET", "/api/v1/runlineage/upstream", {"runId": RUN, "depth": 2**63}, None, "query.depth"),
    *[("GET", "/api/v2/lineage", {**V2, "asOf": t}, None, "query.asOf") for t in BEYOND_UTC],
    *[("GET", "/api/v1/events/lineage", {name: t}, None, f"query.{name}")
      for t in BEYOND_UTC for name in ("before", "after")],
    *[("POST", f"/api/v1/jobs/runs/{RUN}/complete", {"at": t}, None, "query.at")
      for t in BEYOND_UTC],
    ("POST", f"/api/v1/namespaces/{NS}/jobs/publish/runs", {},
     {"nominalStartTime": BEYOND_UTC[1]}, "body.nominalStartTime"),
    ("GET", "/api/v1/namespaces/a%00b", {}, None, "path.namespace"),
    ("GET", f"/api/v1/namespaces/{NS}/datasets/gold.revenue/versions/%00", {}, None,
     "path.version"),
    ("GET", "/api/v1/search", {"q": "\0"}, None, "query.q"),
    ("GET", "/api/v1/lineage", {"nodeId": "dataset:a\0:b"}, None, "query.nodeId"),
    ("GET", "/api/v2/lineage", {"nodeId": f"dataset:{NS}:gold.revenue#\0"}, None,
     "query.nodeId"),
    ("PUT", "/api/v1/tags/a%00", {}, None, "path.tag"),
    ("PUT", "/api/v1/namespaces/n", {}, {"ownerName": "me", "description": "a\0"},
     "body.description"),
    ("PUT", "/api/v1/sources/s", {}, {"type": "t", "connectionUrl": "x\0"}, "body.connectionUrl"),
    ("PUT", "/api/v1/tags/t", {}, {"description": "a\0"}, "body.description"),
    ("PUT", f"/api/v1/namespaces/{NS}/jobs/j", {},
     {"type": "BATCH", "inputs": [], "outputs": [], "context": {"sql": "\0"}}, "body.context"),
    ("PUT", f"/api/v1/namespaces/{NS}/datasets/d", {},
     {"type": "DB_TABLE", "physicalName": "d", "sourceName": "s",
      "fields": [{"name": "a", "tags": ["\0"]}]}, "body.fields[0].tags[0]"),
]


@pytest.mark.parametrize(("method", "path", "params", "body", "field"), BAD_INPUT)
def test_bad_input_is_400_naming_it(
    client: TestClient, method: str, path: str, params: dict[str, object], body: object,
    field: str,
) -> None:
    response = client.request(method, path, params=params, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_times_at_the_ends_of_utc_are_answered(retail: TestClient) -> None:
    params = {"after": "0001-01-01T00:00:00Z", "before": "9999-12-31T23:59:59.999999Z"}
    response = retail.get("/api/v1/events/lineage", params=params)
    assert response.status_code == 200, response.text
    assert response.json()["totalCount"] == len(events())


def test_a_path_name_longer_than_any_stored_name_is_a_400(client: TestClient) -> None:
    long_name = "n" * 1025
    response = client.put(f"/api/v1/namespaces/{long_name}", json={"ownerName": "me"})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "path.namespace"
    fits = "\u00e9" * 512  # 1,024 bytes
    assert client.put(f"/api/v1/namespaces/{fits}", json={"ownerName": "me"}).status_code == 200
