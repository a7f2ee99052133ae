"""Every read operation of the client against a live in-process app: each answer is
decoded strictly (a field the models do not know fails) and checked against the
raw JSON the same request answers."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from headwater.client import Client, models
from headwater.client.call import Call, raw
from headwater.client.decode import encode
from headwater.client.operations import governance as v2_governance
from headwater.client.operations import headwater as v2
from headwater.client.operations import jobs as v1_jobs
from headwater.client.operations import marquez as v1
from tests.api import classification_events, retail_events
from tests.graph.retail import col, ds, job

WAREHOUSE = "warehouse"


def _same(typed: Any, answer: Any, path: str = "$") -> None:
    """``typed`` (encoded) holds every key of ``answer`` with an equal value; times compare
    as times, since the model keeps them as ``datetime``."""
    if isinstance(answer, dict):
        assert isinstance(typed, dict), path
        for key, value in answer.items():
            assert key in typed, f"{path}.{key} dropped by the model"
            _same(typed[key], value, f"{path}.{key}")
    elif isinstance(answer, list):
        assert isinstance(typed, list) and len(typed) == len(answer), path
        for index, (left, right) in enumerate(zip(typed, answer, strict=True)):
            _same(left, right, f"{path}[{index}]")
    elif isinstance(answer, str) and isinstance(typed, str) and typed != answer:
        assert datetime.fromisoformat(typed) == datetime.fromisoformat(answer), path
    else:
        assert typed == answer, path


def check(client: Client, call: Call[Any]) -> Any:
    """``call``'s typed result, after checking it against the raw answer."""
    typed = client.send(call)
    answer = client.send(dataclasses.replace(call, read=raw))
    _same(encode(typed), answer)
    return typed


def test_directed_lineage_up_down_and_as_of(client: Client) -> None:
    up = check(client, v2.upstream(ds("gold.revenue"), depth=2))
    assert isinstance(up, models.DirectedLineage)
    assert up.direction == "upstream"
    assert {n.id for n in up.nodes} == {
        ds("gold.revenue"),
        job("build_revenue"),
        ds("silver.orders"),
        ds("raw.products"),
    }
    assert client.upstream(ds("gold.revenue"), depth=2) == up
    down = check(client, v2.downstream(ds("silver.orders"), depth=2))
    assert ds("gold.revenue") in {n.id for n in down.nodes}
    assert all(e.upstream and e.downstream for e in down.edges)
    # Day 1: build_revenue did not read raw.products yet.
    day_one = datetime(2026, 3, 1, 23, tzinfo=UTC)
    before = check(client, v2.lineage(ds("gold.revenue"), direction="upstream", as_of=day_one))
    assert before.asOf == day_one
    assert ds("raw.products") not in {n.id for n in before.nodes}
    both = check(client, v2.lineage(job("build_revenue"), depth=1, max_nodes=3))
    assert both.truncated and len(both.nodes) <= 3


def test_column_lineage(client: Client) -> None:
    total = col("gold.revenue", "total")
    directed = check(client, v2.upstream(total, depth=1))
    edge = next(e for e in directed.edges if e.upstream == col("silver.orders", "amount"))
    assert edge.via == job("build_revenue")
    assert [t.subtype or t.type for t in edge.transformations] == ["AGGREGATION"]
    graph = check(client, v1.column_lineage(total, depth=1))
    assert isinstance(graph, models.LineageGraph)
    assert total in {node.id for node in graph.graph}
    marquez = check(client, v1.lineage_graph(ds("gold.revenue"), depth=1))
    assert {node.type for node in marquez.graph} >= {"DATASET", "JOB"}


def test_search_namespaces_sources(client: Client) -> None:
    found = check(client, v1.search("revenue"))
    assert found.totalCount >= 2
    assert {r.nodeId for r in found.results} >= {ds("gold.revenue"), job("build_revenue")}
    only_jobs = check(client, v1.search("revenue", filter="job"))
    assert {r.type for r in only_jobs.results} == {"JOB"}
    spaces = check(client, v1.namespaces())
    assert {WAREHOUSE, "file"} <= {n.name for n in spaces.namespaces}
    assert check(client, v1.namespace(WAREHOUSE)).name == WAREHOUSE
    sources = check(client, v1.sources())
    assert sources.totalCount == len(sources.sources) >= 1
    assert check(client, v1.source(sources.sources[0].name)) == sources.sources[0]


def test_datasets_versions_jobs_runs(client: Client) -> None:
    listed = check(client, v1.datasets(WAREHOUSE))
    assert ds("gold.revenue").split(":", 2)[2] in {d.name for d in listed.datasets}
    revenue = check(client, v1.dataset(WAREHOUSE, "gold.revenue"))
    assert [f.name for f in revenue.fields] == ["total"]
    versions = check(client, v1.dataset_versions(WAREHOUSE, "gold.revenue"))
    assert versions.totalCount == 2
    version = check(
        client, v1.dataset_version(WAREHOUSE, "gold.revenue", versions.versions[0].version)
    )
    assert version.createdByRun is not None
    assert version.createdByRun.id == retail_events.run_id("build_revenue", 2)

    built = check(client, v1_jobs.job(WAREHOUSE, "build_revenue"))
    assert {(i.namespace, i.name) for i in built.inputs} == {
        (WAREHOUSE, "silver.orders"),
        (WAREHOUSE, "raw.products"),
    }
    assert check(client, v1_jobs.jobs(WAREHOUSE)).totalCount == 5
    job_versions = check(client, v1_jobs.job_versions(WAREHOUSE, "build_revenue"))
    assert job_versions.totalCount == 2
    check(client, v1_jobs.job_version(WAREHOUSE, "build_revenue", job_versions.versions[0].version))
    runs = check(client, v1_jobs.job_runs(WAREHOUSE, "build_revenue"))
    assert {r.state for r in runs.runs} == {"COMPLETED"}
    one = check(client, v1_jobs.run(runs.runs[0].id))
    assert one.outputDatasetVersions[0].datasetVersionId.name == "gold.revenue"
    facets = check(client, v1_jobs.run_facets(one.id))
    assert facets.runId == one.id
    children = check(client, v1_jobs.child_runs(one.id))
    assert children.totalCount == 0
    upstream_runs = check(client, v1.run_lineage_upstream(one.id, depth=1))
    assert retail_events.run_id("clean_orders", 2) in {r.run.id for r in upstream_runs.runs}


