"""Records' JSON reused between answers (``headwater.server.record_fragments``): the
v1 lineage answer and the dataset and job lists stitched from it are the records
the model pass writes, a late event changes them, and a namespace-limited token
never gets records built for a reader who sees more. SQLite and PostgreSQL."""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from starlette.requests import Request

from headwater.config import Settings
from headwater.graph.model import NodeId
from headwater.server.app import create_app
from headwater.server.json_answers import Fragment, list_parts, stitched_answer
from headwater.server.record_fragments import RecordFragments
from headwater.server.responses import DatasetList, JobList, LineageGraph
from headwater.store import Store
from headwater.store import access as tokens
from headwater.store.reads.scope import EVERYTHING, NamespaceScope
from tests.api.retail_events import PRODUCER, SCHEMA_URL, run_id
from tests.graph.retail import NS
from tests.server.scope_events import CANARY, TEAM_JOBS, TEAM_LAKE
from tests.server.scope_events import events as scope_events

LINEAGE = f"/api/v1/lineage?nodeId=dataset:{NS}:gold.revenue&depth=20"
DATASETS = f"/api/v1/namespaces/{NS}/datasets"
JOBS = f"/api/v1/namespaces/{NS}/jobs"
RUN = run_id("build_revenue", 2)


def _single(client: TestClient, kind: str, namespace: str, name: str, **headers: str) -> Any:
    """The record as the dataset or job read writes it (through its response model)."""
    path = "datasets" if kind == "dataset" else "jobs"
    answer = client.get(
        f"/api/v1/namespaces/{quote(namespace, safe='')}/{path}/{quote(name, safe='')}",
        headers=headers,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def _paged(client: TestClient, path: str, key: str, limit: int) -> list[dict[str, Any]]:
    """Every item of a list, ``limit`` at a time through its cursors."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        answer = client.get(path, params={"limit": limit, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/json"
        body = answer.json()
        (DatasetList if key == "datasets" else JobList).model_validate(body)
        items += body[key]
        cursor = body["nextCursor"]
        if cursor is None:
            return items


def test_lists_are_the_records_the_model_pass_writes(retail: TestClient) -> None:
    for path, key, kind in ((DATASETS, "datasets", "dataset"), (JOBS, "jobs", "job")):
        whole = retail.get(path).json()
        assert whole["totalCount"] == len(whole[key]) > 3
        # A second read takes the records filed by the first: the same answer.
        assert retail.get(path).content == retail.get(path).content
        paged = _paged(retail, path, key, limit=2)
        assert paged == whole[key]
        for item in paged:
            assert item == _single(retail, kind, item["namespace"], item["name"]), item["name"]


def test_reused_records_are_filed_under_the_store_watermark(retail: TestClient) -> None:
    fragments: RecordFragments = retail.app.state.record_fragments  # type: ignore[attr-defined]
    first = retail.get(LINEAGE)
    assert fragments.size > 0
    again = retail.get(LINEAGE)
    assert again.content == first.content
    LineageGraph.model_validate(again.json())


def _late_facet_event() -> dict[str, Any]:
    """A RUNNING event for the finished day-2 build_revenue run, timed before its end, with
    a run facet and a facet on its output that nothing sent before."""
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
        "outputs": [
            {
                "namespace": NS,
                "name": "gold.revenue",
                "facets": {
                    "documentation": {
                        "_producer": PRODUCER,
                        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json",
                        "description": "revenue per day, late",
                    }
                },
            }
        ],
    }


def _node(answer: Any, node_id: str) -> dict[str, Any]:
    return next(n["data"] for n in answer.json()["graph"] if n["id"] == node_id)


def test_a_late_facet_changes_the_reused_records(retail: TestClient) -> None:
    before = {path: retail.get(path) for path in (LINEAGE, DATASETS, JOBS)}
    # Read twice: the second answers come from the filed records.
    for path, answer in before.items():
        assert retail.get(path).content == answer.content, path
    job = _node(before[LINEAGE], f"job:{NS}:build_revenue")
    assert job["latestRun"]["id"] == RUN and "lateArrival" not in job["latestRun"]["facets"]
    assert "documentation" not in _node(before[LINEAGE], f"dataset:{NS}:gold.revenue")["facets"]

    posted = retail.post("/api/v1/lineage", json=_late_facet_event())
    assert posted.status_code < 300, posted.text

    after = retail.get(LINEAGE)
    job = _node(after, f"job:{NS}:build_revenue")
    assert job["latestRun"]["facets"]["lateArrival"]["note"] == "sent after the run completed"
    assert job["latestRun"]["state"] == "COMPLETED"
    dataset = _node(after, f"dataset:{NS}:gold.revenue")
    assert dataset["facets"]["documentation"]["description"] == "revenue per day, late"
    assert job == _single(retail, "job", NS, "build_revenue")
    assert dataset == _single(retail, "dataset", NS, "gold.revenue")
    listed_jobs = {j["name"]: j for j in retail.get(JOBS).json()["jobs"]}
    assert "lateArrival" in listed_jobs["build_revenue"]["latestRun"]["facets"]
    listed_datasets = {d["name"]: d for d in retail.get(DATASETS).json()["datasets"]}
    assert "documentation" in listed_datasets["gold.revenue"]["facets"]


def test_a_limited_token_never_gets_records_built_for_more(store: Store) -> None:
    api_key = "hw_record-fragments-api-key"
    team, _ = tokens.create_token(store.engine, "team-a", ["read"], [TEAM_JOBS, TEAM_LAKE])
    admin = {"Authorization": f"Bearer {api_key}"}
    limited = {"Authorization": f"Bearer {team}"}
    with TestClient(create_app(Settings(api_key=api_key), store)) as client:
        posted = client.post("/api/v1/lineage/batch", json=scope_events(), headers=admin)
        assert posted.status_code < 300, posted.text
        lake = quote(TEAM_LAKE, safe="")
        paths = [
            f"/api/v1/lineage?nodeId={quote(f'dataset:{TEAM_LAKE}:orders_clean', safe='')}",
            f"/api/v1/namespaces/{lake}/datasets",
            f"/api/v1/namespaces/{TEAM_JOBS}/jobs",
        ]
        # The server key reads first, filing records that name the canary.
        assert any(CANARY in client.get(path, headers=admin).text for path in paths)
        for path in paths:
            answer = client.get(path, headers=limited)
            assert answer.status_code == 200, answer.text
            assert CANARY not in answer.text, path
        # The limited token's own records are the ones its single reads write.
        graph = client.get(paths[0], headers=limited).json()["graph"]
        assert len(graph) > 2
        for node in graph:
            parsed = NodeId.parse(node["id"])
            assert node["data"] == _single(
                client, parsed.type.prefix, parsed.namespace, parsed.name, **limited
            ), node["id"]


# --- the cache itself ----------------------------------------------------------------------


def _build_counter(calls: list[list[str]]) -> Any:
    def build(rows: list[str]) -> list[dict[str, Any]]:
        calls.append(list(rows))
        return [{"name": row, "size": "x" * 100} for row in rows]

    return build


def test_records_are_built_once_per_watermark_and_scope() -> None:
    fragments = RecordFragments()
    calls: list[list[str]] = []
    build = _build_counter(calls)

    def ask(watermark: str, rows: list[str], scope: NamespaceScope = EVERYTHING) -> bytes:
        found = fragments.records(watermark, "dataset", scope, rows, str, build)
        return b"[" + b",".join(fragment.json for fragment in found) + b"]"

    first = ask("w1", ["a", "b"])
    assert ask("w1", ["b", "a", "c"]) == b'[{"name":"b","size":"' + b"x" * 100 + b'"},' + (
        b'{"name":"a","size":"' + b"x" * 100 + b'"},{"name":"c","size":"' + b"x" * 100 + b'"}]'
    )
    assert calls == [["a", "b"], ["c"]]
    assert ask("w1", ["a", "b"]) == first and len(calls) == 2
    ask("w1", ["a"], NamespaceScope.of(["ns"]))  # another reader's records are other bytes
    assert calls[-1] == ["a"]
    ask("w2", ["a"])  # the store changed: built again
    assert calls[-1] == ["a"] and len(calls) == 4
    ask("w1", ["b"])  # a watermark seen before is not trusted to be current again
    assert calls[-1] == ["b"]


@pytest.mark.parametrize("bound", [350, 1000])
def test_the_cache_keeps_within_its_bound(bound: int) -> None:
    fragments = RecordFragments(max_bytes=bound)
    calls: list[list[str]] = []
    build = _build_counter(calls)
    rows = [f"r{i}" for i in range(20)]
    fragments.records("w", "dataset", EVERYTHING, rows, str, build)
    assert 0 < fragments.size <= bound
    fragments.records("w", "dataset", EVERYTHING, rows[-1:], str, build)
    assert len(calls) == 1  # the most recent ones are kept


def _gzip_answer(parts: list[bytes | Fragment], accept: str = "gzip") -> Any:
    request = Request(
        {"type": "http", "method": "GET", "headers": [(b"accept-encoding", accept.encode())]}
    )
    return stitched_answer(parts, request)


def test_a_stitched_gzip_answer_is_the_json_of_its_parts() -> None:
    records = [{"name": f"r{i}", "text": "abc" * i, "n": i} for i in range(300)]
    parts = list_parts("items", [Fragment.of(r) for r in records], {"totalCount": 300})
    zipped = _gzip_answer(parts)
    assert zipped.headers["content-encoding"] == "gzip"
    expected = {"items": records, "totalCount": 300}
    assert json.loads(gzip.decompress(zipped.body)) == expected
    # A decoder that reads the deflate stream on its own (as browsers do) agrees.
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert json.loads(inflater.decompress(zipped.body) + inflater.flush()) == expected
    assert inflater.eof and not inflater.unused_data
    plain = _gzip_answer(parts, accept="identity")
    assert "content-encoding" not in plain.headers
    assert json.loads(plain.body) == expected
    # An answer of a few bytes is not worth compressing.
    small = _gzip_answer(list_parts("items", [], {"totalCount": 0}))
    assert "content-encoding" not in small.headers and json.loads(small.body)["items"] == []
