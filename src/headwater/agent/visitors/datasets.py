"""What every visitor shares: the captured dataset, the context, schemas from Spark types.

One floor below the visitors and the visit loop (:mod:`.base`), which import it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from headwater import naming
from headwater.agent.capture import PlanCapture
from headwater.agent.plan import Expr, PlanNode
from headwater.events.facets import SchemaField

__all__ = [
    "CapturedDataset",
    "VisitContext",
    "Visited",
    "dataset_at",
    "schema_from_attributes",
    "schema_from_struct",
]


@dataclass
class CapturedDataset:
    """A dataset found in a plan, before it becomes an OpenLineage dataset."""

    namespace: str
    name: str
    fields: list[SchemaField] = field(default_factory=list)
    symlinks: list[tuple[str, str, str]] = field(default_factory=list)
    lifecycle: str | None = None
    previous: tuple[str, str] | None = None
    is_table: bool = False
    #: Stored under the session's warehouse directory (gets the ``catalog`` facet).
    in_warehouse: bool = False
    #: For inputs: exprId -> column name of the relation's output attributes.
    attributes: dict[int, str] = field(default_factory=dict)
    #: For outputs: the plan whose output rows were written (column lineage root).
    query: PlanNode | None = None


@dataclass
class VisitContext:
    """Session facts the visitors need besides the plan."""

    capture: PlanCapture
    #: "db.table" -> CatalogLookup.table() facts, fetched on the listener thread.
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    warehouse_uri: str | None = None
    #: Namespace of table symlinks: ``hive://host:port`` with a metastore URI, else the warehouse.
    table_namespace: str | None = None
    remove_path: re.Pattern[str] | None = None
    #: Schema (struct JSON) of a write command's query, by node key.
    query_schemas: Mapping[str, Any] = field(default_factory=dict)

    def facts(self, node: PlanNode) -> dict[str, Any]:
        return self.capture.facts_for(node)

    def table(self, database: str | None, table: str) -> Mapping[str, Any]:
        return self.tables.get(f"{database or 'default'}.{table}", {})


@dataclass
class Visited:
    """What one action read and wrote, and its job-name suffix."""

    inputs: list[CapturedDataset] = field(default_factory=list)
    outputs: list[CapturedDataset] = field(default_factory=list)
    #: Suffix for the job name (``warehouse_test``); ``None`` leaves it off.
    job_suffix: str | None = None


def dataset_at(location: str, ctx: VisitContext) -> tuple[str, str]:
    """``(namespace, name)`` for a storage location, with partition dirs trimmed."""
    namespace, name = naming.dataset_from_location(location)
    name = naming.trim_partition_dirs(name)
    name = naming.remove_path_pattern(name, ctx.remove_path)
    return namespace, name


def _type_fields(data_type: Any) -> tuple[str, list[SchemaField]]:
    if isinstance(data_type, str):
        return data_type, []
    if isinstance(data_type, Mapping):
        kind = str(data_type.get("type", "unknown"))
        if kind == "struct":
            return "struct", schema_from_struct(data_type)
        if kind == "array":
            element, children = _type_fields(data_type.get("elementType"))
            if children:
                return "array", [("_element", element, children)]
            return "array", []
        if kind == "map":
            value, children = _type_fields(data_type.get("valueType"))
            key, _ = _type_fields(data_type.get("keyType"))
            return "map", [("key", key, []), ("value", value, children)]
        return kind, []
    return "unknown", []


def schema_from_struct(struct: Mapping[str, Any] | None) -> list[SchemaField]:
    """Schema fields from a Spark ``StructType`` JSON (nested structs kept)."""
    if not struct:
        return []
    fields: list[SchemaField] = []
    for item in struct.get("fields", []):
        type_, children = _type_fields(item.get("type"))
        fields.append((str(item.get("name")), type_, children))
    return fields


def schema_from_attributes(attributes: list[Expr]) -> list[SchemaField]:
    """Schema fields from a relation's ``output`` attribute references."""
    fields: list[SchemaField] = []
    for attr in attributes:
        type_, children = _type_fields(attr.fields.get("dataType"))
        fields.append((attr.name or "", type_, children))
    return fields
