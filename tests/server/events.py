"""Small, realistic OpenLineage events for server tests (built fresh per call)."""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["dataset_event", "job_event", "run_event"]

PRODUCER = "https://github.com/headwater/headwater/tests"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def run_event(
    *,
    run_id: str | None = None,
    event_type: str = "COMPLETE",
    job: str = "orders_daily",
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    event_time: str = "2026-11-01T10:00:00.000Z",
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": event_time,
        "run": {"runId": run_id or str(uuid.uuid4()), "facets": {}},
        "job": {"namespace": "retail", "name": job, "facets": {}},
        "inputs": inputs
        if inputs is not None
        else [{"namespace": "file", "name": "/data/bronze/orders", "facets": {}}],
        "outputs": outputs
        if outputs is not None
        else [
            {
                "namespace": "file",
                "name": "/data/silver/orders",
                "facets": {
                    "schema": {
                        "_producer": PRODUCER,
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/"
                        "SchemaDatasetFacet.json",
                        "fields": [{"name": "order_id", "type": "long"}],
                    }
                },
            }
        ],
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }


def dataset_event(name: str = "/data/bronze/customers") -> dict[str, Any]:
    return {
        "eventTime": "2026-11-01T10:00:00Z",
        "dataset": {"namespace": "file", "name": name, "facets": {}},
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
    }


def job_event(name: str = "orders_daily") -> dict[str, Any]:
    return {
        "eventTime": "2026-11-01T10:00:00Z",
        "job": {"namespace": "retail", "name": name},
        "inputs": [{"namespace": "file", "name": "/data/bronze/orders"}],
        "outputs": [],
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
    }
