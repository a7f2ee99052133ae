"""Small OpenLineage events for the lineage model's tests, built the way the agent shapes them."""

from __future__ import annotations

from typing import Any

APP_RUN = "01900000-0000-7000-8000-000000000001"


def dataset(
    name: str,
    fields: dict[str, str],
    *,
    lineage: dict[str, Any] | None = None,
    tables: tuple[str, ...] = (),
) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "schema": {"fields": [{"name": n, "type": t} for n, t in fields.items()]},
        "dataSource": {"name": "file", "uri": "file"},
    }
    if lineage is not None:
        facets["columnLineage"] = lineage
    if tables:
        facets["symlinks"] = {
            "identifiers": [{"namespace": "file:/wh", "name": t, "type": "TABLE"} for t in tables]
        }
    return {"namespace": "file", "name": name, "facets": facets}


def edge(
    name: str, field: str, kind: str = "DIRECT", subtype: str = "IDENTITY", masking: bool = False
) -> dict[str, Any]:
    return {
        "namespace": "file",
        "name": name,
        "field": field,
        "transformations": [
            {
                "type": kind,
                "subtype": subtype,
                "masking": masking,
                "description": f"{subtype} of {field} (volatile text)",
            }
        ],
    }


def event(
    kind: str,
    run_id: str,
    job: str,
    time: str,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    parent: bool = True,
    app_run: str = APP_RUN,
) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "processing_engine": {"name": "spark", "version": "4.1.1"},
    }
    if parent:
        facets["parent"] = {
            "job": {"namespace": "default", "name": "app"},
            "run": {"runId": app_run},
        }
    return {
        "eventType": kind,
        "eventTime": time,
        "run": {"runId": run_id, "facets": facets},
        "job": {"namespace": "default", "name": job},
        "inputs": inputs,
        "outputs": outputs,
        "producer": "https://example.com/headwater-tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def revenue_job(
    root: str,
    *,
    drop_customers: bool = False,
    total_type: str = "decimal(22,2)",
    run_id: str = "01900000-0000-7000-8000-000000000002",
    app_run: str = APP_RUN,
    day: str = "2026-01-01",
) -> list[dict[str, Any]]:
    """An application that joins orders with customers into gold/revenue (one action)."""
    orders = f"{root}/silver/orders"
    customers = f"{root}/silver/customers"
    inputs = [dataset(orders, {"order_id": "int", "amount": "decimal(12,2)", "cid": "int"})]
    if not drop_customers:
        inputs.append(dataset(customers, {"cid": "int", "country": "string"}))
    columns: dict[str, Any] = {
        "total": {"inputFields": [edge(orders, "amount", subtype="AGGREGATION")]},
        "orders": {"inputFields": [edge(orders, "order_id", subtype="AGGREGATION", masking=True)]},
    }
    fields = {"total": total_type, "orders": "long"}
    if not drop_customers:
        columns["country"] = {"inputFields": [edge(customers, "country")]}
        fields = {"country": "string", **fields}
    lineage = {
        "fields": columns,
        "dataset": [edge(orders, "cid", "INDIRECT", "JOIN")] if not drop_customers else [],
    }
    output = dataset(f"{root}/gold/revenue", fields, lineage=lineage)
    job = "app.adaptive_spark_plan.gold_revenue"

    def at(second: int) -> str:
        return f"{day}T00:00:0{second}Z"

    return [
        event("START", app_run, "app", at(0), [], [], parent=False),
        event("START", run_id, job, at(1), inputs, [dict(output, facets={})], app_run=app_run),
        event("COMPLETE", run_id, job, at(2), inputs, [output], app_run=app_run),
        event("COMPLETE", app_run, "app", at(3), [], [], parent=False),
    ]
