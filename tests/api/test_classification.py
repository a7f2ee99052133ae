"""Classification through the API on both databases: propagated tags with
provenance, masking and blocks, retraction by a job's new version, as-of answers,
definitions, owners, the compliance report (JSON and CSV), and order independence."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.api.classification_events import (
    GOLD,
    GOLD_CONTACT,
    RAW,
    RAW_EMAIL,
    SILVER,
    SILVER_EMAIL,
    SILVER_HASH,
    edge,
    events,
    lineage,
    ownership,
    write,
)
from tests.store.builders import facet, record

BEFORE_GOLD_V2 = "2024-03-01T00:00:30Z"


def _client(store: Store) -> TestClient:
    return TestClient(create_app(Settings(), store))


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    record(store, events())
    with _client(store) as test_client:
        yield test_client


def _column(client: TestClient, column: str, as_of: str | None = None) -> dict[str, Any]:
    params = {"nodeId": column, **({"asOf": as_of} if as_of else {})}
    response = client.get("/api/v2/classification", params=params)
    assert response.status_code == 200, response.text
    [answer] = response.json()["columns"]
    return answer


def _propagated(client: TestClient, column: str, as_of: str | None = None) -> list[str]:
    return [f"{p['tag']}<-{p['origin']}" for p in _column(client, column, as_of)["propagated"]]


def test_identity_copy_is_pii_with_provenance(client: TestClient) -> None:
    body = client.get("/api/v2/classification",
                      params={"nodeId": f"dataset:file:{SILVER}"}).json()
    assert body["propagatedTags"] == ["PII"]
    columns = {c["field"]: c for c in body["columns"]}
    assert set(columns) == {"id", "email", "email_hash", "name"}
    [pii] = columns["email"]["propagated"]
    assert pii["origin"] == RAW_EMAIL
    assert pii["explanation"] == ("PII from /raw/customers.email via job silver, "
                                  "transformation IDENTITY")
    assert [hop["job"] for hop in pii["path"]] == ["job:ns:silver"]
    assert columns["id"]["propagated"] == [] and columns["name"]["propagated"] == []


def test_masking_stops_and_is_recorded(client: TestClient) -> None:
    answer = _column(client, SILVER_HASH)
    assert answer["propagated"] == []
    [stop] = answer["stopped"]
    assert (stop["tag"], stop["reason"], stop["edge"]["transformationSubtype"]) == (
        "PII", "masking", "HASH")


def test_new_version_that_stops_reading_retracts_and_as_of_remembers(
        client: TestClient) -> None:
    assert _propagated(client, GOLD_CONTACT) == []
    assert _propagated(client, GOLD_CONTACT, BEFORE_GOLD_V2) == [f"PII<-{RAW_EMAIL}"]
    # Before the silver job ran nothing downstream was PII.
    assert _propagated(client, SILVER_EMAIL, "2024-03-01T00:00:05Z") == []
    # The indirect (filter) edge of gold's first version carried nothing.
    assert _column(client, GOLD_CONTACT, BEFORE_GOLD_V2)["propagated"][0]["path"][-1][
        "source"] == SILVER_EMAIL


def test_a_new_copying_job_makes_its_copy_pii_without_a_rebuild(
        store: Store, client: TestClient) -> None:
    record(store, write("export", 9, 50, [SILVER], "/export/mail", ["addr"], lineage(
        addr=[edge(SILVER, "email")])))
    [item] = _column(client, "datasetField:file:/export/mail:addr")["propagated"]
    assert [hop["job"] for hop in item["path"]] == ["job:ns:silver", "job:ns:export"]


def test_blocks_stop_from_their_time_on_and_are_recorded(client: TestClient) -> None:
    response = client.post("/api/v2/propagation-blocks", json={
        "job": "job:ns:silver", "source": RAW_EMAIL, "target": SILVER_EMAIL,
        "reason": "tokenised downstream"})
    assert response.status_code == 201, response.text
    block = response.json()
    assert _propagated(client, SILVER_EMAIL) == []
    [stop] = _column(client, SILVER_EMAIL)["stopped"]
    assert (stop["reason"], stop["block"]) == ("blocked", block["id"])
    # Before the block existed the copy was PII, and that is still the answer then.
    assert _propagated(client, SILVER_EMAIL, BEFORE_GOLD_V2) == [f"PII<-{RAW_EMAIL}"]
    listed = client.get("/api/v2/propagation-blocks").json()["blocks"]
    assert [b["id"] for b in listed] == [block["id"]]
    removed = client.delete(f"/api/v2/propagation-blocks/{block['id']}")
    assert removed.status_code == 200, removed.text
    assert _propagated(client, SILVER_EMAIL) == [f"PII<-{RAW_EMAIL}"]
    assert client.get("/api/v2/propagation-blocks").json()["blocks"] == []
    history = client.get("/api/v2/propagation-blocks", params={"all": "true"}).json()
    assert history["blocks"][0]["removedAt"] is not None
    at = client.get("/api/v2/propagation-blocks",
                    params={"asOf": history["blocks"][0]["createdAt"]}).json()
    assert [b["id"] for b in at["blocks"]] == [block["id"]]
    assert client.delete(f"/api/v2/propagation-blocks/{block['id']}").status_code == 404


def test_job_block_for_one_tag(client: TestClient) -> None:
    response = client.post("/api/v2/propagation-blocks",
                           json={"job": "job:ns:silver", "tag": "PII"})
    assert response.status_code == 201, response.text
    assert _propagated(client, SILVER_EMAIL) == []
    assert _propagated(client, GOLD_CONTACT, BEFORE_GOLD_V2) == [f"PII<-{RAW_EMAIL}"]


def test_definitions_decide_what_propagates(client: TestClient) -> None:
    assert client.put("/api/v2/tag-definitions/PII", json={"propagates": False}).status_code \
        == 200
    assert _propagated(client, SILVER_EMAIL) == []
    defs = {d["name"]: d for d in client.get("/api/v2/tag-definitions").json()["definitions"]}
    assert defs["PII"]["propagates"] is False and defs["PII"]["default"] is False
    assert defs["GDPR"]["default"] is True
    assert client.delete("/api/v2/tag-definitions/PII").status_code == 204
    assert _propagated(client, SILVER_EMAIL) == [f"PII<-{RAW_EMAIL}"]
    assert client.delete("/api/v2/tag-definitions/PII").status_code == 404


def test_api_tags_on_datasets_propagate_to_their_columns(client: TestClient) -> None:
    assert client.put("/api/v1/tags/finance", json={}).status_code == 200
    assert client.put("/api/v2/tag-definitions/finance",
                      json={"propagates": True, "description": "money"}).status_code == 200
    assert client.post(f"/api/v1/namespaces/file/datasets/{RAW.replace('/', '%2F')}"
                       "/tags/finance").status_code == 200
    tags = [p["tag"] for p in _column(client, f"datasetField:file:{SILVER}:name")["propagated"]]
    assert tags == ["finance"]
    badges = {d["nodeId"]: d for d in
              client.get("/api/v2/classification/datasets").json()["datasets"]}
    assert badges[f"dataset:file:{SILVER}"]["propagatedTags"] == ["PII", "finance"]
    assert badges[f"dataset:file:{RAW}"]["tags"] == ["PII", "finance"]
    columns = {c["nodeId"]: c for c in badges[f"dataset:file:{SILVER}"]["columns"]}
    assert columns[SILVER_EMAIL] == {"nodeId": SILVER_EMAIL, "tags": [],
                                     "propagatedTags": ["PII", "finance"]}
    assert columns[f"datasetField:file:{SILVER}:name"]["propagatedTags"] == ["finance"]
    assert [c["nodeId"] for c in badges[f"dataset:file:{RAW}"]["columns"]] == [RAW_EMAIL]


def test_owners_from_facets_and_the_api(client: TestClient) -> None:
    node = f"dataset:file:{SILVER}"
    response = client.put("/api/v2/owners", json={"nodeId": node, "name": "alice",
                                                  "type": "user"})
    assert response.status_code == 200, response.text
    assert response.json()["owners"] == [{"name": "alice", "type": "user", "source": "api"}]
    owners = client.get("/api/v2/owners", params={"nodeId": "job:ns:silver"}).json()
    assert owners["owners"] == [{"name": "team:silver", "type": "team", "source": "facet"}]
    assert client.delete("/api/v2/owners", params={"nodeId": node, "name": "alice",
                                                   "type": "user"}).status_code == 204
    assert client.get("/api/v2/owners", params={"nodeId": node}).json()["owners"] == []


def test_compliance_report_json_and_csv(client: TestClient) -> None:
    client.put("/api/v2/owners", json={"nodeId": f"dataset:file:{GOLD}", "name": "bob"})
    report = client.get("/api/v2/compliance",
                        params={"tag": "PII", "asOf": BEFORE_GOLD_V2}).json()
    assert sorted(f["column"] for f in report["flows"]) == [GOLD_CONTACT, SILVER_EMAIL]
    assert [j["nodeId"] for j in report["jobs"]] == ["job:ns:gold", "job:ns:silver"]
    datasets = {d["nodeId"]: d["owners"] for d in report["datasets"]}
    assert datasets[f"dataset:file:{RAW}"] == [{"name": "team:crm", "type": "team",
                                                "source": "facet", "current": False}]
    # bob was set through the API after that time: not an owner then.
    assert datasets[f"dataset:file:{GOLD}"] == []
    jobs = {j["nodeId"]: j["owners"] for j in report["jobs"]}
    assert jobs["job:ns:silver"] == [{"name": "team:silver", "type": "team", "source": "facet",
                                      "current": False}]
    assert [s["reason"] for s in report["stops"]] == ["masking"]
    response = client.get("/api/v2/compliance", params={"tag": "PII", "asOf": BEFORE_GOLD_V2,
                                                        "format": "csv"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert sorted((r["kind"], r["column"]) for r in rows) == [
        ("flow", GOLD_CONTACT), ("flow", SILVER_EMAIL), ("stop", SILVER_HASH)]
    gold = next(r for r in rows if r["column"] == GOLD_CONTACT)
    assert gold["dataset_owners"] == ""
    assert gold["job_owners"] == "team:gold (team) | team:silver (team)"
    assert gold["jobs"] == "job:ns:gold; job:ns:silver"
    # Where one column flows: from the silver copy on, now (gold no longer reads it).
    now = client.get("/api/v2/compliance", params={"nodeId": SILVER_EMAIL}).json()
    assert [f["column"] for f in now["flows"]] == [SILVER_EMAIL]


def test_compliance_report_names_the_dataset_owners_in_force_then(client: TestClient,
                                                                  store: Store) -> None:
    """A dataset's ownership facets are kept per version: a report as of a time names the
    owners then, and one without asOf today's."""
    later = write("ingest", 5, 50, [], RAW, ["id", "email", "name"],
                  ownership=ownership("team:privacy"))
    later[1]["outputs"][0]["facets"]["schema"]["fields"][1]["tags"] = [
        {"key": "PII", "value": "email", "source": "ingest"}]
    record(store, later)

    def raw_owners(params: dict[str, str]) -> list[dict[str, Any]]:
        report = client.get("/api/v2/compliance", params={"tag": "PII", **params}).json()
        return {d["nodeId"]: d["owners"] for d in report["datasets"]}[f"dataset:file:{RAW}"]

    assert raw_owners({"asOf": BEFORE_GOLD_V2}) == [
        {"name": "team:crm", "type": "team", "source": "facet", "current": False}]
    assert raw_owners({}) == [
        {"name": "team:privacy", "type": "team", "source": "facet", "current": True}]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "field"), [
    ("get", "/api/v2/classification", {"params": {"nodeId": "job:ns:silver"}}, 400,
     "query.nodeId"),
    ("get", "/api/v2/classification", {"params": {"nodeId": f"dataset:file:{RAW}",
                                                  "asOf": "yesterday"}}, 400, "query.asOf"),
    ("get", "/api/v2/classification", {"params": {"nodeId": "dataset:file:/nope"}}, 404, None),
    ("get", "/api/v2/compliance", {}, 400, "query.tag"),
    ("get", "/api/v2/compliance", {"params": {"tag": "PII", "format": "xml"}}, 400,
     "query.format"),
    ("put", "/api/v2/tag-definitions/PII", {"json": {}}, 400, "body.propagates"),
    ("put", "/api/v2/tag-definitions/PII", {"json": {"propagates": "maybe"}}, 400,
     "body.propagates"),
    ("post", "/api/v2/propagation-blocks", {"json": {"job": "job:ns:silver",
                                                     "source": RAW_EMAIL}}, 400, "body.target"),
    ("post", "/api/v2/propagation-blocks", {"json": {"job": "dataset:file:/x"}}, 400,
     "body.job"),
    ("post", "/api/v2/propagation-blocks", {"json": {"job": "job:ns:nope"}}, 404, None),
    ("post", "/api/v2/propagation-blocks", {"json": {"job": "job:ns:silver", "tag": " "}}, 400,
     "body.tag"),
    ("delete", "/api/v2/propagation-blocks/0", {}, 400, "path.block_id"),
    ("put", "/api/v2/owners", {"json": {"nodeId": "dataset:file:/nope", "name": "x"}}, 404,
     None),
    ("put", "/api/v2/owners", {"json": {"nodeId": RAW_EMAIL, "name": "x"}}, 400, "body.nodeId"),
    ("put", "/api/v2/owners", {"json": {"nodeId": f"dataset:file:{RAW}", "name": ""}}, 400,
     "body.name"),
])
def test_bad_input_is_a_4xx_naming_the_field(client: TestClient, method: str, path: str,
                                             kwargs: dict[str, Any], status: int,
                                             field: str | None) -> None:
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status, response.text
    if field is not None:
        assert field in response.text


