"""OpenLineage events for one connector incarnation: START, RUNNING, FAIL, COMPLETE.

The job is the connector (``namespace`` + connector name); the run is one
incarnation of it. Every event carries the run facet ``kafkaConnect`` (the
connector's class, type, state, ``paused``, tasks and its configuration with
secrets redacted), ``processing_engine`` (Connect's version) and the job facet
``jobType`` (integration ``KAFKA_CONNECT``, processing type ``STREAMING``,
job type ``SOURCE`` or ``SINK``). A FAIL carries ``errorMessage`` with the
failed task's trace, redacted.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from headwater import __version__
from headwater.connect.connectors.base import ConnectDataset, Lineage
from headwater.connect.redact import redact_config, redact_text, secret_values
from headwater.connect.rest import ConnectorSnapshot
from headwater.events import facets as F
from headwater.events.model import SCHEMA_URL

__all__ = ["CONNECT_FACET_SCHEMA", "PRODUCER", "connector_event", "run_id_for"]

PRODUCER = f"https://github.com/headwater-lineage/headwater/tree/{__version__}/connect"
#: The ``kafkaConnect`` run facet is a custom facet: declared as the spec's base RunFacet
#: (docs/connect.md describes its fields).
CONNECT_FACET_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet"
_RUN_IDS = uuid.UUID("6b1c7f2e-4d0a-5c3b-9e8f-0a1b2c3d4e5f")


def run_id_for(namespace: str, connector: str, incarnation: int) -> str:
    """The run id of a connector's ``incarnation``: the same on every watcher, every restart."""
    return str(uuid.uuid5(_RUN_IDS, f"{namespace}\n{connector}\n{incarnation}"))


def _facet(key: str, body: Mapping[str, Any]) -> dict[str, Any]:
    return {**F.facet(key, body), "_producer": PRODUCER}


def _dataset(ds: ConnectDataset, secrets: list[str]) -> dict[str, Any]:
    if secrets:
        ds = ConnectDataset(
            redact_text(ds.namespace, secrets), redact_text(ds.name, secrets), ds.kind, ds.fields
        )
    facets: dict[str, Any] = {
        "dataSource": _facet("dataSource", {"name": ds.namespace, "uri": ds.namespace}),
        "datasetType": {
            "_producer": PRODUCER,
            "_schemaURL": (
                "https://openlineage.io/spec/facets/1-0-1/DatasetTypeDatasetFacet.json"
                "#/$defs/DatasetTypeDatasetFacet"
            ),
            "datasetType": ds.kind,
        },
    }
    if ds.fields:
        facets["schema"] = {**F.schema_facet(ds.fields), "_producer": PRODUCER}
    return {"namespace": ds.namespace, "name": ds.name, "facets": facets}


def failure_trace(snapshot: ConnectorSnapshot) -> str | None:
    """The connector's trace when it failed, else the first failed task's."""
    if snapshot.state == "FAILED" and snapshot.trace:
        return snapshot.trace
    for task in snapshot.tasks:
        if task.state == "FAILED" and task.trace:
            return task.trace
    return None


def connect_facet(snapshot: ConnectorSnapshot, lineage: Lineage) -> dict[str, Any]:
    """The ``kafkaConnect`` run facet: what the REST API said, secrets redacted."""
    return {
        "_producer": PRODUCER,
        "_schemaURL": CONNECT_FACET_SCHEMA,
        "connector": snapshot.name,
        "connectorClass": snapshot.connector_class,
        "type": snapshot.type,
        "state": snapshot.state,
        "paused": snapshot.state == "PAUSED",
        "stopped": snapshot.state == "STOPPED",
        "workerId": snapshot.worker_id,
        "family": lineage.family,
        "tasks": [{"id": t.id, "state": t.state, "workerId": t.worker_id} for t in snapshot.tasks],
        "config": redact_config(snapshot.config),
    }


def connector_event(
    event_type: str,
    *,
    snapshot: ConnectorSnapshot,
    lineage: Lineage,
    namespace: str,
    run_id: str,
    event_time: str,
    connect_version: str | None,
) -> dict[str, Any]:
    """One OpenLineage RunEvent for the connector's run."""
    secrets = secret_values(snapshot.config)
    run_facets: dict[str, Any] = {
        "kafkaConnect": connect_facet(snapshot, lineage),
        "processing_engine": _facet(
            "processing_engine",
            {
                "name": "kafka-connect",
                "version": connect_version or "unknown",
                "openlineageAdapterVersion": __version__,
            },
        ),
    }
    if event_type == "FAIL":
        trace = failure_trace(snapshot) or f"connector {snapshot.name} failed"
        clean = redact_text(trace, secrets)
        run_facets["errorMessage"] = {
            **F.error_message_facet(clean.splitlines()[0] if clean.strip() else clean, clean),
            "_producer": PRODUCER,
        }
    job_type = snapshot.type.upper() if snapshot.type in ("source", "sink") else "CONNECTOR"
    return {
        "eventType": event_type,
        "eventTime": event_time,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id, "facets": run_facets},
        "job": {
            "namespace": namespace,
            "name": snapshot.name,
            "facets": {
                "jobType": {
                    **F.facet(
                        "jobType",
                        {
                            "processingType": "STREAMING",
                            "integration": "KAFKA_CONNECT",
                            "jobType": job_type,
                        },
                    ),
                    "_producer": PRODUCER,
                },
            },
        },
        "inputs": [_dataset(d, secrets) for d in lineage.inputs],
        "outputs": [_dataset(d, secrets) for d in lineage.outputs],
    }
