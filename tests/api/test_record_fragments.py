"""Records' JSON reused between answers (``headwater.server.record_fragments``): the
v1 lineage answer and the dataset and job lists stitched from it are the records
the model pass writes, a late event changes them, and a namespace-limited token
never gets records built for a reader who sees more. SQLite and PostgreSQL."""

from __future__ import annotations

import gzip
import json
import random
import uuid
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
from headwater.server.lineage_responses import LineageGraph
from headwater.server.record_fragments import RecordFragments
from headwater.server.responses import DatasetList, JobList
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


def test_reused_records_are_the_answer_built_before(retail: TestClient) -> None:
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


def _dataset_event(name: str, time: str, facet: str) -> dict[str, Any]:
    """A DatasetEvent for ``name`` at ``time`` (a version of its own) carrying facet ``facet``."""
    return {
        "eventTime": time,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": NS,
            "name": name,
            "facets": {
                facet: {"_producer": PRODUCER, "_schemaURL": "https://example.com/x.json", "n": 1}
            },
        },
    }


def _items(client: TestClient, path: str, key: str) -> dict[str, Any]:
    answer = client.get(path)
    assert answer.status_code == 200, answer.text
    return {item["name"]: item for item in answer.json()[key]}


def _built_by(client: TestClient, path: str) -> int:
    """How many records answering ``path`` built (not taken from the cache)."""
    fragments: RecordFragments = client.app.state.record_fragments  # type: ignore[attr-defined]
    before = fragments.built
    assert client.get(path).status_code == 200
    return fragments.built - before


def test_a_write_rebuilds_only_the_records_it_may_change(retail: TestClient) -> None:
    for path in (DATASETS, JOBS, LINEAGE):
        retail.get(path)
        assert _built_by(retail, path) == 0, path  # every record reused
    datasets, jobs = _items(retail, DATASETS, "datasets"), _items(retail, JOBS, "jobs")
    tagged = retail.get(LINEAGE)

    # A facet on raw.customers, after every run: no job's run read it since.
    posted = retail.post(
        "/api/v1/lineage",
        json=_dataset_event("raw.customers", "2026-03-03T09:00:00Z", "customersNote"),
    )
    assert posted.status_code < 300, posted.text
    assert _built_by(retail, DATASETS) == 1
    assert _built_by(retail, JOBS) == 0
    assert _built_by(retail, LINEAGE) == 0  # raw.customers is not in gold.revenue's graph
    # The ETag follows the whole store: the answer is re-sent, the same.
    again = retail.get(LINEAGE, headers={"If-None-Match": tagged.headers["etag"]})
    assert again.status_code == 200 and again.content == tagged.content
    after = _items(retail, DATASETS, "datasets")
    assert after["raw.customers"]["facets"]["customersNote"]["n"] == 1
    assert after["raw.customers"] == _single(retail, "dataset", NS, "raw.customers")
    assert {k: v for k, v in after.items() if k != "raw.customers"} == {
        k: v for k, v in datasets.items() if k != "raw.customers"
    }
    assert _items(retail, JOBS, "jobs") == jobs

    # A late version of silver.orders, between its day-2 write (10:30) and the day-2 runs
    # of build_revenue (12:00) and build_ltv (13:00) that read it: what those runs read
    # changes, so those two jobs' records do, and nothing else of the jobs.
    posted = retail.post(
        "/api/v1/lineage",
        json=_dataset_event("silver.orders", "2026-03-02T11:00:00Z", "ordersNote"),
    )
    assert posted.status_code < 300, posted.text
    assert _built_by(retail, JOBS) == 2
    changed = _items(retail, JOBS, "jobs")
    for name in ("build_revenue", "build_ltv"):
        read = {
            v["datasetVersionId"]["name"]: v["datasetVersionId"]["version"]
            for v in changed[name]["latestRun"]["inputDatasetVersions"]
        }
        was = {
            v["datasetVersionId"]["name"]: v["datasetVersionId"]["version"]
            for v in jobs[name]["latestRun"]["inputDatasetVersions"]
        }
        assert read["silver.orders"] != was["silver.orders"], name
        assert changed[name] == _single(retail, "job", NS, name), name
    assert {k: v for k, v in changed.items() if k not in ("build_revenue", "build_ltv")} == {
        k: v for k, v in jobs.items() if k not in ("build_revenue", "build_ltv")
    }
    node = _node(retail.get(LINEAGE), f"job:{NS}:build_revenue")
    assert node == changed["build_revenue"]


