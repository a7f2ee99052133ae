"""The demo end to end: the retail pipeline runs instrumented, and its whole lineage is there.

One module-scoped demo directory, two pipeline runs at the smallest scale:
the normal run with the real-time half on the session's Kafka broker (and its
orders topic also fed by a Kafka Connect FileStreamSource, ``--with-connect``),
then the ``--drift`` run without it (the second run of the same pipeline, so it
also proves that rerunning adds runs and versions without duplicating datasets
or jobs). On top of the drift run, the drift's real-time night: the order
producer and the stream over the topic run again, on the drifted silver orders
(string customer ids) — the two real-time steps the drift travels through, not
the whole real-time half a second time. Everything is read back through the
HTTP API of an app on the demo's own store.
"""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from headwater.config import Settings
from headwater.demo import DemoResult, PipelineResult, run_demo, run_pipeline
from headwater.demo.realtime import CONNECTOR_NAME, RealtimeHalf
from headwater.demo.server import EmbeddedServer, free_port
from headwater.demo.steps import STEPS
from headwater.server.app import create_app, open_store

# Two pipeline runs of nine Spark applications each, four more streaming ones in
# the first, two in the drift's real-time night: allow for a busy machine.
pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(3600)]

HAVE_ML = importlib.util.find_spec("numpy") is not None

# output -> the inputs of the job writing it, relative to the demo's data directory.
EXPECTED_IO: dict[str, set[str]] = {
    "lake/bronze/customers": {"raw/customers.csv"},
    "lake/bronze/products": {"raw/products.csv"},
    "lake/bronze/orders": {"raw/orders.csv"},
    "lake/bronze/order_lines": {"raw/order_lines.csv"},
    "lake/bronze/payments": {"raw/payments.csv"},
    "lake/bronze/clickstream": {"raw/clickstream"},
    "lake/silver/customers": {"lake/bronze/customers"},
    "lake/silver/products": {"lake/bronze/products"},
    "lake/silver/orders": {"lake/bronze/orders", "lake/silver/customers"},
    "lake/silver/order_items": {
        "lake/bronze/order_lines",
        "lake/silver/orders",
        "lake/silver/products",
    },
    "lake/silver/payments": {"lake/bronze/payments"},
    "lake/silver/clickstream": {"lake/bronze/clickstream"},
    "lake/gold/revenue_daily": {"lake/silver/orders"},
    "warehouse/gold.db/customer_ltv": {
        "lake/silver/customers",
        "lake/silver/orders",
        "lake/silver/payments",
    },
    "lake/gold/product_performance": {"lake/silver/order_items"},
    "lake/features/customer_features": {
        "lake/silver/customers",
        "lake/silver/orders",
        "lake/silver/clickstream",
    },
}
# The model is a dataset: the training run writes it, the jobs scoring with it read it.
EXPECTED_ML_IO: dict[str, set[str]] = {
    "models/repeat_buyer": {"lake/features/customer_features"},
    "models/repeat_buyer_holdout": {"lake/features/customer_features", "models/repeat_buyer"},
    "lake/gold/repeat_buyer_scores": {"lake/features/customer_features", "models/repeat_buyer"},
}
# The real-time half (topics as ``kafka:<topic>``): the orders topic is written by
# the producer job and by the Connect source copying the point-of-sale feed.
EXPECTED_REALTIME_IO: dict[str, set[str]] = {
    "kafka:retail.orders": {"lake/silver/orders", "raw/pos_orders.jsonl"},
    "lake/silver/orders_live": {"kafka:retail.orders"},
    "lake/gold/live_revenue": {"lake/silver/orders_live"},
    "lake/features/live_customer_features": {
        "lake/features/customer_features",
        "lake/silver/orders_live",
    },
}
EXPECTED_REALTIME_ML_IO: dict[str, set[str]] = {
    "kafka:retail.order_scores": {
        "kafka:retail.orders",
        "lake/features/live_customer_features",
        "models/repeat_buyer",
    },
}
REALTIME_SCRIPTS = {s.script for s in STEPS if s.realtime}
# The Spark application names of the real-time jobs (the prefix of their jobs' names).
REALTIME_APPS = (
    "retail_orders_producer",
    "retail_stream_orders",
    "retail_live_features",
    "retail_score_stream",
)
# The real-time steps the drift run's night repeats: the producer, and the stream it feeds.
DRIFT_STREAM_SCRIPTS = ("orders_producer.py", "stream_orders.py")


