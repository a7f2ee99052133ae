"""A small retail lineage sample: bronze -> silver -> gold PySpark jobs over three days.

The events are what the headwater agent would emit for a nightly medallion
pipeline (one application run per night, one child run per job with the
``parent`` facet), with schemas, column lineage, data sources, SQL, output
statistics and one failed-then-retried run. Everything is deterministic (fixed
run ids and times), so loading the sample twice changes nothing: the second
load is all duplicates.

Layout (all datasets in the ``file`` namespace under ``/warehouse/retail``)::

    bronze.ingest_orders      raw/orders.csv      -> bronze/orders
    bronze.ingest_customers   raw/customers.csv   -> bronze/customers
    bronze.ingest_products    raw/products.json   -> bronze/products
    silver.clean_orders       bronze/orders       -> silver/orders
    silver.clean_customers    bronze/customers    -> silver/customers
    silver.build_order_lines  silver/orders + bronze/products -> silver/order_lines
    gold.daily_revenue        silver/order_lines  -> gold/daily_revenue
    gold.product_performance  silver/order_lines + bronze/products -> gold/product_performance
    gold.customer_lifetime_value  silver/orders + silver/customers -> gold/customer_ltv

On the third night ``silver/orders`` gains an ``is_weekend`` column (schema drift).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["JOB_NAMESPACE", "PIPELINE_JOB", "retail_events"]

JOB_NAMESPACE = "retail"
PIPELINE_JOB = "retail_nightly"
_DATASET_NAMESPACE = "file"
_ROOT = "/warehouse/retail"
_PRODUCER = "https://github.com/headwater/headwater/tree/0.1.0/samples"
_SPEC = "https://openlineage.io/spec"
_IDS = uuid.UUID("6d1f3c2e-2f7b-4d1e-9c57-1e0f3b8a9d42")  # uuid5 namespace of the sample
_FIRST_NIGHT = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)
_NIGHTS = 3

# Column lists: (name, type). Raw files are read as strings.
_RAW = {
    "raw/orders.csv": [(c, "string") for c in (
        "order_id", "customer_id", "product_id", "quantity", "unit_price", "order_ts", "status")],
    "raw/customers.csv": [(c, "string") for c in (
        "customer_id", "name", "email", "country", "signup_date")],
    "raw/products.json": [(c, "string") for c in ("product_id", "title", "category", "list_price")],
}


@dataclass(frozen=True)
class _Col:
    """An output column and the input columns it is computed from."""

    name: str
    type: str
    sources: tuple[tuple[str, str], ...]  # (dataset path, column)
    subtype: str = "IDENTITY"  # IDENTITY | TRANSFORMATION | AGGREGATION
    masking: bool = False


@dataclass(frozen=True)
class _Job:
    name: str
    inputs: tuple[str, ...]
    output: str
    columns: tuple[_Col, ...]
    sql: str | None = None
    rows: int = 0


def _c(name: str, type_: str, *sources: str, subtype: str = "IDENTITY",
       masking: bool = False) -> _Col:
    pairs = tuple((s.rsplit(".", 1)[0], s.rsplit(".", 1)[1]) for s in sources)
    return _Col(name, type_, pairs, subtype, masking)


def _cast(src: str, cols: list[tuple[str, str]]) -> tuple[_Col, ...]:
    return tuple(_c(n, t, f"{src}.{n}", subtype="TRANSFORMATION") for n, t in cols)


_JOBS: tuple[_Job, ...] = (
    _Job("bronze.ingest_orders", ("raw/orders.csv",), "bronze/orders", _cast("raw/orders.csv", [
        ("order_id", "long"), ("customer_id", "long"), ("product_id", "long"), ("quantity", "int"),
        ("unit_price", "decimal(10,2)"), ("order_ts", "timestamp"), ("status", "string")]),
        rows=48_210),
    _Job("bronze.ingest_customers", ("raw/customers.csv",), "bronze/customers",
         _cast("raw/customers.csv", [("customer_id", "long"), ("name", "string"),
                                     ("email", "string"), ("country", "string"),
                                     ("signup_date", "date")]), rows=9_874),
    _Job("bronze.ingest_products", ("raw/products.json",), "bronze/products",
         _cast("raw/products.json", [("product_id", "long"), ("title", "string"),
                                     ("category", "string"), ("list_price", "decimal(10,2)")]),
         rows=1_212),
    _Job("silver.clean_orders", ("bronze/orders",), "silver/orders", (
        _c("order_id", "long", "bronze/orders.order_id"),
        _c("customer_id", "long", "bronze/orders.customer_id"),
        _c("product_id", "long", "bronze/orders.product_id"),
        _c("quantity", "int", "bronze/orders.quantity"),
        _c("unit_price", "decimal(10,2)", "bronze/orders.unit_price"),
        _c("order_ts", "timestamp", "bronze/orders.order_ts"),
        _c("order_date", "date", "bronze/orders.order_ts", subtype="TRANSFORMATION"),
    ), sql="SELECT order_id, customer_id, product_id, quantity, unit_price, order_ts, "
           "to_date(order_ts) AS order_date FROM bronze_orders WHERE status <> 'cancelled'",
        rows=46_933),
    _Job("silver.clean_customers", ("bronze/customers",), "silver/customers", (
        _c("customer_id", "long", "bronze/customers.customer_id"),
        _c("email_hash", "string", "bronze/customers.email", subtype="TRANSFORMATION",
           masking=True),
        _c("country", "string", "bronze/customers.country"),
        _c("signup_date", "date", "bronze/customers.signup_date"),
    ), sql="SELECT customer_id, sha2(lower(email), 256) AS email_hash, country, signup_date "
           "FROM bronze_customers", rows=9_870),
    _Job("silver.build_order_lines", ("silver/orders", "bronze/products"), "silver/order_lines", (
        _c("order_id", "long", "silver/orders.order_id"),
        _c("order_date", "date", "silver/orders.order_date"),
        _c("product_id", "long", "silver/orders.product_id"),
        _c("category", "string", "bronze/products.category"),
        _c("quantity", "int", "silver/orders.quantity"),
        _c("line_total", "decimal(20,2)", "silver/orders.quantity", "silver/orders.unit_price",
           subtype="TRANSFORMATION"),
    ), sql="SELECT o.order_id, o.order_date, o.product_id, p.category, o.quantity, "
           "o.quantity * o.unit_price AS line_total FROM silver_orders o "
           "JOIN bronze_products p ON o.product_id = p.product_id", rows=46_933),
    _Job("gold.daily_revenue", ("silver/order_lines",), "gold/daily_revenue", (
        _c("order_date", "date", "silver/order_lines.order_date"),
        _c("revenue", "decimal(30,2)", "silver/order_lines.line_total", subtype="AGGREGATION"),
        _c("orders", "long", "silver/order_lines.order_id", subtype="AGGREGATION"),
    ), sql="SELECT order_date, sum(line_total) AS revenue, count(DISTINCT order_id) AS orders "
           "FROM silver_order_lines GROUP BY order_date", rows=1),
    _Job("gold.product_performance", ("silver/order_lines", "bronze/products"),
         "gold/product_performance", (
        _c("product_id", "long", "silver/order_lines.product_id"),
        _c("title", "string", "bronze/products.title"),
        _c("category", "string", "silver/order_lines.category"),
        _c("units_sold", "long", "silver/order_lines.quantity", subtype="AGGREGATION"),
        _c("revenue", "decimal(30,2)", "silver/order_lines.line_total", subtype="AGGREGATION"),
    ), sql="SELECT l.product_id, p.title, l.category, sum(l.quantity) AS units_sold, "
           "sum(l.line_total) AS revenue FROM silver_order_lines l JOIN bronze_products p "
           "USING (product_id) GROUP BY l.product_id, p.title, l.category", rows=1_105),
    _Job("gold.customer_lifetime_value", ("silver/orders", "silver/customers"),
         "gold/customer_ltv", (
        _c("customer_id", "long", "silver/orders.customer_id"),
        _c("country", "string", "silver/customers.country"),
        _c("lifetime_value", "decimal(30,2)", "silver/orders.quantity", "silver/orders.unit_price",
           subtype="AGGREGATION"),
        _c("first_order_date", "date", "silver/orders.order_date", subtype="AGGREGATION"),
        _c("order_count", "long", "silver/orders.order_id", subtype="AGGREGATION"),
    ), sql="SELECT o.customer_id, c.country, sum(o.quantity * o.unit_price) AS lifetime_value, "
           "min(o.order_date) AS first_order_date, count(*) AS order_count FROM silver_orders o "
           "JOIN silver_customers c USING (customer_id) GROUP BY o.customer_id, c.country",
        rows=9_102),
)


def retail_events() -> list[dict[str, Any]]:
    """The sample's OpenLineage 2-0-2 RunEvents, in event-time order."""
    events: list[dict[str, Any]] = []
    for night in range(_NIGHTS):
        events.extend(_night(night))
    return events


