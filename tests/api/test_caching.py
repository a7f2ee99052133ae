"""ETags (an unchanged re-fetch is a 304; a late event changes the tag) and gzip,
on SQLite and PostgreSQL, through the in-process app."""

from __future__ import annotations

import asyncio
import gzip
import re
import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.responses import StreamingResponse
from starlette.types import Message

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.server.compression import Compression, accepts_gzip
from headwater.server.etags import etag_matches
from headwater.store import Store
from headwater.store import access as tokens
from tests.api.retail_events import PRODUCER, SCHEMA_URL, events, run_id
from tests.graph.retail import NS

RUN = run_id("build_revenue", 2)
CACHED_PATHS = [
    f"/api/v1/jobs/runs/{RUN}",
    f"/api/v1/jobs/runs/{RUN}/facets",
    f"/api/v1/namespaces/{NS}/jobs/build_revenue/runs",
    f"/api/v1/namespaces/{NS}/jobs/build_revenue/versions",
    f"/api/v1/namespaces/{NS}/datasets/gold.revenue/versions",
    f"/api/v1/lineage?nodeId=dataset:{NS}:gold.revenue",
    f"/api/v1/column-lineage?nodeId=dataset:{NS}:gold.revenue",
    f"/api/v2/lineage?nodeId=dataset:{NS}:gold.revenue",
    f"/api/v2/lineage?nodeId=run:{RUN}",
]


def _late_facet_event() -> dict[str, Any]:
    """A RUNNING event for the finished day-2 build_revenue run, timed before its end,
    carrying a facet nothing sent before: it changes the run's facets, not its state."""
    return {
        "eventType": "RUNNING",
        "eventTime": "2026-03-02T00:00:30Z",
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {
            "runId": RUN,
            "facets": {
                "lateArrival": {
                    "_producer": PRODUCER,
                    "_schemaURL": "https://example.com/lateArrival.json",
                    "note": "sent after the run completed",
                }
            },
        },
        "job": {"namespace": NS, "name": "build_revenue"},
        "inputs": [],
        "outputs": [],
    }


def _settled(client: TestClient) -> TestClient:
    """``client`` once the audit rows of its writes are written: on PostgreSQL that
    write moves the watermark too (docs/api.md, "Compression and caching")."""
    client.app.state.access.audit.flush()  # type: ignore[attr-defined]
    return client


@pytest.mark.parametrize("path", CACHED_PATHS)
def test_an_unchanged_refetch_is_a_304(retail: TestClient, path: str) -> None:
    _settled(retail)
    first = retail.get(path)
    assert first.status_code == 200, first.text
    etag = first.headers["etag"]
    assert etag.startswith('W/"')
    again = retail.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    # Another tag, or the same path with other parameters, is a full answer.
    assert retail.get(path, headers={"If-None-Match": 'W/"other"'}).status_code == 200
    other = retail.get(path + ("&" if "?" in path else "?") + "depth=1",
                       headers={"If-None-Match": etag})
    assert other.status_code in (200, 400)


def test_a_late_event_changes_the_etag_and_the_answer(retail: TestClient) -> None:
    before = {path: retail.get(path) for path in CACHED_PATHS}
    assert "lateArrival" not in before[f"/api/v1/jobs/runs/{RUN}"].json()["facets"]
    posted = retail.post("/api/v1/lineage", json=_late_facet_event())
    assert posted.status_code < 300, posted.text
    for path, old in before.items():
        refetch = retail.get(path, headers={"If-None-Match": old.headers["etag"]})
        assert refetch.status_code == 200, path
        assert refetch.headers["etag"] != old.headers["etag"]
    run = retail.get(f"/api/v1/jobs/runs/{RUN}").json()
    assert run["facets"]["lateArrival"]["note"] == "sent after the run completed"
    assert run["state"] == "COMPLETED"  # the late RUNNING reopens nothing


def test_the_etag_varies_with_the_namespaces_a_token_sees(store: Store) -> None:
    everything, _ = tokens.create_token(store.engine, "all", ["read", "ingest"])
    limited, _ = tokens.create_token(store.engine, "warehouse", ["read"], [NS, "other"])
    narrower, _ = tokens.create_token(store.engine, "narrow", ["read"], [NS])
    with TestClient(create_app(Settings(), store)) as client:
        posted = client.post("/api/v1/lineage/batch", json=events(),
                             headers={"Authorization": f"Bearer {everything}"})
        assert posted.status_code < 300
        _settled(client)
        path = f"/api/v1/namespaces/{NS}/jobs/build_revenue/runs"
        tags = {}
        for name, secret in (("all", everything), ("limited", limited), ("narrow", narrower)):
            answer = client.get(path, headers={"Authorization": f"Bearer {secret}"})
            assert answer.status_code == 200, answer.text
            assert "private" in answer.headers["cache-control"]
            tags[name] = answer.headers["etag"]
        assert len(set(tags.values())) == 3
        # The wider token's tag is no 304 for a token that sees less.
        refetch = client.get(path, headers={"Authorization": f"Bearer {narrower}",
                                            "If-None-Match": tags["all"]})
        assert refetch.status_code == 200
        assert "private" in refetch.headers["cache-control"]
        same = client.get(path, headers={"Authorization": f"Bearer {narrower}",
                                         "If-None-Match": tags["narrow"]})
        assert same.status_code == 304
        assert "private" in same.headers["cache-control"]