@dataclass
class Snapshot:
    """What the API says after one demo run."""

    counts: dict[str, int]
    jobs: list[dict[str, Any]]


@dataclass
class DemoRuns:
    data_dir: Path
    first: DemoResult
    after_first: Snapshot
    drift: DemoResult
    after_drift: Snapshot
    #: The producer and the stream once more, after the drift run (see the module doc).
    drift_stream: PipelineResult


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=120)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, kafka_bootstrap: str) -> DemoRuns:
    data_dir = tmp_path_factory.mktemp("demo").resolve()
    first = run_demo(
        data_dir,
        scale="tiny",
        serve=False,
        port=0,
        console=_quiet(),
        kafka_bootstrap=kafka_bootstrap,
        with_connect=True,
    )
    after_first = _snapshot(data_dir, first)
    # The drift run leaves the real-time half out: its streams were shown by the first.
    drift = run_demo(
        data_dir, scale="tiny", drift=True, serve=False, port=0, console=_quiet(), streaming=False
    )
    after_drift = _snapshot(data_dir, drift)
    drift_stream = _drifted_stream(data_dir, kafka_bootstrap)
    return DemoRuns(data_dir, first, after_first, drift, after_drift, drift_stream)


def _drifted_stream(data_dir: Path, bootstrap: str) -> PipelineResult:
    """The producer and the stream over the topic, under an orchestrator run of their own,
    on the drift run's lake: the producer writes the drifted silver orders."""
    settings = Settings(data_dir=data_dir, port=free_port("127.0.0.1"))
    store = open_store(settings)
    try:
        server = EmbeddedServer(settings, store)
        server.start()
        try:
            steps = [s for s in STEPS if s.script in DRIFT_STREAM_SCRIPTS]
            return run_pipeline(
                data_dir,
                server.url,
                scale="tiny",
                drift=True,
                console=_quiet(),
                steps=steps,
                realtime=RealtimeHalf(bootstrap),
            )
        finally:
            server.stop()
    finally:
        store.close()


@pytest.fixture
def api(demo: DemoRuns) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=demo.data_dir))) as client:
        yield client


def _snapshot(data_dir: Path, result: DemoResult) -> Snapshot:
    with TestClient(create_app(Settings(data_dir=data_dir))) as client:
        return Snapshot(dict(result.counts), _jobs(client))


def _jobs(client: TestClient) -> list[dict[str, Any]]:
    response = client.get("/api/v1/namespaces/retail/jobs", params={"limit": 1000})
    assert response.status_code == 200, response.text
    return list(response.json()["jobs"])


def _relative(data_dir: Path, dataset: dict[str, str]) -> str:
    if dataset["namespace"].startswith("kafka://"):
        return f"kafka:{dataset['name']}"
    assert dataset["namespace"] == "file", dataset
    return str(Path(dataset["name"]).relative_to(data_dir))