def test_events_tags_and_paging(client: Client, recorder: Any) -> None:
    page = check(client, v1.events(limit=5, sort_direction="asc"))
    assert page.totalCount >= len(retail_events.events())
    assert page.events[0]["eventTime"] <= page.events[-1]["eventTime"]
    sent = len(recorder.requests)
    every = list(client.iter_events(limit=7))
    assert len(every) == page.totalCount
    assert len(recorder.requests) - sent == -(-page.totalCount // 7)  # one request per page
    names = [d.name for d in client.iter_datasets(WAREHOUSE, limit=2)]
    assert names == [d.name for d in client.datasets(WAREHOUSE, limit=100).datasets]
    assert len(names) == client.datasets(WAREHOUSE).totalCount
    assert [r.id for r in client.iter_job_runs(WAREHOUSE, "build_revenue", limit=1)] == [
        r.id for r in client.job_runs(WAREHOUSE, "build_revenue").runs
    ]
    assert [n.name for n in client.iter_namespaces(limit=1)] == [
        n.name for n in client.namespaces().namespaces
    ]
    # Keyset paging: each page after the first asks for the one after the cursor.
    sent = len(recorder.cursors)
    found = list(client.iter_search("o", limit=2))
    assert [r.nodeId for r in found] == [r.nodeId for r in client.search("o", limit=1000).results]
    # Every full page hands a cursor on (the last full one too: an empty page ends it).
    assert len(found) > 2 and len(recorder.cursors) - sent == len(found) // 2
    first = check(client, v1.datasets(WAREHOUSE, limit=2))
    assert first.nextCursor is not None
    second = check(client, v1.datasets(WAREHOUSE, limit=2, cursor=first.nextCursor))
    assert [d.name for d in first.datasets + second.datasets] == names[:4]
    read = check(client, v2.readers(ds("silver.orders")))
    assert {r.job for r in read.readers} >= {job("build_revenue"), job("build_ltv")}
    assert [r.runId for r in client.iter_readers(ds("silver.orders"), limit=1)] == [
        r.runId for r in read.readers
    ]
    tags = check(client, v1.tags())
    assert "PII" in {t.name for t in tags.tags}


def test_drift_impact_classification_compliance(client: Client) -> None:
    drift = check(client, v2.drift())
    assert drift.totalCount == 3
    breaking = check(client, v2.drift(breaking=True))
    assert [d.datasetId for d in breaking.drifts] == ["dataset:file:/users"]
    assert [c.kind for c in breaking.drifts[0].changes] == ["removed"]
    assert len(list(client.iter_drift(limit=1))) == 3

    impact = check(client, v2.impact(col("silver.orders", "amount")))
    assert impact.summary.columns >= 2
    assert col("report.dash", "total") in {n.id for n in impact.nodes}
    csv = client.impact_csv(col("silver.orders", "amount"))
    assert col("report.dash", "total") in csv

    silver = "dataset:file:/silver/customers"
    classified = check(client, v2_governance.classification(silver))
    assert classified.propagatedTags == ("PII",)
    email = next(c for c in classified.columns if c.field == "email")
    assert email.propagated[0].origin == classification_events.RAW_EMAIL
    hashed = next(c for c in classified.columns if c.field == "email_hash")
    assert hashed.stopped[0].reason == "masking" and hashed.stopped[0].edge.masking
    badges = check(client, v2_governance.dataset_badges())
    assert silver in {d.nodeId for d in badges.datasets}
    report = check(client, v2_governance.compliance(tag="PII"))
    assert [f.dataset for f in report.flows] == [silver]
    assert "PII" in client.compliance_csv(tag="PII")
    definitions = check(client, v2_governance.tag_definitions())
    assert "PII" in {d.name for d in definitions.definitions}
    owners = check(client, v2_governance.owners("dataset:file:/raw/customers"))
    assert [(o.name, o.source) for o in owners.owners] == [("team:crm", "facet")]
    assert check(client, v2_governance.blocks()).blocks == ()


def test_server_operations(client: Client) -> None:
    health = check(client, v2.health())
    assert health.status == "ok" and health.version
    assert "headwater_http_requests_total" in client.metrics()
    assert "warehouse" in {p.namespace for p in check(client, v2.producers()).producers}
    assert check(client, v2.quarantine()).totalCount == 0
    assert check(client, v2.tokens()).tokens == ()
    assert isinstance(check(client, v2.audit()), models.AuditList)


@pytest.mark.parametrize("gzip", [False, True])
def test_ingest_one_event(client: Client, gzip: bool) -> None:
    event = retail_events.events()[0]
    stored = client.ingest(event, gzip=gzip)
    assert isinstance(stored, models.IngestResult)
    assert stored.duplicate  # the fixture's batch stored it already
    assert len(stored.eventHash) == 64