AS_OF = (None, "2024-03-01T00:00:05Z", "2024-03-01T00:00:15Z", BEFORE_GOLD_V2,
         "2024-03-01T00:01:00Z")


def _everything(client: TestClient) -> list[Any]:
    out = []
    for as_of in AS_OF:
        params = {"asOf": as_of} if as_of else {}
        out.append(client.get("/api/v2/classification/datasets", params=params).json())
        out.append(client.get("/api/v2/compliance", params={"tag": "PII", **params}).json())
        for dataset in (RAW, SILVER, GOLD):
            out.append(client.get("/api/v2/classification", params={
                "nodeId": f"dataset:file:{dataset}", **params}).json())
    return out


def test_propagated_tags_are_a_function_of_the_set_of_events(
        db_url: str, request: pytest.FixtureRequest, tmp_path: Any) -> None:
    """Permuted, repeated and re-batched, the events give the same answers at every time."""
    all_events = [*events(), *write("export", 9, 50, [SILVER], "/export/mail", ["addr"],
                                    lineage(addr=[edge(SILVER, "email"),
                                                  edge(SILVER, "id", "HASH", masking=True)]))]
    answers = []
    rng = random.Random(2024)
    for attempt in range(3):
        url = db_url if attempt == 0 else _fresh(db_url, request, tmp_path, attempt)
        shuffled = all_events + rng.sample(all_events, k=len(all_events) // 2)
        if attempt:
            rng.shuffle(shuffled)
        opened = Store.open(url, migrate=True)
        try:
            while shuffled:
                size = rng.randint(1, 4)
                record(opened, shuffled[:size])
                shuffled = shuffled[size:]
            with _client(opened) as test_client:
                answers.append(_everything(test_client))
        finally:
            opened.close()
    assert answers[0] == answers[1] == answers[2]
    assert any(d["propagatedTags"] for d in answers[0][0]["datasets"])


def _fresh(db_url: str, request: pytest.FixtureRequest, tmp_path: Any, n: int) -> str:
    if db_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / f'again-{n}.db'}"
    cluster = request.getfixturevalue("pg_cluster")
    return str(cluster.create_database(f"again_{n}_{random.getrandbits(32):08x}"))


