"""A client asking by a dataset's raw name (as a producer sent it) gets the dataset
the namespace rules made of it: Marquez's v1 reads and headwater's v2 reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.errors import ConfigError
from headwater.server.app import create_app, open_store
from headwater.store import Store
from headwater.store.namespace_rules import parse_rules
from tests.store.test_namespace_aliases import CONNECT, RULES, SPARK, TRINO

CLUSTER = "kafka://orders-cluster"


@pytest.fixture
def aliased(db_url: str) -> Iterator[TestClient]:
    store = Store.open(db_url)
    store.use_namespace_rules(RULES)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            answer = client.post("/api/v1/lineage/batch", json=[CONNECT, SPARK, TRINO])
            assert answer.json()["summary"]["successful"] == 3
            yield client
    finally:
        store.close()


def _v1(namespace: str, name: str, rest: str = "") -> str:
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/datasets/{quote(name, safe='')}{rest}"


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("kafka://b2:9092", "orders", (CLUSTER, "orders")),
        ("kafka://b1:9092,b2:9092", "orders", (CLUSTER, "orders")),
        ("kafka://PLAINTEXT://B2:9092", "orders", (CLUSTER, "orders")),
        (CLUSTER, "orders", (CLUSTER, "orders")),
        ("s3a://lake", "silver/orders/", ("s3://lake", "silver/orders")),
        ("hive://metastore", "silver.orders", ("s3://lake", "silver/orders")),
    ],
)
def test_v1_dataset_by_its_raw_name(
    aliased: TestClient, namespace: str, name: str, expected: tuple[str, str]
) -> None:
    answer = aliased.get(_v1(namespace, name))
    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == {"namespace": expected[0], "name": expected[1]}
    versions = aliased.get(_v1(namespace, name, "/versions"))
    assert versions.status_code == 200 and versions.json()["totalCount"] >= 1


def test_an_unknown_name_is_still_a_404(aliased: TestClient) -> None:
    assert aliased.get(_v1("kafka://b9:9092", "orders")).status_code == 404
    assert aliased.get(_v1("kafka://b2:9092", "other")).status_code == 404


def test_v1_lineage_by_a_raw_node_id(aliased: TestClient) -> None:
    answer = aliased.get("/api/v1/lineage", params={"nodeId": "dataset:kafka://b2:9092:orders"})
    assert answer.status_code == 200, answer.text
    ids = {node["id"] for node in answer.json()["graph"]}
    assert f"dataset:{CLUSTER}:orders" in ids
    assert {"job:etl:connector", "job:etl:spark_job", "dataset:s3://lake:silver/orders"} <= ids
    assert not any("b2:9092" in node_id for node_id in ids)


def test_v2_reads_by_a_raw_node_id(aliased: TestClient) -> None:
    # A namespace with colons a node id cannot split: every split is looked up.
    raw = "dataset:kafka://PLAINTEXT://B2:9092:orders"
    lineage = aliased.get("/api/v2/lineage", params={"nodeId": raw, "direction": "downstream"})
    assert lineage.status_code == 200, lineage.text
    assert lineage.json()["nodeId"] == f"dataset:{CLUSTER}:orders"
    readers = aliased.get(f"/api/v2/datasets/{quote(raw, safe='')}/readers")
    assert readers.status_code == 200, readers.text
    assert {r["job"] for r in readers.json()["readers"]} == {"job:etl:spark_job"}
    table = "dataset:hive://metastore:silver.orders"
    readers = aliased.get(f"/api/v2/datasets/{quote(table, safe='')}/readers")
    assert readers.status_code == 200, readers.text
    # The report, reading the table by its catalog name, read the location.
    assert {r["job"] for r in readers.json()["readers"]} == {"job:etl:report"}


def test_a_bad_rules_file_stops_the_server_naming_the_field(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('[[kafka.clusters]]\nname = "c"\nbrokers = "b1:9092"\n')
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'h.db'}", namespace_rules=rules)
    with pytest.raises(ConfigError, match=r"rules.toml: kafka.clusters\[0\].brokers: "):
        open_store(settings)


def test_the_check_endpoint_lists_what_the_rules_did_not_merge(aliased: TestClient) -> None:
    # A producer on a broker the rules do not list: the topic splits again.
    stray = {
        **CONNECT,
        "run": {"runId": "0195e0c5-0000-7000-8000-000000000009"},
        "outputs": [{"namespace": "kafka://b7:9092", "name": "orders"}],
    }
    assert aliased.post("/api/v1/lineage", json=stray).status_code == 200
    answer = aliased.get("/api/v2/namespaces/check")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["rulesInForce"] == RULES.fingerprint
    [suspect] = body["suspects"]
    assert suspect["kind"] == "kafka" and suspect["certain"] is False
    assert [d["nodeId"] for d in suspect["datasets"]] == [
        "dataset:kafka://b7:9092:orders",
        f"dataset:{CLUSTER}:orders",
    ]
    # The configured cluster is the one to extend.
    assert suspect["rule"] == (
        '[[kafka.clusters]]\nname = "orders-cluster"\nbrokers = ["b1:9092", "b2:9092", "b7:9092"]'
    )


def test_a_job_asked_by_its_renamed_namespace(db_url: str) -> None:
    rules = parse_rules(
        '[jobs]\napply_renames = true\n[[rename]]\nnamespace = "etl"\nto_namespace = "platform"\n'
    )
    store = Store.open(db_url)
    store.use_namespace_rules(rules)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            assert client.post("/api/v1/lineage/batch", json=[CONNECT, SPARK]).status_code == 200
            job = client.get("/api/v1/namespaces/etl/jobs/connector")
            assert job.status_code == 200, job.text
            assert (job.json()["namespace"], job.json()["name"]) == ("platform", "connector")
            runs = client.get("/api/v1/namespaces/etl/jobs/spark_job/runs")
            assert runs.status_code == 200 and len(runs.json()["runs"]) == 1
            lineage = client.get("/api/v1/lineage", params={"nodeId": "job:etl:spark_job"})
            assert lineage.status_code == 200, lineage.text
            assert "job:platform:spark_job" in {n["id"] for n in lineage.json()["graph"]}
            # A job that is not there under either namespace stays a 404.
            assert client.get("/api/v1/namespaces/etl/jobs/nothing").status_code == 404
            assert client.get("/api/v1/namespaces/platform/jobs/connector").status_code == 200
    finally:
        store.close()


def test_the_check_endpoint_says_when_the_server_has_other_rules(db_url: str) -> None:
    with Store.open(db_url) as store:
        store.use_namespace_rules(RULES)
        with TestClient(create_app(Settings(), store)) as client:
            assert client.post("/api/v1/lineage", json=CONNECT).status_code == 200
            body = client.get("/api/v2/namespaces/check").json()
            assert body["rulesConfigured"] == body["rulesInForce"] == RULES.fingerprint
            assert body["rulesChanged"] is None
    other = parse_rules("[s3]\naliases = true\n")
    with Store.open(db_url) as store:
        assert store.use_namespace_rules(other) is not None
        with TestClient(create_app(Settings(), store)) as client:
            body = client.get("/api/v2/namespaces/check").json()
    assert body["rulesInForce"] == RULES.fingerprint
    assert body["rulesConfigured"] == other.fingerprint
    assert "namespace rules changed since this store was derived" in body["rulesChanged"]