def _night(night: int) -> list[dict[str, Any]]:
    start = _FIRST_NIGHT + timedelta(days=night)
    nominal = {"nominalTime": _facet("NominalTimeRunFacet", nominalStartTime=_ts(start))}
    app_run = _run_id(PIPELINE_JOB, night)
    schemas = _schemas(night)
    events = [_event("START", start, app_run, PIPELINE_JOB, nominal, _app_job_facets())]
    clock = start + timedelta(seconds=20)
    for job in _JOBS:
        attempts = ["FAIL", "COMPLETE"] if (night == 1 and job.name.startswith("gold.customer")) \
            else ["COMPLETE"]
        for attempt, outcome in enumerate(attempts):
            run_id = _run_id(f"{job.name}#{attempt}", night)
            run_facets: dict[str, Any] = {
                **nominal,
                "parent": _facet("ParentRunFacet", run={"runId": app_run},
                                 job={"namespace": JOB_NAMESPACE, "name": PIPELINE_JOB}),
                "processing_engine": _facet("ProcessingEngineRunFacet", version="4.0.1",
                                            name="spark", openlineageAdapterVersion="0.1.0"),
            }
            inputs = [_dataset(path, schemas[path]) for path in job.inputs]
            events.append(_event("START", clock, run_id, job.name, run_facets,
                                 _job_facets(job), inputs, [_dataset(job.output,
                                                                     schemas[job.output])]))
            clock += timedelta(seconds=35 + 7 * len(job.columns))
            if outcome == "FAIL":
                failed = {**run_facets, "errorMessage": _facet(
                    "ErrorMessageRunFacet", message="Job aborted: executor lost (OOM) in stage 4",
                    programmingLanguage="python")}
                events.append(_event("FAIL", clock, run_id, job.name, failed, _job_facets(job),
                                     inputs, []))
                clock += timedelta(seconds=30)
                continue
            output = _dataset(job.output, schemas[job.output], lineage=_columns(job, night),
                              rows=job.rows + 137 * night)
            events.append(_event("COMPLETE", clock, run_id, job.name, run_facets,
                                 _job_facets(job), inputs, [output]))
            clock += timedelta(seconds=5)
    events.append(_event("COMPLETE", clock, app_run, PIPELINE_JOB, nominal, _app_job_facets()))
    return events