def _io_by_output(data_dir: Path, jobs: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Output dataset -> inputs of the job(s) writing it, from the jobs' current inputs/outputs."""
    found: dict[str, set[str]] = {}
    for job in jobs:
        inputs = {_relative(data_dir, d) for d in job["inputs"]}
        for output in job["outputs"]:
            found.setdefault(_relative(data_dir, output), set()).update(inputs)
    return found


def _field_id(data_dir: Path, dataset: str, field: str) -> str:
    return f"datasetField:file:{data_dir / dataset}:{field}"


# --- the pipeline ran --------------------------------------------------------------------


def test_every_step_ran(demo: DemoRuns) -> None:
    for result in (demo.first, demo.drift):
        statuses = {s.step.script: s.status for p in result.pipelines for s in p.steps}
        expected_ml = "ok" if HAVE_ML else "skipped"
        assert statuses.pop("train.py") == expected_ml
        assert statuses.pop("score.py") == expected_ml
        expected_stream_scoring = expected_ml if result is demo.first else "skipped"
        assert statuses.pop("score_stream.py") == expected_stream_scoring
        realtime = {script: statuses.pop(script) for script in REALTIME_SCRIPTS & set(statuses)}
        assert set(realtime.values()) == {"ok" if result is demo.first else "skipped"}, realtime
        assert set(statuses.values()) == {"ok"}, statuses
    skipped = [s for s in demo.drift.pipelines[0].steps if s.step.realtime]
    assert {s.reason for s in skipped} == {"--no-streaming"}
    # The first demo had no earlier run, the drift demo reuses it: one pipeline run each.
    assert [p.drift for p in demo.first.pipelines] == [False]
    assert [p.drift for p in demo.drift.pipelines] == [True]


# --- table-level lineage -----------------------------------------------------------------


def test_every_job_reads_and_writes_the_expected_datasets(demo: DemoRuns) -> None:
    found = _io_by_output(demo.data_dir, demo.after_first.jobs)
    expected = dict(EXPECTED_IO) | EXPECTED_REALTIME_IO
    if HAVE_ML:
        expected.update(EXPECTED_ML_IO)
        expected.update(EXPECTED_REALTIME_ML_IO)
    # The saved model's metadata and data folders are its internals, no datasets.
    assert found == expected


@pytest.mark.parametrize("which", ["first", "drift"])
def test_every_run_hangs_under_the_pipeline_run(
    demo: DemoRuns, api: TestClient, which: str
) -> None:
    result = demo.first if which == "first" else demo.drift
    pipeline_run = result.pipelines[0].run_id
    response = api.get("/api/v1/namespaces/retail/jobs/retail_pipeline/runs")
    assert response.status_code == 200, response.text
    states = {r["id"]: r["state"] for r in response.json()["runs"]}
    assert states[pipeline_run] == "COMPLETED"
    # The jobs that existed once that pipeline run was over (the second run also
    # drops the tables the first created: a DROP the first run's IF EXISTS did not make).
    known = demo.after_first if which == "first" else demo.after_drift
    for job in known.jobs:
        # The Connect source's runs are the connector's incarnations, under no pipeline.
        if job["name"] in ("retail_pipeline", CONNECTOR_NAME):
            continue
        if which == "drift" and job["name"].startswith(REALTIME_APPS):
            continue
        runs = [r for r in _job_runs(api, job["name"]) if _root_run(r) == pipeline_run]
        assert runs, f"{job['name']} has no run under the pipeline run {pipeline_run}"
        assert {r["state"] for r in runs} == {"COMPLETED"}, job["name"]


def _job_runs(api: TestClient, job: str) -> list[dict[str, Any]]:
    response = api.get(
        f"/api/v1/namespaces/retail/jobs/{quote(job, safe='')}/runs", params={"limit": 100}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["runs"])


def _root_run(run: dict[str, Any]) -> str | None:
    """The run id at the top of a run's parent chain, as its ``parent`` facet says."""
    parent = run["facets"].get("parent")
    if not parent:
        return None
    root = parent.get("root") or parent
    return str(root["run"]["runId"])


# --- column-level lineage ----------------------------------------------------------------


def test_revenue_column_comes_from_the_bronze_amount(demo: DemoRuns, api: TestClient) -> None:
    target = _field_id(demo.data_dir, "lake/gold/revenue_daily", "total_revenue")
    response = api.get(
        "/api/v2/lineage", params={"nodeId": target, "direction": "upstream", "depth": 10}
    )
    assert response.status_code == 200, response.text
    edges = {(e["upstream"], e["downstream"]): e for e in response.json()["edges"]}
    silver_total = _field_id(demo.data_dir, "lake/silver/orders", "total")
    bronze_amount = _field_id(demo.data_dir, "lake/bronze/orders", "amount")
    raw_amount = _field_id(demo.data_dir, "raw/orders.csv", "amount")
    assert _kinds(edges[(silver_total, target)]) == {("DIRECT", "AGGREGATION")}
    assert _kinds(edges[(bronze_amount, silver_total)]) == {("DIRECT", "TRANSFORMATION")}
    assert _kinds(edges[(raw_amount, bronze_amount)]) == {("DIRECT", "IDENTITY")}


def _kinds(edge: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(t["type"], t["subtype"]) for t in edge["transformations"] if t["type"] == "DIRECT"}


def test_key_column_edges_across_jobs(demo: DemoRuns, api: TestClient) -> None:
    def upstream_fields(dataset: str, field: str) -> set[str]:
        node = _field_id(demo.data_dir, dataset, field)
        response = api.get(
            "/api/v2/lineage", params={"nodeId": node, "direction": "upstream", "depth": 1}
        )
        assert response.status_code == 200, response.text
        return {
            e["upstream"]
            for e in response.json()["edges"]
            if e["downstream"] == node and any(t["type"] == "DIRECT" for t in e["transformations"])
        }

    d = demo.data_dir
    # The silver join brings the customer's country into orders.
    assert upstream_fields("lake/silver/orders", "country") == {
        _field_id(d, "lake/silver/customers", "country")
    }
    # The SQL CTAS: lifetime value sums the silver order totals.
    assert upstream_fields("warehouse/gold.db/customer_ltv", "lifetime_value") == {
        _field_id(d, "lake/silver/orders", "total")
    }
    # The window job: revenue from the line totals of order items.
    assert upstream_fields("lake/gold/product_performance", "revenue") == {
        _field_id(d, "lake/silver/order_items", "line_total")
    }
    # PII: the cleaned email is computed from the bronze email.
    assert upstream_fields("lake/silver/customers", "email") == {
        _field_id(d, "lake/bronze/customers", "email")
    }


# --- rerun and drift ---------------------------------------------------------------------


def test_second_run_adds_runs_without_duplicating(demo: DemoRuns) -> None:
    before, after = demo.after_first.counts, demo.after_drift.counts
    assert after["datasets"] == before["datasets"]
    first = {j["name"] for j in demo.after_first.jobs}
    second = {j["name"] for j in demo.after_drift.jobs}
    # Every job runs again; the only new ones drop a table the first run created
    # (there, DROP TABLE IF EXISTS found nothing to drop and reported nothing).
    assert first <= second
    assert second - first and all(".drop_table." in name for name in second - first)
    assert after["jobs"] == before["jobs"] + len(second - first)
    assert after["runs"] > before["runs"]
    assert after["dataset_versions"] > before["dataset_versions"]


def _versions(api: TestClient, data_dir: Path, dataset: str) -> list[dict[str, Any]]:
    name = quote(str(data_dir / dataset), safe="")
    response = api.get(f"/api/v1/namespaces/file/datasets/{name}/versions", params={"limit": 100})
    assert response.status_code == 200, response.text
    return list(response.json()["versions"])  # newest first


def _field_types(version: dict[str, Any]) -> dict[str, str]:
    return {f["name"]: str(f["type"]).lower() for f in version["fields"]}


def test_drift_is_a_new_schema_version_read_downstream(demo: DemoRuns, api: TestClient) -> None:
    d = demo.data_dir
    bronze = _versions(api, d, "lake/bronze/customers")
    by_id = {v["version"]: _field_types(v) for v in bronze}
    newest = by_id[bronze[0]["version"]]
    assert "phone_number" in newest and "phone" not in newest
    assert newest["customer_id"] == "string"
    before = [v for v in by_id.values() if "phone" in v]
    assert before, "no version of bronze customers has the schema from before the drift"
    assert all(v["customer_id"] in {"int", "integer", "bigint"} for v in before)
    # The change reaches the gold catalog table through silver.
    ltv = [_field_types(v) for v in _versions(api, d, "warehouse/gold.db/customer_ltv")]
    assert ltv[0]["customer_id"] == "string"
    assert any(v.get("customer_id") in {"int", "integer", "bigint"} for v in ltv[1:])

    # The silver run after the change read the new bronze version, the one before the old.
    silver_customers = next(
        j
        for j in demo.after_drift.jobs
        if any(_relative(d, o) == "lake/silver/customers" for o in j["outputs"])
    )
    read = {
        _root_run(r): [by_id[v["datasetVersionId"]["version"]] for v in r["inputDatasetVersions"]]
        for r in _job_runs(api, silver_customers["name"])
    }
    [after_drift] = read[demo.drift.pipelines[0].run_id]
    assert "phone_number" in after_drift
    [before_drift] = read[demo.first.pipelines[0].run_id]
    assert "phone" in before_drift


def test_a_scoring_run_leads_to_the_model_version_its_training_run_and_data(
    demo: DemoRuns, api: TestClient
) -> None:
    # "How was the model that scored these customers trained?", asked of the drift run.
    assert HAVE_ML
    pipeline_run = demo.drift.pipelines[0].run_id
    scores = str(demo.data_dir / "lake/gold/repeat_buyer_scores")
    scoring = [
        job["name"]
        for job in demo.after_drift.jobs
        if any(o["name"] == scores for o in job["outputs"])
    ]
    (score_run,) = [
        r for job in scoring for r in _job_runs(api, job) if _root_run(r) == pipeline_run
    ]
    response = api.get("/api/v1/runlineage/upstream", params={"runId": score_run["id"], "depth": 1})
    assert response.status_code == 200, response.text
    runs = response.json()["runs"]
    model = str(demo.data_dir / "models/repeat_buyer")
    (read_model,) = [i for i in runs[0]["inputs"] if i["name"] == model]
    # The model version it read was written by this pipeline run's training run ...
    (trained,) = [r for r in runs if r["run"]["id"] == read_model["producedByRunId"]]
    assert trained["job"]["name"] == "retail_train.fit_pipeline"
    version = api.get(
        f"/api/v1/namespaces/file/datasets/{quote(model, safe='')}/versions/{read_model['version']}"
    ).json()
    assert version["createdByRun"]["id"] == trained["run"]["id"]
    assert version["facets"]["model"]["labelColumn"] == "bought_again"
    # ... which read this version of the features, made by this pipeline run's features job.
    features = str(demo.data_dir / "lake/features/customer_features")
    (read_features,) = [i for i in trained["inputs"] if i["name"] == features]
    made = api.get(f"/api/v1/jobs/runs/{read_features['producedByRunId']}").json()
    assert _root_run(made) == pipeline_run


# --- the real-time half --------------------------------------------------------------------


def _upstream(api: TestClient, node: str) -> dict[str, set[str]]:
    """v1 lineage upstream of ``node``: each node id -> the node ids feeding it."""
    response = api.get("/api/v1/lineage", params={"nodeId": node, "depth": 30})
    assert response.status_code == 200, response.text
    feeds: dict[str, set[str]] = {}
    for item in response.json()["graph"]:
        for edge in item["inEdges"]:
            feeds.setdefault(edge["destination"], set()).add(edge["origin"])
    return feeds


def _path_exists(feeds: dict[str, set[str]], origin: str, *through: str) -> bool:
    """True if ``origin`` reaches each of ``through`` in turn along the edges."""
    reached = {origin}
    for stop in through:
        if not any(node in feeds.get(stop, set()) for node in reached):
            return False
        reached = {stop}
    return True


def test_the_real_time_half_is_one_connected_graph(
    demo: DemoRuns, api: TestClient, kafka_bootstrap: str
) -> None:
    # file -> connector -> topic -> stream -> table -> live features -> streaming
    # scoring -> scores topic, and the producer and the model feeding in, read from
    # the scores topic upstream.
    assert HAVE_ML
    d = demo.data_dir
    kafka = f"kafka://{kafka_bootstrap}"
    scores = f"dataset:{kafka}:retail.order_scores"
    feeds = _upstream(api, scores)
    orders = f"dataset:{kafka}:retail.orders"
    live = f"dataset:file:{d / 'lake/silver/orders_live'}"
    live_features = f"dataset:file:{d / 'lake/features/live_customer_features'}"
    jobs = {j["name"] for j in demo.after_first.jobs}

    def job(prefix: str) -> str:
        (name,) = [n for n in jobs if n.startswith(prefix)]
        return f"job:retail:{name}"

    scoring = job("retail_score_stream.streaming_query")
    assert _path_exists(
        feeds,
        f"dataset:file:{d / 'raw/pos_orders.jsonl'}",
        f"job:retail:{CONNECTOR_NAME}",
        orders,
        job("retail_stream_orders.streaming_query"),
        live,
        job("retail_live_features.adaptive_spark_plan.features_live"),
        live_features,
        scoring,
        scores,
    )
    assert _path_exists(
        feeds,
        f"dataset:file:{d / 'lake/silver/orders'}",
        job("retail_orders_producer."),
        orders,
        scoring,
    )
    model = f"dataset:file:{d / 'models/repeat_buyer'}"
    assert _path_exists(
        feeds,
        f"dataset:file:{d / 'lake/features/customer_features'}",
        job("retail_train.fit_pipeline"),
        model,
        scoring,
    )


def test_the_topics_carry_their_schemas_and_the_streams_their_runs(
    demo: DemoRuns, api: TestClient, kafka_bootstrap: str
) -> None:
    # The first run's producer write: a version with a schema (the connector's has none).
    written = _topic_versions_with_schema(api, kafka_bootstrap)[-1]
    assert _root_run(_run(api, written["createdByRun"]["id"])) == demo.first.pipelines[0].run_id
    # The producer's to_json(struct(...)): the topic's value has the struct's fields.
    value = _value_types(written)
    assert value["total"] == "double" and value["customer_id"] == "integer", value
    # Each streaming query ran once in the first run (availableNow) and completed like
    # a batch run; the drift's night streams the orders once more.
    first = demo.first.pipelines[0].run_id
    for name, runs in (("retail_stream_orders", 2), ("retail_score_stream", 1)):
        (query,) = [
            j["name"]
            for j in demo.after_first.jobs
            if j["name"].startswith(f"{name}.streaming_query")
        ]
        states = {r["id"]: r["state"] for r in _job_runs(api, query)}
        assert set(states.values()) == {"COMPLETED"} and len(states) == runs, (query, states)
        assert [r for r in _job_runs(api, query) if _root_run(r) == first], query
    # The connector's run ended when the demo removed it.
    connector = _job_runs(api, CONNECTOR_NAME)
    assert [r["state"] for r in connector] == ["COMPLETED"]


def _topic_versions_with_schema(api: TestClient, kafka_bootstrap: str) -> list[dict[str, Any]]:
    """The orders topic's versions that carry a schema, newest first."""
    namespace = quote(f"kafka://{kafka_bootstrap}", safe="")
    versions = api.get(
        f"/api/v1/namespaces/{namespace}/datasets/retail.orders/versions", params={"limit": 100}
    )
    assert versions.status_code == 200, versions.text
    return [v for v in versions.json()["versions"] if "schema" in v["facets"]]


def _value_types(version: dict[str, Any]) -> dict[str, str]:
    schema = {f["name"]: f for f in version["facets"]["schema"]["fields"]}
    return {f["name"]: f["type"] for f in schema["value"]["fields"]}


def _run(api: TestClient, run_id: str) -> dict[str, Any]:
    response = api.get(f"/api/v1/jobs/runs/{run_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_drifted_producer_is_a_topic_version_and_a_contract_drift_reaching_downstream(
    demo: DemoRuns, api: TestClient, kafka_bootstrap: str
) -> None:
    # "The producer writes string customer ids; does any consumer expect a long, and
    # what do they feed?", asked after the drift's real-time night.
    assert {s.step.script: s.status for s in demo.drift_stream.steps} == dict.fromkeys(
        DRIFT_STREAM_SCRIPTS, "ok"
    )
    drifted, *earlier = _topic_versions_with_schema(api, kafka_bootstrap)
    assert _root_run(_run(api, drifted["createdByRun"]["id"])) == demo.drift_stream.run_id
    assert _value_types(drifted)["customer_id"] == "string"
    assert earlier and _value_types(earlier[0])["customer_id"] == "integer"

    topic = f"dataset:kafka://{kafka_bootstrap}:retail.orders"
    response = api.get("/api/v2/drift", params={"dataset": topic, "impactDepth": 10})
    assert response.status_code == 200, response.text
    drifts = response.json()["drifts"]
    # The topic's own change, from one producer version to the next.
    version = next(
        d for d in drifts if d["kind"] == "version" and d["version"] == drifted["version"]
    )
    assert ("value.customer_id", "integer", "string") in {
        (c["path"], c["old"], c["new"]) for c in version["changes"]
    }
    # The stream declares customer_id a long in its from_json: a breaking contract drift
    # against what the producer writes now, named after the streaming job.
    (contract,) = [
        d
        for d in drifts
        if d["kind"] == "contract"
        and d["consumer"]["name"].startswith("retail_stream_orders.streaming_query")
    ]
    assert contract["breaking"] is True and contract["version"] == drifted["version"]
    # (Written integers read as longs are compatible changes, not breaking ones.)
    assert [(c["path"], c["old"], c["new"]) for c in contract["changes"] if c["breaking"]] == [
        ("value.customer_id", "string", "long")
    ]
    # Its impact reaches the stream's Delta table and what is computed from it.
    reached = {n["id"]: n for n in contract["impact"]["nodes"]}
    d = demo.data_dir
    live = f"dataset:file:{d / 'lake/silver/orders_live'}"
    assert (
        reached[f"datasetField:file:{d / 'lake/silver/orders_live'}:customer_id"]["impact"]
        == "direct"
    )
    assert reached[live]["depth"] == 1
    assert reached[live]["path"][1] == f"job:retail:{contract['consumer']['name']}"
    beyond = {
        f"dataset:file:{d / 'lake/gold/live_revenue'}",
        f"dataset:file:{d / 'lake/features/live_customer_features'}",
    }
    assert beyond <= reached.keys()
    assert all(reached[node]["depth"] == 2 for node in beyond)
