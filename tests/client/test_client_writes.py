"""The client's writes, tokens and errors against an in-process app with access tokens:
each write read back through the client, each refusal the right branch of the tree."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from headwater.client import (
    APIError,
    BadRequest,
    Client,
    ClientError,
    Conflict,
    Forbidden,
    NotFound,
    Unauthorized,
)
from headwater.client.call import Call, model
from headwater.client.models import BatchResult
from headwater.config import Settings
from headwater.errors import HeadwaterError, NotFoundError
from headwater.server.app import create_app
from headwater.store import Store
from tests.api import classification_events

ADMIN = "client-tests-admin-key"
NS = "shop"
RUN = "00000000-0000-4000-8000-00000000c001"


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    path: Path = tmp_path_factory.mktemp("writes") / "headwater.db"
    store = Store.open(f"sqlite:///{path}", migrate=True)
    try:
        with TestClient(create_app(Settings(api_key=ADMIN), store)) as test_client:
            yield test_client
    finally:
        store.close()


@pytest.fixture(scope="module")
def admin(http: TestClient) -> Client:
    return Client("http://testserver", token=ADMIN, http=http, strict=True)


def test_marquez_writes_read_back(admin: Client) -> None:
    assert admin.put_namespace(NS, owner_name="me", description="the shop").ownerName == "me"
    source = admin.put_source("shop_db", type="POSTGRESQL", connection_url="jdbc:postgresql://db/x")
    assert admin.source("shop_db") == source
    table = admin.put_dataset(
        NS,
        "public.orders",
        type="DB_TABLE",
        physical_name="public.orders",
        source_name="shop_db",
        fields=[{"name": "id", "type": "INTEGER"}],
        tags=["finance"],
    )
    assert [f.name for f in table.fields] == ["id"]
    for tag in ("pii", "key", "nightly"):
        assert admin.put_tag(tag).name == tag
    assert "pii" in admin.tag_dataset(NS, "public.orders", "pii").tags
    assert "pii" not in admin.untag_dataset(NS, "public.orders", "pii").tags
    tagged = admin.tag_field(NS, "public.orders", "id", "key")
    assert tagged.fields[0].tags == ("key",)
    assert admin.untag_field(NS, "public.orders", "id", "key").fields[0].tags == ()
    job = admin.put_job(
        NS, "load", type="BATCH", inputs=[(NS, "public.orders")], description="loads orders"
    )
    assert job.description == "loads orders"
    assert "nightly" in admin.tag_job(NS, "load", "nightly").tags
    assert "nightly" not in admin.untag_job(NS, "load", "nightly").tags
    run = admin.create_run(NS, "load", run_id=RUN, nominal_start_time="2026-05-01T00:00:00Z")
    assert (run.id, run.state) == (RUN, "NEW")
    assert admin.start_run(RUN).state == "RUNNING"
    assert admin.complete_run(RUN, at="2026-05-01T01:00:00Z").state == "COMPLETED"
    with pytest.raises(Conflict):
        admin.create_run(NS, "load", run_id=RUN)
    other = admin.create_run(NS, "load")
    assert admin.fail_run(other.id).state == "FAILED"
    third = admin.create_run(NS, "load")
    assert admin.abort_run(third.id).state == "ABORTED"
    assert admin.put_tag("finance", description="money").description == "money"

    assert admin.delete_job(NS, "load").name == "load"
    with pytest.raises(NotFound):
        admin.job(NS, "load")
    assert admin.delete_dataset(NS, "public.orders").name == "public.orders"
    assert admin.delete_namespace(NS).name == NS


def test_classification_writes(admin: Client) -> None:
    admin.ingest_batch(classification_events.events())
    raw = "dataset:file:/raw/customers"
    owners = admin.add_owner(raw, "alice", type="user")
    assert ("alice", "api") in {(o.name, o.source) for o in owners.owners}
    assert admin.remove_owner(raw, "alice", type="user") is None
    assert "alice" not in {o.name for o in admin.owners(raw).owners}
    definition = admin.put_tag_definition("PII", propagates=False, description="kept")
    assert definition.propagates is False
    assert admin.classification("dataset:file:/silver/customers").propagatedTags == ()
    assert admin.delete_tag_definition("PII") is None
    block = admin.add_block("job:ns:gold", tag="PII", reason="reviewed")
    assert admin.blocks().blocks == (block,)
    removed = admin.remove_block(block.id)
    assert removed.id == block.id and removed.removedAt is not None
    assert admin.blocks(all=True).blocks[0].removedAt == removed.removedAt


def test_tokens_and_audit(admin: Client, http: TestClient) -> None:
    created = admin.create_token("reader", scopes=["read"], namespaces=["file"])
    assert created.secret and created.scopes == ("read",)
    assert [t.name for t in admin.tokens().tokens] == ["reader"]
    reader = Client("http://testserver", token=created.secret, http=http, strict=True)
    assert reader.namespace("file").name == "file"
    with pytest.raises(Forbidden) as refused:
        reader.ingest({"eventType": "START"})
    assert refused.value.status_code == 403
    revoked = admin.revoke_token("reader")
    assert revoked.tokens[0].revokedAt is not None
    with pytest.raises(Unauthorized):
        reader.namespace("file")
    operations = {entry.operation for entry in admin.iter_audit(limit=2)}
    assert {"token.create", "token.revoke"} <= operations


def test_errors_are_the_client_branch_of_the_tree(admin: Client, http: TestClient) -> None:
    anonymous = Client("http://testserver", http=http)
    with pytest.raises(Unauthorized) as no_token:
        anonymous.namespaces()
    assert no_token.value.field == "Authorization"
    with pytest.raises(NotFound) as missing:
        admin.dataset("nowhere", "nothing")
    assert isinstance(missing.value, NotFoundError | APIError | ClientError | HeadwaterError)
    assert isinstance(missing.value, NotFoundError)
    with pytest.raises(BadRequest) as bad:
        admin.lineage("not-a-node-id")
    assert bad.value.field is not None and "nodeId" in bad.value.field
    with pytest.raises(BadRequest) as bad_event:
        admin.ingest({"eventType": "START", "eventTime": "2026-01-01T00:00:00Z"}, gzip=True)
    assert bad_event.value.field
    result = admin.ingest_batch(
        [classification_events.events()[0], {"eventType": "START"}], gzip=True
    )
    assert result.status == "partial_success"
    assert (result.summary.successful, result.summary.failed) == (1, 1)
    assert result.failed_events[0].index == 1 and result.failed_events[0].field
    refused = admin.ingest_batch([{"eventType": "START"}, {"x": 1}])
    assert (refused.summary.successful, [f.index for f in refused.failed_events]) == (0, [0, 1])
    with pytest.raises(BadRequest):  # not a batch at all: the ordinary error
        admin.send(Call.json("POST", "/api/v1/lineage/batch", model(BatchResult), {"x": 1}))
