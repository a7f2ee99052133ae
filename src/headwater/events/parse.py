"""The one check of an incoming event: a decoded JSON value -> :class:`ParsedEvent`.

Every way an event enters headwater (``POST /api/v1/lineage[/batch]``,
``headwater ingest``, the demo, the Marquez-era PUTs) calls
:func:`parse_event` once; the store trusts what it returns and checks nothing
again. A refusal is an :class:`~headwater.errors.EventError` whose ``field``
is the JSON path of the offending value (``inputs[2].namespace``).

What the spec's ``OpenLineage.json`` asks, for the fields headwater relies on
(facets stay free-form: unknown keys and facets are kept verbatim):

- every event: ``eventTime`` an ISO 8601 date-time (no zone means UTC; extra
  fractional digits allowed, as Marquez accepts), ``producer`` a string;
  ``schemaURL`` and ``eventType`` optional (Marquez accepts events without
  them) but a string / one of the spec's event types when present;
- RunEvent (has ``run``): ``run.runId`` a UUID, ``job.namespace`` and
  ``job.name`` non-empty strings, ``inputs``/``outputs`` arrays of datasets;
- DatasetEvent (``dataset``, no ``run``/``job``): a named ``dataset``;
- JobEvent (``job``, no ``run``): ``job`` plus optional ``inputs``/``outputs``;
- every dataset: ``namespace`` and ``name`` non-empty strings;
- every ``facets`` / ``inputFacets`` / ``outputFacets``: a JSON object.

What both stores (SQLite and PostgreSQL) must be able to hold:

- no NUL character (U+0000) in any string or key: PostgreSQL text cannot;
- the strings the store indexes, in UTF-8 bytes: namespaces at most
  :data:`MAX_NAMESPACE_BYTES`, job and dataset names (also symlink
  identifiers and column-lineage input datasets) :data:`MAX_NAME_BYTES`, and
  facet names, schema field names, column-lineage field names and
  transformation types, tag keys and data source names :data:`MAX_KEY_BYTES`,
  so the widest index row stays well under PostgreSQL's btree limit (2,704
  bytes);
- ``eventTime`` still within years 1-9999 once converted to UTC;
- numbers: integers within signed 64 bits (-2^63 .. 2^63-1, what Java
  producers and readers hold), floats finite.

The event comes back normalised as the OpenLineage naming spec asks:
``s3a://`` and ``s3n://`` dataset namespaces become ``s3://`` (in
``inputs``, ``outputs``, a DatasetEvent's ``dataset``, and the
``columnLineage`` facet's input fields, so column edges join their datasets).
Its content hash is taken of the normalised event's canonical JSON
(:mod:`headwater.events.canonical`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from headwater.errors import EventError
from headwater.events.canonical import canonical_bytes, content_hash

__all__ = [
    "EVENT_TYPES",
    "MAX_KEY_BYTES",
    "MAX_NAMESPACE_BYTES",
    "MAX_NAME_BYTES",
    "EventKind",
    "ParsedEvent",
    "normalise_namespace",
    "parse_event",
    "parse_time",
]

EventKind = Literal["run", "job", "dataset"]

EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})

MAX_NAMESPACE_BYTES = 512
MAX_NAME_BYTES = 1024
MAX_KEY_BYTES = 256

_INT_MIN = -(2**63)
_INT_MAX = 2**63 - 1

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A date and a time of day; fromisoformat accepts bare dates, the spec does not.
_DATE_TIME_SHAPE = re.compile(r"\d{4}-?\d{2}-?\d{2}[T ]\d{2}")
# Canonical JSON that may hold a value the stores cannot: a NUL escape, a
# non-finite float (the standard library writes NaN/Infinity), or an integer of
# 19 digits or more. Text inside strings can match too; then the walk decides.
_SUSPECT = re.compile(rb"\\u0000|NaN|Infinity|\d{19}")
# OpenLineage naming: Hadoop's s3a/s3n connectors address the same objects as s3.
_S3_ALIASES = ("s3a://", "s3n://")


@dataclass(frozen=True, slots=True)
class ParsedEvent:
    """One checked, normalised event with the parts the store indexes."""

    event_hash: str  # sha256 of ``payload``
    payload: str  # canonical JSON of ``event``
    event: dict[str, Any]  # the normalised event, every key the producer sent
    time: datetime  # eventTime as naive UTC (nanoseconds truncated to microseconds)
    event_type: str | None
    kind: EventKind
    run_uuid: str | None
    job: tuple[str, str] | None  # (namespace, name)


def parse_event(raw: Any) -> ParsedEvent:
    """Check and normalise one decoded event; raise :class:`EventError` naming the field.

    ``raw`` is normalised in place (it is the caller's freshly decoded value).
    """
    if not isinstance(raw, dict):
        raise EventError(f"an event must be a JSON object, got {json_type(raw)}", "")
    time = parse_time(raw.get("eventTime"), "eventTime")
    _string(raw, "producer", "producer")
    if raw.get("schemaURL") is not None:
        _string(raw, "schemaURL", "schemaURL")
    event_type = raw.get("eventType")
    if event_type is not None and event_type not in EVENT_TYPES:
        raise EventError(
            f"eventType must be one of {', '.join(sorted(EVENT_TYPES))}, got {event_type!r}",
            "eventType",
        )
    kind: EventKind
    run_uuid = None
    job = None
    if "run" in raw:
        kind = "run"
        run = _object(raw, "run", "run")
        run_id = run.get("runId")
        if not isinstance(run_id, str) or _UUID.fullmatch(run_id) is None:
            got = "missing" if run_id is None else repr(run_id)
            raise EventError(f"run.runId must be a UUID string, got {got}", "run.runId")
        run_uuid = run_id
        _facets(run, "facets", "run.facets")
        job = _job(raw)
        _datasets(raw)
    elif "dataset" in raw and "job" not in raw:
        kind = "dataset"
        _dataset(_object(raw, "dataset", "dataset"), "dataset", None)
    elif "job" in raw:
        kind = "job"
        job = _job(raw)
        _datasets(raw)
    else:
        raise EventError(
            "an event needs run and job (RunEvent), dataset (DatasetEvent) or job (JobEvent)",
            "run",
        )
    canonical = _canonical(raw)
    return ParsedEvent(content_hash(canonical), canonical.decode(), raw, time, event_type,
                       kind, run_uuid, job)


def parse_time(value: Any, where: str) -> datetime:
    """An OpenLineage time -> naive UTC datetime; raise :class:`EventError` naming ``where``."""
    if not isinstance(value, str):
        got = "missing" if value is None else json_type(value)
        raise EventError(f"{where} is required and must be a string, got {got}", where)
    if _DATE_TIME_SHAPE.match(value):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is None:
                return parsed
            try:
                return parsed.astimezone(UTC).replace(tzinfo=None)
            except OverflowError:
                raise EventError(f"{where} {value!r} falls outside years 1-9999 in UTC",
                                 where) from None
    raise EventError(f"{where} must be an ISO 8601 date-time, got {value!r}", where)


def normalise_namespace(namespace: str) -> str:
    """``s3a://bucket`` and ``s3n://bucket`` -> ``s3://bucket``; others unchanged."""
    if namespace.startswith(_S3_ALIASES):
        return "s3://" + namespace[len("s3a://"):]
    return namespace


def json_type(value: Any) -> str:
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


# -- the event's parts -------------------------------------------------------------


def _job(event: dict[str, Any]) -> tuple[str, str]:
    job = _object(event, "job", "job")
    namespace = _name(job, "namespace", "job.namespace", MAX_NAMESPACE_BYTES)
    name = _name(job, "name", "job.name", MAX_NAME_BYTES)
    _facets(job, "facets", "job.facets")
    return (namespace, name)


def _datasets(event: dict[str, Any]) -> None:
    for key, facets_key in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        items = event.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise EventError(f"{key} must be an array, got {json_type(items)}", key)
        for i, item in enumerate(items):
            path = f"{key}[{i}]"
            if not isinstance(item, dict):
                raise EventError(f"{path} must be an object, got {json_type(item)}", path)
            _dataset(item, path, facets_key)


def _dataset(dataset: dict[str, Any], path: str, io_facets: str | None) -> None:
    namespace = _name(dataset, "namespace", f"{path}.namespace", MAX_NAMESPACE_BYTES)
    _name(dataset, "name", f"{path}.name", MAX_NAME_BYTES)
    if namespace.startswith(_S3_ALIASES):
        dataset["namespace"] = normalise_namespace(namespace)
    if io_facets is not None:
        _facets(dataset, io_facets, f"{path}.{io_facets}")
    facets = _facets(dataset, "facets", f"{path}.facets")
    if not facets:
        return
    where = f"{path}.facets"
    schema = facets.get("schema")
    if isinstance(schema, dict):
        fields = schema.get("fields")
        if isinstance(fields, list):
            for i, item in enumerate(fields):
                if isinstance(item, dict):
                    _key(item.get("name"), f"{where}.schema.fields[{i}].name")
                    _tag_keys(item.get("tags"), f"{where}.schema.fields[{i}].tags")
    lineage = facets.get("columnLineage")
    if isinstance(lineage, dict):
        _column_lineage(lineage, f"{where}.columnLineage")
    symlinks = facets.get("symlinks")
    if isinstance(symlinks, dict):
        _references(symlinks.get("identifiers"), f"{where}.symlinks.identifiers", "type")
    source = facets.get("dataSource")
    if isinstance(source, dict):
        _key(source.get("name"), f"{where}.dataSource.name")
    tags = facets.get("tags")
    if isinstance(tags, dict):
        _tag_keys(tags.get("tags"), f"{where}.tags.tags")


def _column_lineage(lineage: dict[str, Any], where: str) -> None:
    fields = lineage.get("fields")
    if isinstance(fields, dict):
        for field_name, spec in fields.items():
            _key(field_name, f"{where}.fields.{field_name[:40]}")
            if isinstance(spec, dict):
                _references(spec.get("inputFields"), f"{where}.fields.{field_name[:40]}"
                            ".inputFields", "field", normalise=True)
    _references(lineage.get("dataset"), f"{where}.dataset", "field", normalise=True)


def _references(refs: Any, where: str, key: str, normalise: bool = False) -> None:
    """Check a list of ``{namespace, name, <key>}`` references (column lineage, symlinks)."""
    if not isinstance(refs, list):
        return
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            continue
        namespace = ref.get("namespace")
        if isinstance(namespace, str):
            _limit(namespace, f"{where}[{i}].namespace", MAX_NAMESPACE_BYTES)
            if normalise and namespace.startswith(_S3_ALIASES):
                ref["namespace"] = normalise_namespace(namespace)
        if isinstance(ref.get("name"), str):
            _limit(ref["name"], f"{where}[{i}].name", MAX_NAME_BYTES)
        _key(ref.get(key), f"{where}[{i}].{key}")
        transformations = ref.get("transformations")
        if isinstance(transformations, list):
            for j, transformation in enumerate(transformations):
                if isinstance(transformation, dict):
                    for part in ("type", "subtype"):
                        _key(transformation.get(part), f"{where}[{i}].transformations[{j}].{part}")


def _tag_keys(tags: Any, where: str) -> None:
    if not isinstance(tags, list):
        return
    for i, tag in enumerate(tags):
        if isinstance(tag, str):
            _key(tag, f"{where}[{i}]")
        elif isinstance(tag, dict):
            _key(tag.get("key"), f"{where}[{i}].key")
            _key(tag.get("field"), f"{where}[{i}].field")


# -- single values -----------------------------------------------------------------


def _object(parent: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        got = "missing" if value is None else json_type(value)
        raise EventError(f"{path} must be an object, got {got}", path)
    return value


def _string(parent: dict[str, Any], key: str, path: str) -> str:
    value = parent.get(key)
    if not isinstance(value, str):
        got = "missing" if value is None else json_type(value)
        raise EventError(f"{path} is required and must be a string, got {got}", path)
    return value


def _name(parent: dict[str, Any], key: str, path: str, limit: int) -> str:
    value = _string(parent, key, path)
    if not value.strip():
        raise EventError(f"{path} must not be empty", path)
    _limit(value, path, limit)
    return value


def _facets(parent: dict[str, Any], key: str, path: str) -> dict[str, Any] | None:
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise EventError(f"{path} must be an object, got {json_type(value)}", path)
    for name in value:
        if len(name) > MAX_KEY_BYTES // 4:
            _limit(name, f"{path}.{name[:40]}", MAX_KEY_BYTES)
    return value


def _key(value: Any, path: str) -> None:
    if isinstance(value, str) and len(value) > MAX_KEY_BYTES // 4:
        _limit(value, path, MAX_KEY_BYTES)


def _limit(value: str, path: str, limit: int) -> None:
    # A character is at most 4 UTF-8 bytes: shorter strings need no encoding.
    if len(value) > limit // 4:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise EventError(f"{path} is {size} bytes long; at most {limit} (UTF-8) are stored",
                             path)


# -- the whole value ---------------------------------------------------------------


def _canonical(event: dict[str, Any]) -> bytes:
    """The canonical JSON of ``event``, refusing what either store cannot hold."""
    try:
        out = canonical_bytes(event)
    except (TypeError, ValueError, UnicodeEncodeError):
        _find_unstorable(event, "")
        raise EventError("the event holds a value JSON cannot represent", "") from None
    if _SUSPECT.search(out):
        _find_unstorable(event, "")
    return out


def _find_unstorable(value: Any, path: str) -> None:
    """Raise :class:`EventError` at the first value neither store can hold, if any."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            _storable_text(item, where)
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{where}.{key[:40]}" if where else str(key)[:40]
                if not isinstance(key, str):
                    raise EventError("object keys must be strings", child_path)
                _storable_text(key, child_path)
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not _INT_MIN <= item <= _INT_MAX:
                raise EventError(f"{where} is an integer beyond 64 bits", where)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise EventError(f"{where} is not a finite number", where)
        else:
            raise EventError(f"{where} is not a JSON value ({type(item).__name__})", where)


def _storable_text(text: str, where: str) -> None:
    if "\x00" in text:
        raise EventError(f"{where or 'a key'} holds a NUL character (U+0000), "
                         "which PostgreSQL cannot store", where)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise EventError(f"{where} is not valid Unicode (a lone surrogate)", where) from None
