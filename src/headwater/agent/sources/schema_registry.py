"""A topic's value schema from a schema registry's Confluent-compatible REST API.

A Kafka ``value`` is bytes to Spark; where the plan shows no serialised struct,
the registry the producers register with is the contract that names the fields.
The subject is the topic's under the default naming strategy
(``<topic>-value``), its latest version is asked for with
``GET <url>/subjects/<subject>/versions/latest``, and an Avro record or a JSON
Schema object becomes the ``value`` column's nested fields. Protobuf schemas
name no fields here.

The look-up is made where a plan's datasets become events: on the agent's
capture worker, never on Spark's listener thread, whose callback only hands the
action over (:mod:`headwater.agent.listener`). A slow or absent registry holds
up that worker alone, for the timeout at most and once per topic: the answer (a
miss or a failure too) is kept per topic for the application's life, and
nothing the look-up meets leaves it as an exception.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from headwater.events.facets import SchemaField

__all__ = ["SchemaRegistry", "avro_fields", "json_schema_fields", "registry_for"]

logger = logging.getLogger(__name__)

#: Nesting deeper than this is cut: a recursive schema must not recurse forever.
_MAX_DEPTH = 16

_AVRO_PRIMITIVES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)


def _avro_type(schema: Any, depth: int) -> tuple[str, list[SchemaField]]:
    if isinstance(schema, str):
        return (schema if schema in _AVRO_PRIMITIVES else schema.rsplit(".", 1)[-1]), []
    if isinstance(schema, list):
        # A union with null is the optional form of its other branch.
        branches = [b for b in schema if b != "null"]
        if len(branches) == 1:
            return _avro_type(branches[0], depth)
        return "union", []
    if not isinstance(schema, Mapping):
        return "unknown", []
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if isinstance(logical, str):
        return logical, []
    if kind == "record":
        return "struct", avro_fields(schema, depth + 1)
    if kind == "array":
        inner, children = _avro_type(schema.get("items"), depth)
        return f"array<{inner}>", children
    if kind == "map":
        inner, children = _avro_type(schema.get("values"), depth)
        return f"map<string,{inner}>", children
    if kind in ("enum", "fixed"):
        return str(kind), []
    return _avro_type(kind, depth)


def avro_fields(schema: Any, depth: int = 0) -> list[SchemaField]:
    """The fields of an Avro record schema (parsed JSON), nested records as structs."""
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping) or schema.get("type") != "record":
        return []
    fields: list[SchemaField] = []
    for field in schema.get("fields") or []:
        if isinstance(field, Mapping) and isinstance(field.get("name"), str):
            fields.append((field["name"], *_avro_type(field.get("type"), depth)))
    return fields


def _json_type(schema: Any, depth: int) -> tuple[str, list[SchemaField]]:
    if not isinstance(schema, Mapping):
        return "unknown", []
    kind = schema.get("type")
    if isinstance(kind, list):
        # ["string", "null"] is an optional string.
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind == "object" or (kind is None and "properties" in schema):
        return "struct", json_schema_fields(schema, depth + 1)
    if kind == "array":
        inner, children = _json_type(schema.get("items"), depth)
        return f"array<{inner}>", children
    return (kind if isinstance(kind, str) else "unknown"), []


def json_schema_fields(schema: Any, depth: int = 0) -> list[SchemaField]:
    """The properties of a JSON Schema object, nested objects as structs."""
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return [(str(name), *_json_type(sub, depth)) for name, sub in properties.items()]


def _fields(answer: Mapping[str, Any]) -> list[SchemaField] | None:
    kind = str(answer.get("schemaType") or "AVRO").upper()
    text = answer.get("schema")
    if not isinstance(text, str) or kind not in ("AVRO", "JSON"):
        return None
    parsed = json.loads(text)
    fields = avro_fields(parsed) if kind == "AVRO" else json_schema_fields(parsed)
    return fields or None


class SchemaRegistry:
    """One registry's value schemas, asked for once per topic."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._known: dict[str, list[SchemaField] | None] = {}
        self._lock = threading.Lock()

    def value_fields(self, topic: str) -> list[SchemaField] | None:
        """The fields of ``topic``'s latest registered value schema; ``None`` when the
        registry has none, names no fields, or cannot be asked."""
        with self._lock:
            if topic in self._known:
                return self._known[topic]
        fields = self._ask(topic)
        with self._lock:
            self._known[topic] = fields
        return fields

    def _ask(self, topic: str) -> list[SchemaField] | None:
        subject = quote(f"{topic}-value", safe="")
        address = f"{self.url}/subjects/{subject}/versions/latest"
        try:
            response = httpx.get(address, timeout=self.timeout)
            if response.status_code == 404:
                return None
            response.raise_for_status()
            answer = response.json()
            return _fields(answer) if isinstance(answer, Mapping) else None
        except Exception as exc:
            logger.warning(
                "schema registry %s: no value schema for topic %r (%s)", self.url, topic, exc
            )
            return None


_registries: dict[tuple[str, float], SchemaRegistry] = {}
_registries_lock = threading.Lock()


def registry_for(url: str | None, timeout: float) -> SchemaRegistry | None:
    """The application's registry client for ``url`` (one per url, so its answers are
    kept across actions), or ``None`` when no registry is configured."""
    if not url:
        return None
    with _registries_lock:
        return _registries.setdefault((url, timeout), SchemaRegistry(url, timeout))
