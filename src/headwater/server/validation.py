"""Check that a decoded JSON value is an OpenLineage 2-0-2 event, naming the bad field.

This is a hand-written check of the fields the store relies on, not a full
JSON-schema validation: facets are free-form (any keys kept verbatim) and the
checks touch only a handful of keys per event, so a 500-event batch validates
in about a millisecond. What is checked, per the spec's ``OpenLineage.json``:

- every event: ``eventTime`` (ISO 8601 date-time; no timezone means UTC, extra
  fractional digits allowed, as Marquez accepts), ``producer`` (string);
  ``schemaURL`` and ``eventType`` are optional (Marquez accepts events without
  them) but must be a string / one of the spec's event types when present;
- RunEvent (has ``run``): ``run.runId`` a UUID, ``job.namespace`` and
  ``job.name`` non-empty strings, ``inputs``/``outputs`` arrays of datasets;
- DatasetEvent (``dataset``, no ``run``/``job``): ``dataset.namespace``/``name``;
- JobEvent (``job``, no ``run``): ``job`` plus optional ``inputs``/``outputs``;
- every dataset: ``namespace`` and ``name`` non-empty strings;
- every ``facets`` / ``inputFacets`` / ``outputFacets``: a JSON object.

Errors are :class:`headwater.errors.EventError` whose ``field`` is the JSON
path, e.g. ``run.runId`` or ``inputs[2].namespace``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from headwater.errors import EventError

__all__ = ["EVENT_TYPES", "EventKind", "validate_event"]

EventKind = Literal["RunEvent", "DatasetEvent", "JobEvent"]

EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A date and a time of day; fromisoformat accepts bare dates, the spec does not.
_DATE_TIME_SHAPE = re.compile(r"\d{4}-?\d{2}-?\d{2}[T ]\d{2}")


def validate_event(event: Any) -> EventKind:
    """Raise :class:`EventError` unless ``event`` is a usable OpenLineage event.

    Returns which of the three event kinds it is. ``event`` is not modified.
    """
    if not isinstance(event, dict):
        raise EventError(f"an event must be a JSON object, got {_json_type(event)}", "")
    _check_time(event)
    _check_string(event, "producer", "producer")
    if event.get("schemaURL") is not None:
        _check_string(event, "schemaURL", "schemaURL")
    event_type = event.get("eventType")
    if event_type is not None and event_type not in EVENT_TYPES:
        raise EventError(
            f"eventType must be one of {', '.join(sorted(EVENT_TYPES))}, got {event_type!r}",
            "eventType",
        )

    if "run" in event:
        run = _check_object(event, "run", "run")
        run_id = run.get("runId")
        if not isinstance(run_id, str) or _UUID.fullmatch(run_id) is None:
            got = "missing" if run_id is None else repr(run_id)
            raise EventError(f"run.runId must be a UUID string, got {got}", "run.runId")
        _check_facets(run, "facets", "run.facets")
        _check_job(event)
        _check_datasets(event)
        return "RunEvent"
    if "dataset" in event and "job" not in event:
        dataset = _check_object(event, "dataset", "dataset")
        _check_dataset(dataset, "dataset")
        return "DatasetEvent"
    if "job" in event:
        _check_job(event)
        _check_datasets(event)
        return "JobEvent"
    raise EventError(
        "an event needs run and job (RunEvent), dataset (DatasetEvent) or job (JobEvent)",
        "run",
    )


def _check_time(event: dict[str, Any]) -> None:
    value = _check_string(event, "eventTime", "eventTime")
    if _DATE_TIME_SHAPE.match(value):
        try:
            datetime.fromisoformat(value)
            return
        except ValueError:
            pass
    raise EventError(f"eventTime must be an ISO 8601 date-time, got {value!r}", "eventTime")


def _check_job(event: dict[str, Any]) -> None:
    job = _check_object(event, "job", "job")
    _check_name(job, "namespace", "job.namespace")
    _check_name(job, "name", "job.name")
    _check_facets(job, "facets", "job.facets")


def _check_datasets(event: dict[str, Any]) -> None:
    for key, facets_key in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        items = event.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise EventError(f"{key} must be an array, got {_json_type(items)}", key)
        for i, item in enumerate(items):
            path = f"{key}[{i}]"
            if not isinstance(item, dict):
                raise EventError(f"{path} must be an object, got {_json_type(item)}", path)
            _check_dataset(item, path)
            _check_facets(item, facets_key, f"{path}.{facets_key}")


def _check_dataset(dataset: dict[str, Any], path: str) -> None:
    _check_name(dataset, "namespace", f"{path}.namespace")
    _check_name(dataset, "name", f"{path}.name")
    _check_facets(dataset, "facets", f"{path}.facets")


def _check_object(parent: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        got = "missing" if value is None else _json_type(value)
        raise EventError(f"{path} must be an object, got {got}", path)
    return value


def _check_string(parent: dict[str, Any], key: str, path: str) -> str:
    value = parent.get(key)
    if not isinstance(value, str):
        got = "missing" if value is None else _json_type(value)
        raise EventError(f"{path} is required and must be a string, got {got}", path)
    return value


def _check_name(parent: dict[str, Any], key: str, path: str) -> None:
    if not _check_string(parent, key, path).strip():
        raise EventError(f"{path} must not be empty", path)


def _check_facets(parent: dict[str, Any], key: str, path: str) -> None:
    value = parent.get(key)
    if value is not None and not isinstance(value, dict):
        raise EventError(f"{path} must be an object, got {_json_type(value)}", path)


def _json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
