"""Session-catalog tables: reads of catalog and Hive tables, Hive inserts and CTAS.

A table is a dataset at its location, named in ``symlinks`` by ``db.table``.
The plan JSON names the table; its location comes from the JVM (a relation's
``CatalogTable``) or from the catalog look-up made for the action (a CTAS's
table is chosen by the catalog).
"""

from __future__ import annotations

from typing import Any

from headwater import naming
from headwater.agent.plan import PlanNode
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    catalog_table_ident,
    datasets_at,
    schema_from_struct,
    symlink_for,
    written_query,
)
from headwater.agent.sources.family import SourceFamily
from headwater.agent.sources.files import output_at
from headwater.agent.sources.jvm_common import option, query_schema, table_location

__all__ = ["CTAS_COMMANDS", "FAMILY", "catalog_relation_facts", "read_catalog_relation"]

#: Commands that create a session-catalog table from a query.
CTAS_COMMANDS = frozenset(
    {
        "CreateDataSourceTableAsSelectCommand",
        "CreateHiveTableAsSelectCommand",
        "OptimizedCreateHiveTableAsSelectCommand",
    }
)


def catalog_relation_facts(node: Any) -> dict[str, Any]:
    """A ``LogicalRelation`` over a catalog table: its location is all that is needed
    (the JSON names the table)."""
    table = option(node.catalogTable())
    return {"location": table_location(table)} if table is not None else {}


def _table_datasets(node: PlanNode, ctx: VisitContext, ident: tuple[str | None, str] | None) -> list[CapturedDataset]:
    location = ctx.facts(node).get("location")
    datasets = datasets_at(node, [location] if location else [], ctx)
    for ds in datasets:
        if ident is not None:
            ds.is_table = True
            ds.symlinks.append(symlink_for(ident, ctx))
    return datasets


def read_catalog_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """A ``LogicalRelation`` whose JSON names a catalog table."""
    return _table_datasets(node, ctx, catalog_table_ident(node.fields.get("catalogTable")))


def _read_hive_table(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    return _table_datasets(node, ctx, catalog_table_ident(node.fields.get("tableMeta")))


def _hive_relation_facts(node: Any) -> dict[str, Any]:
    return {"location": table_location(node.tableMeta())}


def _insert_hive_facts(node: Any) -> dict[str, Any]:
    return {"location": table_location(node.table()), "overwrite": bool(node.overwrite()), **query_schema(node)}



def _suffix(ident: tuple[str | None, str]) -> str:
    # A table write is named by its table identifier, as the listener names it.
    return f"{ident[0] or 'default'}_{ident[1]}"


def _write_insert_hive(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    ident = catalog_table_ident(root.fields.get("table"))
    location = facts.get("location") or (ctx.table(*ident).get("location") if ident else None)
    if not location:
        return
    output = output_at(str(location), ctx, schema_from_struct(facts.get("query_schema")), written_query(root), ident)
    if facts.get("overwrite"):
        output.lifecycle = "OVERWRITE"
    visited.outputs.append(output)
    visited.job_suffix = naming.trim_path_suffix(output.name)


def _write_ctas(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    ident = catalog_table_ident(root.fields.get("table") or root.fields.get("tableDesc"))
    if ident is None:
        return
    table = ctx.table(*ident)
    location = table.get("location")
    if not location:
        return
    fields = schema_from_struct(ctx.facts(root).get("query_schema")) or schema_from_struct(table.get("schema"))
    output = output_at(str(location), ctx, fields, written_query(root), ident)
    output.lifecycle = "CREATE"
    visited.outputs.append(output)
    visited.job_suffix = _suffix(ident)


FAMILY = SourceFamily(
    name="session-catalog tables",
    lookups={
        "HiveTableRelation": _hive_relation_facts,
        "InsertIntoHiveTable": _insert_hive_facts,
        **{command: query_schema for command in CTAS_COMMANDS},
    },
    reads={"HiveTableRelation": _read_hive_table},
    writes={"InsertIntoHiveTable": _write_insert_hive, **{command: _write_ctas for command in CTAS_COMMANDS}},
)