# --- compression ---------------------------------------------------------------------------


def test_json_answers_are_gzipped_when_accepted(retail: TestClient) -> None:
    _settled(retail)
    path = f"/api/v1/lineage?nodeId=dataset:{NS}:gold.revenue"
    plain = retail.get(path, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert "Accept-Encoding" in plain.headers["vary"]
    zipped = retail.get(path, headers={"Accept-Encoding": "br;q=1, gzip;q=0.5"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["vary"]
    assert zipped.json() == plain.json()  # httpx decoded it
    assert int(zipped.headers["content-length"]) < len(plain.content) / 3
    refused = retail.get(path, headers={"Accept-Encoding": "gzip;q=0, *"})
    assert "content-encoding" not in refused.headers
    # A compressed answer's ETag is weak, and it still answers If-None-Match.
    assert retail.get(path, headers={"If-None-Match": zipped.headers["etag"]}).status_code == 304


def test_small_answers_and_ingestion_answers_are_not_gzipped(client: TestClient) -> None:
    health = client.get("/api/v1/health", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in health.headers
    posted = client.post("/api/v1/lineage/batch", json=events(),
                         headers={"Accept-Encoding": "gzip"})
    assert posted.status_code < 300
    assert "content-encoding" not in posted.headers


def test_ui_assets_are_gzipped(client: TestClient) -> None:
    page = client.get("/", headers={"Accept-Encoding": "gzip"})
    assert page.status_code == 200
    scripts = [part.split('"', 1)[0] for part in page.text.split('src="')[1:]]
    assert scripts, page.text[:300]
    asset = client.get(scripts[0], headers={"Accept-Encoding": "gzip"})
    assert asset.status_code == 200
    assert asset.headers["content-encoding"] == "gzip"
    assert asset.headers["etag"].startswith("W/")
    again = client.get(scripts[0], headers={"Accept-Encoding": "gzip",
                                            "If-None-Match": asset.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZIP;Q=0.1", True),
        ("gzip;q=0", False),
        ("gzip;q=0.000", False),
        ("deflate, br", False),
        ("*", True),
        ("*;q=0", False),
        ("gzip;q=0, *;q=1", False),
        ("x-gzip", True),
        ("gzip;q=bad", False),
    ],
)
def test_accept_encoding_q_values(header: str | None, expected: bool) -> None:
    assert accepts_gzip(header) is expected


def test_etag_comparison_is_weak() -> None:
    assert etag_matches('W/"a"', 'W/"a"')
    assert etag_matches('"a"', 'W/"a"')
    assert etag_matches('W/"b", W/"a"', 'W/"a"')
    assert etag_matches("*", 'W/"a"')
    assert not etag_matches('W/"b"', 'W/"a"')
    assert not etag_matches(None, 'W/"a"')


def test_a_streaming_answer_stays_streaming() -> None:
    parts = [b'{"part": %d, "padding": "%s"}\n' % (i, b"x" * 2000) for i in range(3)]

    async def chunks() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await StreamingResponse(chunks(), media_type="application/json")(scope, receive, send)

    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/stream", "raw_path": b"/stream",
             "query_string": b"", "headers": [(b"accept-encoding", b"gzip")]}
    asyncio.run(Compression(app)(scope, receive, send))
    start = sent[0]
    headers = dict(start["headers"])
    assert headers[b"content-encoding"] == b"gzip"
    assert b"content-length" not in headers
    bodies = [m for m in sent[1:] if m["type"] == "http.response.body"]
    assert len(bodies) >= len(parts)
    # Each part can be decoded as soon as it arrives (flushed), not only at the end.
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for message, part in zip(bodies, parts, strict=False):
        assert decoder.decompress(message["body"]) == part
    assert gzip.decompress(b"".join(m["body"] for m in bodies)) == b"".join(parts)


def test_the_openapi_document_names_if_none_match_and_304(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    tagged = []
    for path, operations in document["paths"].items():
        get = operations.get("get")
        if get is None or "304" not in get["responses"]:
            continue
        tagged.append(path)
        assert any(p["name"] == "If-None-Match" for p in get["parameters"]), path
        assert "ETag" in get["responses"]["200"]["headers"], path
    for path in CACHED_PATHS:
        templated = [t for t in tagged if _fits(t, path.split("?", 1)[0])]
        assert templated, f"{path} is not documented as answering 304"
    assert "/api/v1/namespaces/{namespace}/datasets" not in tagged


def _fits(template: str, path: str) -> bool:
    return re.fullmatch(re.sub(r"\{[^}]*\}", "[^/]+", template), path) is not None