def _columns(job: _Job, night: int) -> tuple[_Col, ...]:
    if night >= 2 and job.output == "silver/orders":  # schema drift on the third night
        return (*job.columns, _c("is_weekend", "boolean", "bronze/orders.order_ts",
                                 subtype="TRANSFORMATION"))
    return job.columns


def _schemas(night: int) -> dict[str, list[tuple[str, str]]]:
    schemas = dict(_RAW)
    for job in _JOBS:
        schemas[job.output] = [(c.name, c.type) for c in _columns(job, night)]
    return schemas


def _event(event_type: str, when: datetime, run_id: str, job: str, run_facets: dict[str, Any],
           job_facets: dict[str, Any], inputs: list[dict[str, Any]] | None = None,
           outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": _ts(when),
        "run": {"runId": run_id, "facets": run_facets},
        "job": {"namespace": JOB_NAMESPACE, "name": job, "facets": job_facets},
        "inputs": inputs or [],
        "outputs": outputs or [],
        "producer": _PRODUCER,
        "schemaURL": f"{_SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def _dataset(path: str, columns: list[tuple[str, str]], lineage: tuple[_Col, ...] = (),
             rows: int | None = None) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "dataSource": _facet("DatasourceDatasetFacet", name=_DATASET_NAMESPACE,
                             uri=_DATASET_NAMESPACE),
        "schema": _facet("SchemaDatasetFacet", fields=[
            {"name": n, "type": t} for n, t in columns]),
    }
    if lineage:
        facets["columnLineage"] = _facet("ColumnLineageDatasetFacet", fields={
            col.name: {"inputFields": [
                {"namespace": _DATASET_NAMESPACE, "name": f"{_ROOT}/{src}", "field": field,
                 "transformations": [{"type": "DIRECT", "subtype": col.subtype,
                                      "description": "", "masking": col.masking}]}
                for src, field in col.sources]}
            for col in lineage})
    dataset: dict[str, Any] = {"namespace": _DATASET_NAMESPACE, "name": f"{_ROOT}/{path}",
                               "facets": facets}
    if rows is not None:
        dataset["outputFacets"] = {"outputStatistics": _facet(
            "OutputStatisticsOutputDatasetFacet", rowCount=rows, size=rows * 96)}
    return dataset


def _job_facets(job: _Job) -> dict[str, Any]:
    facets = {"jobType": _facet("JobTypeJobFacet", processingType="BATCH", integration="SPARK",
                                jobType="SQL_JOB")}
    if job.sql:
        facets["sql"] = _facet("SQLJobFacet", query=job.sql)
    return facets


def _app_job_facets() -> dict[str, Any]:
    return {
        "jobType": _facet("JobTypeJobFacet", processingType="BATCH", integration="SPARK",
                          jobType="APPLICATION"),
        "documentation": _facet("DocumentationJobFacet",
                                description="Nightly retail medallion pipeline."),
    }


def _facet(schema: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": _PRODUCER, "_schemaURL": f"{_SPEC}/facets/1-0-0/{schema}.json", **fields}


def _run_id(key: str, night: int) -> str:
    return str(uuid.uuid5(_IDS, f"{key}@{night}"))


def _ts(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.000Z")