def test_a_late_facet_on_an_old_version_changes_that_record_and_its_etag(
    retail: TestClient,
) -> None:
    first = retail.get(LINEAGE)
    datasets = _items(retail, DATASETS, "datasets")
    assert "auditNote" not in datasets["gold.revenue"]["facets"]
    late = {
        "eventType": "RUNNING",
        "eventTime": "2026-03-01T12:15:00Z",  # inside the day-1 run, long finished
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id("build_revenue", 1)},
        "job": {"namespace": NS, "name": "build_revenue"},
        "inputs": [],
        "outputs": [
            {
                "namespace": NS,
                "name": "gold.revenue",
                "facets": {
                    "auditNote": {
                        "_producer": PRODUCER,
                        "_schemaURL": "https://example.com/auditNote.json",
                        "note": "checked",
                    }
                },
            }
        ],
    }
    posted = retail.post("/api/v1/lineage", json=late)
    assert posted.status_code < 300, posted.text
    assert _built_by(retail, DATASETS) == 1  # gold.revenue alone
    after = retail.get(LINEAGE, headers={"If-None-Match": first.headers["etag"]})
    assert after.status_code == 200 and after.headers["etag"] != first.headers["etag"]
    dataset = _node(after, f"dataset:{NS}:gold.revenue")
    assert dataset["facets"]["auditNote"]["note"] == "checked"
    assert dataset == _single(retail, "dataset", NS, "gold.revenue")
    listed = _items(retail, DATASETS, "datasets")
    assert listed["gold.revenue"] == dataset
    assert {k: v for k, v in listed.items() if k != "gold.revenue"} == {
        k: v for k, v in datasets.items() if k != "gold.revenue"
    }


def test_a_run_settling_its_state_changes_the_records_of_what_it_wrote(
    retail: TestClient,
) -> None:
    run = {
        "run": {"runId": "00000000-0000-4000-8000-000300000002"},
        "job": {"namespace": NS, "name": "clean_customers"},
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }
    started = retail.post(
        "/api/v1/lineage",
        json={
            **run,
            "eventType": "START",
            "eventTime": "2026-03-03T10:00:00Z",
            "inputs": [{"namespace": NS, "name": "raw.customers"}],
            "outputs": [{"namespace": NS, "name": "silver.customers"}],
        },
    )
    assert started.status_code < 300, started.text
    running = _items(retail, DATASETS, "datasets")["silver.customers"]
    # The COMPLETE names no dataset: only the run's state says its version counts now.
    completed = retail.post(
        "/api/v1/lineage",
        json={
            **run,
            "eventType": "COMPLETE",
            "eventTime": "2026-03-03T10:30:00Z",
            "inputs": [],
            "outputs": [],
        },
    )
    assert completed.status_code < 300, completed.text
    done = _items(retail, DATASETS, "datasets")["silver.customers"]
    assert done["lastModifiedAt"] != running["lastModifiedAt"]
    assert done["lastModifiedAt"].startswith("2026-03-03T10:")
    assert done == _single(retail, "dataset", NS, "silver.customers")


def test_a_parent_run_arriving_late_names_its_childrens_parent_job(retail: TestClient) -> None:
    parent, child = "00000000-0000-4000-8000-000400000001", "00000000-0000-4000-8000-000400000002"
    base = {"producer": PRODUCER, "schemaURL": SCHEMA_URL, "inputs": [], "outputs": []}
    # The child's parent facet names the parent run only: its job is the parent run's.
    facet = {"_producer": PRODUCER, "_schemaURL": SCHEMA_URL, "run": {"runId": parent}}
    posted = retail.post(
        "/api/v1/lineage",
        json={
            **base,
            "eventType": "START",
            "eventTime": "2026-03-04T10:00:01Z",
            "run": {"runId": child, "facets": {"parent": facet}},
            "job": {"namespace": NS, "name": "nightly.step"},
        },
    )
    assert posted.status_code < 300, posted.text
    assert _items(retail, JOBS, "jobs")["nightly.step"]["parentJobName"] is None
    posted = retail.post(
        "/api/v1/lineage",
        json={
            **base,
            "eventType": "START",
            "eventTime": "2026-03-04T10:00:00Z",
            "run": {"runId": parent},
            "job": {"namespace": NS, "name": "nightly"},
        },
    )
    assert posted.status_code < 300, posted.text
    listed = _items(retail, JOBS, "jobs")["nightly.step"]
    assert listed["parentJobName"] == "nightly"
    assert listed == _single(retail, "job", NS, "nightly.step")


def test_a_tag_set_by_hand_is_in_the_reused_records(retail: TestClient) -> None:
    assert "pii" not in _items(retail, DATASETS, "datasets")["raw.customers"]["tags"]
    assert _built_by(retail, DATASETS) == 0
    created = retail.put("/api/v1/tags/pii", json={"description": "personal data"})
    assert created.status_code < 300, created.text
    tagged = retail.post(f"/api/v1/namespaces/{NS}/datasets/raw.customers/tags/pii")
    assert tagged.status_code < 300, tagged.text
    listed = _items(retail, DATASETS, "datasets")["raw.customers"]
    assert "pii" in listed["tags"]
    assert listed == _single(retail, "dataset", NS, "raw.customers")