def test_producers_tags_facets_on_datasets_and_fields_propagate(
        store: Store, client: TestClient) -> None:
    """A ``tags`` facet naming a field tags the column; one without tags the dataset."""
    tagged = write("ingest", 5, 45, [], RAW, ["id", "email", "name"],
                   tags=facet(tags=[{"key": "GDPR", "value": "subject", "source": "catalog",
                                     "field": "name"},
                                    {"key": "confidential", "source": "catalog"}]))
    record(store, tagged)
    name = _column(client, f"datasetField:file:{SILVER}:name")
    assert sorted(f"{p['tag']}<-{p['origin']}" for p in name["propagated"]) == [
        f"GDPR<-datasetField:file:{RAW}:name", f"confidential<-dataset:file:{RAW}"]
    # Before the facet arrived neither tag was anywhere.
    assert _propagated(client, f"datasetField:file:{SILVER}:name", BEFORE_GOLD_V2) == []


def test_odd_names_from_producers_are_answered_not_failed(
        store: Store, client: TestClient) -> None:
    """Empty field names and colons in names reach the store; every answer still works."""
    odd = write("odd", 6, 46, [RAW], "/odd:name", ["", "x:y"], lineage(
        **{"": [edge(RAW, "email")], "x:y": [edge(RAW, "email"), edge(RAW, "")]}))
    odd[1]["outputs"][0]["facets"]["schema"]["fields"][0]["tags"] = ["PII"]
    record(store, odd)
    for path, params in [
        ("/api/v2/classification", {"nodeId": "dataset:file:/odd:name"}),
        ("/api/v2/classification/datasets", {}),
        ("/api/v2/compliance", {"tag": "PII"}),
        ("/api/v2/compliance", {"tag": "PII", "format": "csv"}),
    ]:
        response = client.get(path, params=params)
        assert response.status_code == 200, (path, response.text)
    body = client.get("/api/v2/classification", params={"nodeId": "dataset:file:/odd:name"}).json()
    propagated = {c["nodeId"]: [p["tag"] for p in c["propagated"]] for c in body["columns"]}
    assert propagated["datasetField:file:/odd:name:x:y"] == ["PII"]
    assert propagated["datasetField:file:/odd:name:"] == ["PII"]


def test_as_of_answers_use_the_definitions_and_tags_of_their_time(client: TestClient) -> None:
    client.put("/api/v1/tags/finance", json={})
    client.put("/api/v2/tag-definitions/finance", json={"propagates": True})
    raw = f"/api/v1/namespaces/file/datasets/{RAW.replace('/', '%2F')}/tags/finance"
    assert client.post(raw).status_code == 200
    before = client.get("/api/v2/classification/datasets").json()
    [tagged] = [t for t in client.get("/api/v2/classification", params={
        "nodeId": f"dataset:file:{RAW}"}).json()["tags"] if t["tag"] == "finance"]
    then = tagged["createdAt"]
    assert client.delete(raw).status_code == 200
    assert client.put("/api/v2/tag-definitions/PII", json={"propagates": False}).status_code \
        == 200
    now = client.get("/api/v2/classification/datasets").json()["datasets"]
    assert [d for d in now if d["propagatedTags"]] == []
    # As of the time the finance tag was on, the answer is the one given then.
    at_then = client.get("/api/v2/classification/datasets", params={"asOf": then}).json()
    assert at_then["datasets"] == before["datasets"]
