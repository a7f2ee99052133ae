"""What every source family shares: the captured dataset, the visit context,
dataset names from locations, table symlinks and schemas from Spark types.

One floor below the source families and the visit loop (:mod:`.visit`), which
import it; it imports none of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from headwater import naming
from headwater.agent.columns import Transformation
from headwater.agent.plan import Expr, PlanNode
from headwater.events.facets import SchemaField

__all__ = [
    "CapturedDataset",
    "MicroBatch",
    "VisitContext",
    "Visited",
    "catalog_table_ident",
    "column_names_by_id",
    "dataset_at",
    "datasets_at",
    "schema_from_attributes",
    "schema_from_struct",
    "symlink_for",
    "written_query",
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
    #: For inputs whose source computes its output (a JDBC query): exprId -> the
    #: columns of this dataset the attribute comes from, each with its transformation.
    derived_attributes: dict[int, list[tuple[str, Transformation]]] = field(default_factory=dict)
    #: For such inputs: the columns of this dataset that decide which rows the source
    #: returns (a JDBC query's WHERE and JOIN columns), each with its INDIRECT kind.
    row_sources: list[tuple[str, Transformation]] = field(default_factory=list)
    #: For outputs: the plan whose output rows were written (column lineage root).
    query: PlanNode | None = None
    #: The table version read or written (Iceberg snapshot id, Delta version): ``version`` facet.
    version: str | None = None
    #: ``(storageLayer, fileFormat)`` of a table format (``("iceberg", "parquet")``): ``storage`` facet.
    storage: tuple[str, str | None] | None = None
    #: This dataset's own ``catalog`` facet arguments (name, framework, type_,
    #: warehouse_uri), for tables of a catalog other than the session's.
    catalog: dict[str, Any] | None = None
    #: TABLE, FILE or TOPIC when the namespace alone does not tell (``datasetType`` facet).
    dataset_type: str | None = None
    #: For a topic read: the fields of the ``value`` the plan parses (``from_json``'s
    #: schema), the ``declaredSchema`` input facet (see :mod:`.kafka_schemas`).
    declared_value: list[SchemaField] | None = None


@dataclass(frozen=True)
class MicroBatch:
    """The rows a streaming query hands its ``foreachBatch`` function, which Spark
    passes as a ``LogicalRDD`` that names nothing: its columns, and the input
    fields each derives from through the query (with the transformations)."""

    columns: tuple[str, ...]
    sources: Mapping[str, list[tuple[tuple[str, str, str], Transformation]]]

    def datasets(self, node: PlanNode) -> list[CapturedDataset] | None:
        """What a leaf ``node`` holding these rows reads; ``None`` when its columns
        are not the batch's."""
        attributes = node.output()
        if tuple(a.name for a in attributes) != self.columns:
            return None
        found: dict[tuple[str, str], CapturedDataset] = {}
        for attribute in attributes:
            if attribute.expr_id is None:
                continue
            for (namespace, name, column), how in self.sources.get(attribute.name or "", []):
                ds = found.setdefault((namespace, name), CapturedDataset(namespace, name))
                ds.derived_attributes.setdefault(attribute.expr_id, []).append((column, how))
        return list(found.values())


@dataclass
class VisitContext:
    """The captured plan and the session facts the visitors need besides it."""

    #: The action's plan tree (see :class:`~headwater.agent.capture.PlanCapture`).
    tree: PlanNode
    #: node key -> the JVM facts fetched for that node.
    node_facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: "db.table" -> CatalogLookup.table() facts, fetched on the listener thread.
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    warehouse_uri: str | None = None
    #: Namespace of table symlinks: ``hive://host:port`` with a metastore URI, else the warehouse.
    table_namespace: str | None = None
    remove_path: re.Pattern[str] | None = None
    #: Schema (struct JSON) of a write command's query, by node key.
    query_schemas: Mapping[str, Any] = field(default_factory=dict)
    #: For an action a streaming query's ``foreachBatch`` function ran: its batch.
    micro_batch: MicroBatch | None = None

    def facts(self, node: PlanNode) -> Mapping[str, Any]:
        return self.node_facts.get(node.key, {})

    def table(self, database: str | None, table: str) -> Mapping[str, Any]:
        return self.tables.get(f"{database or 'default'}.{table}", {})


@dataclass
class Visited:
    """What one action read and wrote, and its job-name suffix."""

    inputs: list[CapturedDataset] = field(default_factory=list)
    outputs: list[CapturedDataset] = field(default_factory=list)
    #: Suffix for the job name (``warehouse_test``); ``None`` leaves it off.
    job_suffix: str | None = None


def catalog_table_ident(table: object) -> tuple[str | None, str] | None:
    """``(database, table)`` of a serialised ``CatalogTable`` or ``TableIdentifier``."""
    if not isinstance(table, dict):
        return None
    ident = table.get("identifier", table)
    if not isinstance(ident, dict) or "table" not in ident:
        return None
    return ident.get("database"), str(ident["table"])


def symlink_for(ident: tuple[str | None, str], ctx: VisitContext) -> tuple[str, str, str]:
    """The ``symlinks`` identifier naming a session-catalog table."""
    database, table = ident
    namespace = ctx.table_namespace or ctx.warehouse_uri or "spark_catalog"
    return namespace, f"{database or 'default'}.{table}", "TABLE"


def dataset_at(location: str, ctx: VisitContext) -> tuple[str, str]:
    """``(namespace, name)`` for a storage location, with partition dirs trimmed."""
    namespace, name = naming.dataset_from_location(location)
    name = naming.trim_partition_dirs(name)
    name = naming.remove_path_pattern(name, ctx.remove_path)
    return namespace, name


def column_names_by_id(attributes: list[Expr]) -> dict[int, str]:
    """exprId -> column name of a relation's output attributes (the column-lineage leaves)."""
    return {a.expr_id: a.name or "" for a in attributes if a.expr_id is not None}


def written_query(root: PlanNode) -> PlanNode | None:
    """The plan whose rows a write command at ``root`` writes (column-lineage root):
    its ``query`` inner plan (a CTAS keeps it there), else its child."""
    return root.inner.get("query") or (root.children[0] if root.children else None)


def datasets_at(node: PlanNode, locations: list[str], ctx: VisitContext) -> list[CapturedDataset]:
    """What a leaf ``node`` reads from each of ``locations``: one dataset each, with
    the node's output columns as its schema and as the column-lineage leaves."""
    attributes = node.output()
    by_id = column_names_by_id(attributes)
    fields = schema_from_attributes(attributes)
    datasets = []
    for location in locations:
        namespace, name = dataset_at(location, ctx)
        datasets.append(CapturedDataset(namespace, name, fields=list(fields), attributes=dict(by_id)))
    return datasets


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
