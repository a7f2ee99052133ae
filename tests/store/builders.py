"""Small builders of OpenLineage 2-0-2 events for store tests."""

from __future__ import annotations

from typing import Any

PRODUCER = "https://example.com/headwater-tests"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
FACET_SCHEMA_URL = "https://openlineage.io/spec/facets/x.json"


def facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": FACET_SCHEMA_URL, **fields}


def dataset(namespace: str, name: str, fields: list[tuple[str, str]] | None = None,
            **facets: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": namespace, "name": name, "facets": dict(facets)}
    if fields is not None:
        out["facets"]["schema"] = facet(fields=[{"name": n, "type": t} for n, t in fields])
    return out


def column_lineage(mapping: dict[str, list[tuple[str, str, str]]],
                   kind: str = "DIRECT", subtype: str = "IDENTITY") -> dict[str, Any]:
    """target field -> [(namespace, name, field)] as a columnLineage facet."""
    return facet(fields={
        target: {"inputFields": [
            {"namespace": ns, "name": n, "field": f,
             "transformations": [{"type": kind, "subtype": subtype}]}
            for ns, n, f in sources]}
        for target, sources in mapping.items()})


def run_event(event_type: str | None, time: str, run_id: str, job: str = "job",
              namespace: str = "ns", inputs: list[dict[str, Any]] | None = None,
              outputs: list[dict[str, Any]] | None = None,
              run_facets: dict[str, Any] | None = None,
              job_facets: dict[str, Any] | None = None,
              producer: str = PRODUCER) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventTime": time,
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": namespace, "name": job, "facets": job_facets or {}},
        "inputs": inputs or [],
        "outputs": outputs or [],
        "producer": producer,
        "schemaURL": SCHEMA_URL,
    }
    if event_type is not None:
        event["eventType"] = event_type
    return event


def record(store: Any, events: list[dict[str, Any]]) -> list[Any]:
    """Parse ``events`` as the server's edge does and record them: the store's results."""
    from headwater.events import parse_event

    return store.record([parse_event(event) for event in events])
