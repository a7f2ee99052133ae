"""RunEvent <-> JSON-ready dict: the one place that knows the wire shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headwater.errors import EventError
from headwater.events.model import (
    PRODUCER,
    SCHEMA_URL,
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
)

__all__ = ["event_from_dict", "event_to_dict"]

_EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})


def event_to_dict(event: RunEvent) -> dict[str, Any]:
    """The JSON object for ``event``; empty facet maps are kept (the spec allows them)."""

    def dataset(ds: InputDataset | OutputDataset) -> dict[str, Any]:
        out: dict[str, Any] = {
            "namespace": ds.namespace,
            "name": ds.name,
            "facets": _plain(ds.facets),
        }
        if isinstance(ds, InputDataset):
            out["inputFacets"] = _plain(ds.inputFacets)
        if isinstance(ds, OutputDataset):
            out["outputFacets"] = _plain(ds.outputFacets)
        return out

    return {
        "eventType": event.eventType,
        "eventTime": event.eventTime,
        "producer": event.producer,
        "schemaURL": event.schemaURL,
        "run": {"runId": event.run.runId, "facets": _plain(event.run.facets)},
        "job": {
            "namespace": event.job.namespace,
            "name": event.job.name,
            "facets": _plain(event.job.facets),
        },
        "inputs": [dataset(d) for d in event.inputs],
        "outputs": [dataset(d) for d in event.outputs],
    }


def event_from_dict(data: Mapping[str, Any]) -> RunEvent:
    """Parse a RunEvent dict; raises :class:`EventError` naming the bad field."""
    if not isinstance(data, Mapping):
        raise EventError("event must be a JSON object", field="$")
    event_type = data.get("eventType", "OTHER")
    if event_type not in _EVENT_TYPES:
        raise EventError(f"unknown eventType {event_type!r}", field="eventType")
    event_time = _required_str(data, "eventTime", "eventTime")
    run = _mapping(data, "run", "run")
    job = _mapping(data, "job", "job")

    def datasets(key: str) -> list[Mapping[str, Any]]:
        raw = data.get(key) or []
        if not isinstance(raw, list):
            raise EventError(f"{key} must be an array", field=key)
        for i, item in enumerate(raw):
            if not isinstance(item, Mapping):
                raise EventError("dataset must be an object", field=f"{key}[{i}]")
            _required_str(item, "namespace", f"{key}[{i}].namespace")
            _required_str(item, "name", f"{key}[{i}].name")
        return raw

    return RunEvent(
        eventType=event_type,
        eventTime=event_time,
        run=Run(
            runId=_required_str(run, "runId", "run.runId"),
            facets=dict(run.get("facets") or {}),
        ),
        job=Job(
            namespace=_required_str(job, "namespace", "job.namespace"),
            name=_required_str(job, "name", "job.name"),
            facets=dict(job.get("facets") or {}),
        ),
        inputs=tuple(
            InputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets=dict(d.get("facets") or {}),
                inputFacets=dict(d.get("inputFacets") or {}),
            )
            for d in datasets("inputs")
        ),
        outputs=tuple(
            OutputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets=dict(d.get("facets") or {}),
                outputFacets=dict(d.get("outputFacets") or {}),
            )
            for d in datasets("outputs")
        ),
        producer=str(data.get("producer") or PRODUCER),
        schemaURL=str(data.get("schemaURL") or SCHEMA_URL),
    )


def _plain(facets: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in facets.items()}


def _mapping(data: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = data.get(key)
    if not isinstance(value, Mapping):
        raise EventError(f"{path} must be an object", field=path)
    return value


def _required_str(data: Mapping[str, Any], key: str, path: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise EventError(f"{path} must be a non-empty string", field=path)
    return value
