"""POST /api/v1/lineage and /api/v1/lineage/batch, in-process, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from headwater.store.tables import events as events_table
from tests.server.events import dataset_event, job_event, run_event


def stored_events(store: Store) -> int:
    return store.counts()["events"]


def stored_payloads(store: Store) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [json.loads(p) for p in conn.scalars(sa.select(events_table.c.payload))]


def post_json(client: TestClient, path: str, payload: Any, **headers: str) -> httpx.Response:
    return client.post(
        path,
        content=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **headers},
    )


# --- single events ---------------------------------------------------------------------


def test_run_event_is_stored_once(client: TestClient, store: Store) -> None:
    event = run_event()
    first = post_json(client, "/api/v1/lineage", event)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "success"
    assert first.json()["duplicate"] is False
    assert len(first.json()["eventHash"]) == 64

    again = post_json(client, "/api/v1/lineage", event)
    assert again.status_code == 200
    assert again.json() == {**first.json(), "duplicate": True}
    assert stored_events(store) == 1


def test_dataset_and_job_events_are_stored(client: TestClient, store: Store) -> None:
    assert post_json(client, "/api/v1/lineage", dataset_event()).status_code == 200
    assert post_json(client, "/api/v1/lineage", job_event()).status_code == 200
    assert stored_events(store) == 2


def test_extra_keys_and_free_form_facets_are_kept(client: TestClient, store: Store) -> None:
    event = run_event()
    event["run"]["facets"]["acme_cost"] = {
        "_producer": "https://acme.example/agent",
        "_schemaURL": "https://acme.example/CostRunFacet.json",
        "dollars": 12.5,
        "breakdown": [{"stage": 1, "cpu": True}],
    }
    event["acmeTopLevel"] = {"kept": ["verbatim", None]}
    assert post_json(client, "/api/v1/lineage", event).status_code == 200
    (payload,) = stored_payloads(store)
    assert payload["run"]["facets"]["acme_cost"] == event["run"]["facets"]["acme_cost"]
    assert payload["acmeTopLevel"] == {"kept": ["verbatim", None]}


def test_s3a_namespace_is_stored_as_s3(client: TestClient, store: Store) -> None:
    event = run_event(inputs=[{"namespace": "s3a://lake", "name": "bronze/orders"}], outputs=[])
    assert post_json(client, "/api/v1/lineage", event).status_code == 200
    (payload,) = stored_payloads(store)
    assert payload["inputs"][0]["namespace"] == "s3://lake"


def test_gzip_body_is_accepted(client: TestClient, store: Store) -> None:
    body = gzip.compress(json.dumps(run_event()).encode())
    response = client.post(
        "/api/v1/lineage",
        content=body,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert response.status_code == 200, response.text
    assert stored_events(store) == 1


def test_gzip_batch_is_accepted(client: TestClient, store: Store) -> None:
    body = gzip.compress(json.dumps([run_event(), dataset_event()]).encode())
    response = client.post(
        "/api/v1/lineage/batch",
        content=body,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["summary"]["successful"] == 2
    assert stored_events(store) == 2


def test_concurrent_posts_are_all_stored(store: Store) -> None:
    app = create_app(Settings(), store)
    events = [run_event() for _ in range(48)]

    async def post_all() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hw") as client:
            responses = await asyncio.gather(
                *(client.post("/api/v1/lineage", json=event) for event in events)
            )
        return [r.status_code for r in responses]

    assert asyncio.run(post_all()) == [200] * len(events)
    assert stored_events(store) == len(events)


# --- batches ---------------------------------------------------------------------------


def test_batch_of_good_events(client: TestClient, store: Store) -> None:
    batch = [run_event(), dataset_event(), job_event()]
    response = post_json(client, "/api/v1/lineage/batch", batch)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "status": "success",
        "summary": {"received": 3, "successful": 3, "failed": 0, "retriable": 0,
                    "non_retriable": 0, "duplicates": 0},
        "failed_events": [],
    }
    assert stored_events(store) == 3


def test_partly_bad_batch_stores_the_good_events(client: TestClient, store: Store) -> None:
    bad_run_id = run_event(run_id="not-a-uuid")
    no_producer = run_event()
    del no_producer["producer"]
    batch = [run_event(), bad_run_id, dataset_event(), "not an event", no_producer]
    response = post_json(client, "/api/v1/lineage/batch", batch)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "partial_success"
    assert body["summary"] == {"received": 5, "successful": 2, "failed": 3, "retriable": 0,
                               "non_retriable": 3, "duplicates": 0}
    failures = {f["index"]: f for f in body["failed_events"]}
    assert sorted(failures) == [1, 3, 4]
    assert failures[1]["field"] == "run.runId" and "UUID" in failures[1]["reason"]
    assert "JSON object" in failures[3]["reason"]
    assert failures[4]["field"] == "producer"
    assert all(f["retriable"] is False for f in failures.values())
    assert stored_events(store) == 2


def test_batch_duplicates_are_counted(client: TestClient, store: Store) -> None:
    event = run_event()
    post_json(client, "/api/v1/lineage", event)
    response = post_json(client, "/api/v1/lineage/batch", [event, run_event()])
    assert response.json()["summary"]["duplicates"] == 1
    assert stored_events(store) == 2


def test_batch_with_no_valid_event_is_a_400_and_stores_nothing(
    client: TestClient, store: Store
) -> None:
    batch = [{"eventTime": "x"}, run_event(run_id="1")]
    response = post_json(client, "/api/v1/lineage/batch", batch)
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "[0].eventTime"
    assert [f["index"] for f in body["failed_events"]] == [0, 1]
    assert stored_events(store) == 0


def test_empty_batch(client: TestClient) -> None:
    response = post_json(client, "/api/v1/lineage/batch", [])
    assert response.status_code == 200
    assert response.json()["summary"]["received"] == 0


def test_batch_must_be_an_array_and_single_must_not(client: TestClient, store: Store) -> None:
    response = post_json(client, "/api/v1/lineage/batch", run_event())
    assert response.status_code == 400
    assert response.json()["field"] == "body"
    response = post_json(client, "/api/v1/lineage", [run_event()])
    assert response.status_code == 400
    assert "/api/v1/lineage/batch" in response.json()["error"]
    assert stored_events(store) == 0


# --- bad requests: a 4xx naming the field or cause, never a 500, nothing written -------


def _no_run_id() -> dict[str, Any]:
    event = run_event()
    del event["run"]["runId"]
    return event


def _wrong_type_time() -> dict[str, Any]:
    event = run_event()
    event["eventTime"] = 20201228
    return event


def _no_job_name() -> dict[str, Any]:
    event = run_event()
    del event["job"]["name"]
    return event


def _dataset_without_dataset() -> dict[str, Any]:
    event = dataset_event()
    del event["dataset"]
    return event


BAD_BODIES = [
    ("malformed JSON", b'{"eventTime": "2020-01-01T00:00:00Z",', {}, 400, "body"),
    ("empty body", b"", {}, 400, "body"),
    ("not UTF-8", b'{"producer": "\xff\xfe"}', {}, 400, "body"),
    ("deeply nested", b"[" * 100_000 + b"]" * 100_000, {}, 400, "body"),
    # Valid JSON syntax no store can hold: refused as the event's, naming the value.
    ("lone surrogate", json.dumps(run_event()).replace('"retail"', '"\\ud800"').encode(), {},
     400, "job.namespace"),
    ("NaN", json.dumps(run_event()).replace('"facets": {}', '"facets": {"x": NaN}', 1).encode(),
     {}, 400, "run.facets.x"),
    ("trailing garbage", json.dumps(run_event()).encode() + b" x", {}, 400, "body"),
    ("missing runId", json.dumps(_no_run_id()).encode(), {}, 400, "run.runId"),
    ("non-UUID runId", json.dumps(run_event(run_id="42")).encode(), {}, 400, "run.runId"),
    ("numeric eventTime", json.dumps(_wrong_type_time()).encode(), {}, 400, "eventTime"),
    ("missing job name", json.dumps(_no_job_name()).encode(), {}, 400, "job.name"),
    ("DatasetEvent without dataset", json.dumps(_dataset_without_dataset()).encode(), {}, 400,
     "run"),
    ("text/plain", json.dumps(run_event()).encode(), {"Content-Type": "text/plain"}, 415,
     "Content-Type"),
    ("form encoded", b"a=1", {"Content-Type": "application/x-www-form-urlencoded"}, 415,
     "Content-Type"),
    ("bad gzip", b"\x1f\x8b\x08\x00garbage", {"Content-Encoding": "gzip"}, 400,
     "Content-Encoding"),
    ("truncated gzip", gzip.compress(json.dumps(run_event()).encode())[:40],
     {"Content-Encoding": "gzip"}, 400, "Content-Encoding"),
    ("brotli", json.dumps(run_event()).encode(), {"Content-Encoding": "br"}, 415,
     "Content-Encoding"),
]


@pytest.mark.parametrize("path", ["/api/v1/lineage", "/api/v1/lineage/batch"])
@pytest.mark.parametrize(
    ("body", "headers", "status", "field"),
    [pytest.param(b, h, s, f, id=title) for title, b, h, s, f in BAD_BODIES],
)
def test_bad_request_names_the_cause(
    client: TestClient, store: Store, path: str, body: bytes, headers: dict[str, str],
    status: int, field: str
) -> None:
    if path.endswith("batch") and body.startswith(b"{") and status == 400 and field != "body":
        body = b"[" + body + b"]"  # the same bad event inside a batch
        field = f"[0].{field}"
    response = client.post(
        path, content=body, headers={"Content-Type": "application/json", **headers}
    )
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["field"] == field
    assert response.json()["error"]
    assert stored_events(store) == 0


def test_missing_content_type_is_refused(client: TestClient) -> None:
    response = client.post("/api/v1/lineage", content=json.dumps(run_event()).encode())
    assert response.status_code == 415
    assert response.json()["field"] == "Content-Type"


def test_json_with_charset_is_accepted(client: TestClient) -> None:
    response = client.post(
        "/api/v1/lineage",
        content=json.dumps(run_event()).encode(),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 200


def test_body_over_the_limit_is_refused(make_client: Any, store: Store) -> None:
    client = make_client(max_body_bytes=2_000)
    big = run_event()
    big["run"]["facets"]["padding"] = {"_producer": "p", "_schemaURL": "s", "x": "y" * 3_000}
    body = json.dumps(big).encode()
    response = client.post("/api/v1/lineage", content=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert "2000 bytes" in response.json()["error"]

    # Without a Content-Length (chunked), the limit holds while reading.
    def chunks() -> Any:
        for i in range(0, len(body), 500):
            yield body[i : i + 500]

    response = client.post("/api/v1/lineage", content=chunks(),
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert stored_events(store) == 0


def test_gzip_bomb_is_refused_after_decompression(make_client: Any, store: Store) -> None:
    client = make_client(max_body_bytes=100_000)
    event = run_event()
    event["run"]["facets"]["padding"] = {"_producer": "p", "_schemaURL": "s", "x": "0" * 1_000_000}
    compressed = gzip.compress(json.dumps(event).encode())
    assert len(compressed) < 100_000  # small on the wire...
    response = client.post(
        "/api/v1/lineage",
        content=compressed,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert response.status_code == 413  # ...too large once inflated
    assert stored_events(store) == 0


def test_default_limit_is_ten_megabytes(client: TestClient) -> None:
    response = client.post(
        "/api/v1/lineage",
        content=b" " * (10 * 1024 * 1024 + 1),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413


# --- auth, health, unknown routes ------------------------------------------------------


def test_api_key_guards_writes_only(make_client: Any, store: Store) -> None:
    client = make_client(api_key="s3cret-key")
    missing = post_json(client, "/api/v1/lineage", run_event())
    assert missing.status_code == 401
    assert missing.json()["field"] == "Authorization"
    assert missing.headers["www-authenticate"] == "Bearer"
    wrong = post_json(client, "/api/v1/lineage", run_event(), Authorization="Bearer nope")
    assert wrong.status_code == 401
    basic = post_json(client, "/api/v1/lineage/batch", [], Authorization="Basic s3cret-key")
    assert basic.status_code == 401
    assert stored_events(store) == 0

    ok = post_json(client, "/api/v1/lineage", run_event(), Authorization="Bearer s3cret-key")
    assert ok.status_code == 200
    batch = post_json(client, "/api/v1/lineage/batch", [run_event()],
                      Authorization="bearer s3cret-key")
    assert batch.status_code == 200
    assert client.get("/api/v1/health").status_code == 200
    assert stored_events(store) == 2


def test_health(client: TestClient) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_unknown_route_is_a_json_404(client: TestClient) -> None:
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json() == {"error": "Not Found"}


def test_wrong_method_is_a_json_405(client: TestClient) -> None:
    response = client.get("/api/v1/lineage/batch")
    assert response.status_code == 405
    assert "error" in response.json()


def test_openapi_documents_the_ingestion_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "post" in paths["/api/v1/lineage"]
    assert "post" in paths["/api/v1/lineage/batch"]


def test_a_lone_surrogate_costs_only_its_own_event(client: TestClient) -> None:
    good = run_event(job="beside_the_surrogate")
    bad = run_event(job="surrogate")
    body = json.dumps([good, bad]).replace('"surrogate"', '"sur\\ud800rogate"')
    response = client.post("/api/v1/lineage/batch", content=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    summary = response.json()["summary"]
    assert (summary["successful"], summary["failed"]) == (1, 1)
    (failed,) = response.json()["failed_events"]
    assert failed["index"] == 1 and failed["field"] == "job.name"