def _random_writes(rng: random.Random, jobs: list[dict[str, Any]], round_no: int) -> list[Any]:
    """A few events of the kinds a store takes all the time, some of them late: a new run
    of a random job (START, maybe COMPLETE) at a random time of the history or after it,
    a facet on a random dataset, a facet on a random job's latest run."""
    events: list[Any] = []
    for k in range(rng.randint(1, 3)):
        job = rng.choice(jobs)
        run = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        day, hour = rng.randint(1, 4), rng.randint(0, 22)
        for event_type, minute in (("START", 0), ("COMPLETE", 30))[: rng.randint(1, 2)]:
            events.append(
                {
                    "eventType": event_type,
                    "eventTime": f"2026-03-0{day}T{hour:02d}:{minute:02d}:{k:02d}Z",
                    "producer": PRODUCER,
                    "schemaURL": SCHEMA_URL,
                    "run": {"runId": run},
                    "job": {"namespace": NS, "name": job["name"]},
                    "inputs": [
                        {"namespace": d["namespace"], "name": d["name"]} for d in job["inputs"]
                    ],
                    "outputs": [
                        {"namespace": d["namespace"], "name": d["name"]} for d in job["outputs"]
                    ],
                }
            )
    dataset = rng.choice([d for job in jobs for d in job["outputs"]])
    events.append(
        _dataset_event(
            dataset["name"], f"2026-03-0{rng.randint(1, 4)}T08:00:00Z", f"note{round_no}"
        )
    )
    return events


def test_reused_answers_after_random_writes_are_a_fresh_servers(
    retail: TestClient, store: Store
) -> None:
    rng = random.Random(19)
    paths = [LINEAGE, DATASETS, JOBS, f"/api/v1/lineage?nodeId=job:{NS}:build_ltv&depth=2"]
    jobs = retail.get(JOBS).json()["jobs"]
    fragments: RecordFragments = retail.app.state.record_fragments  # type: ignore[attr-defined]
    built = reused = 0
    for round_no in range(5):
        for path in paths:
            assert retail.get(path).status_code == 200  # records filed at this revision
        posted = retail.post("/api/v1/lineage/batch", json=_random_writes(rng, jobs, round_no))
        assert posted.status_code < 300, posted.text
        with TestClient(create_app(Settings(), store)) as fresh:
            for path in paths:
                before = fragments.built
                kept, rebuilt = retail.get(path), fresh.get(path)
                built += fragments.built - before
                reused += fragments.built == before
                assert kept.status_code == rebuilt.status_code == 200, path
                assert kept.content == rebuilt.content, (round_no, path)
    # Both cases were met: records built again after a write, and answers reused whole.
    assert built > 0 and reused > 0


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


def test_records_are_built_once_per_revision_and_scope() -> None:
    fragments = RecordFragments()
    calls: list[list[str]] = []
    build = _build_counter(calls)
    revisions = {"a": (0, 1), "b": (0, 1), "c": (0, 1)}

    def ask(rows: list[str], scope: NamespaceScope = EVERYTHING) -> bytes:
        found = fragments.records("dataset", scope, rows, str, revisions.__getitem__, build)
        return b"[" + b",".join(fragment.json for fragment in found) + b"]"

    first = ask(["a", "b"])
    assert ask(["b", "a", "c"]) == b'[{"name":"b","size":"' + b"x" * 100 + b'"},' + (
        b'{"name":"a","size":"' + b"x" * 100 + b'"},{"name":"c","size":"' + b"x" * 100 + b'"}]'
    )
    assert calls == [["a", "b"], ["c"]] and fragments.built == 3
    assert ask(["a", "b"]) == first and len(calls) == 2
    ask(["a"], NamespaceScope.of(["ns"]))  # another reader's records are other bytes
    assert calls[-1] == ["a"]
    revisions["a"] = (0, 2)  # a write changed a's rows: a alone is built again
    ask(["a", "b", "c"])
    assert calls[-1] == ["a"] and len(calls) == 4
    revisions["b"] = (1, 1)  # the epoch moved: b's fragment is not trusted either
    ask(["a", "b", "c"])
    assert calls[-1] == ["b"] and fragments.built == 6
    # A request that read an older revision builds for itself, and leaves the newer one kept.
    revisions["b"] = (0, 1)
    ask(["b"])
    revisions["b"] = (1, 1)
    ask(["b"])
    assert len(calls) == 6 and fragments.built == 7


@pytest.mark.parametrize("bound", [350, 1000])
def test_the_cache_keeps_within_its_bound(bound: int) -> None:
    fragments = RecordFragments(max_bytes=bound)
    calls: list[list[str]] = []
    build = _build_counter(calls)
    rows = [f"r{i}" for i in range(20)]
    fragments.records("dataset", EVERYTHING, rows, str, lambda _: (0, 0), build)
    assert 0 < fragments.size <= bound
    fragments.records("dataset", EVERYTHING, rows[-1:], str, lambda _: (0, 0), build)
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
