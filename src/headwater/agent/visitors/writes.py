"""Output datasets of write commands: file inserts, Hive inserts, CTAS, saves, directories."""

from __future__ import annotations

from headwater import naming
from headwater.agent.plan import PlanNode
from headwater.agent.visitors.datasets import (
    CapturedDataset,
    VisitContext,
    Visited,
    dataset_at,
    schema_from_struct,
)
from headwater.agent.visitors.reads import catalog_table_ident, symlink_for

__all__ = ["WRITE_COMMANDS", "visit_write"]

_CTAS = frozenset(
    {
        "CreateDataSourceTableAsSelectCommand",
        "CreateHiveTableAsSelectCommand",
        "OptimizedCreateHiveTableAsSelectCommand",
    }
)

#: Root classes this module turns into outputs.
WRITE_COMMANDS = frozenset(
    {
        "InsertIntoHadoopFsRelationCommand",
        "InsertIntoHiveTable",
        "SaveIntoDataSourceCommand",
        "InsertIntoDataSourceDirCommand",
        "InsertIntoHiveDirCommand",
        *_CTAS,
    }
)


def visit_write(root: PlanNode, ctx: VisitContext, visited: Visited) -> bool:
    """Add the output of a write command at ``root``; ``False`` if it is not one."""
    if root.cls not in WRITE_COMMANDS:
        return False
    facts = ctx.facts(root)
    fields = schema_from_struct(facts.get("query_schema"))
    query = root.inner.get("query") or (root.children[0] if root.children else None)
    output: CapturedDataset | None = None
    ident: tuple[str | None, str] | None = None
    if root.cls == "InsertIntoHadoopFsRelationCommand":
        ident = catalog_table_ident(root.fields.get("catalogTable"))
        location = facts.get("output_path")
        if location:
            output = _output(location, ctx, fields, query, ident)
            if facts.get("mode") == "Overwrite":
                output.lifecycle = "OVERWRITE"
    elif root.cls == "InsertIntoHiveTable":
        ident = catalog_table_ident(root.fields.get("table"))
        location = facts.get("location") or _table_location(ident, ctx)
        if location:
            output = _output(location, ctx, fields, query, ident)
            if facts.get("overwrite"):
                output.lifecycle = "OVERWRITE"
    elif root.cls in _CTAS:
        ident = catalog_table_ident(root.fields.get("table") or root.fields.get("tableDesc"))
        location = _table_location(ident, ctx)
        if location:
            table = ctx.table(*ident) if ident else {}
            output = _output(location, ctx, fields or schema_from_struct(table.get("schema")), query, ident)
            output.lifecycle = "CREATE"
    elif root.cls == "SaveIntoDataSourceCommand":
        options = facts.get("options", {})
        location = options.get("path")
        if location:
            output = _output(location, ctx, fields, query, None)
            if facts.get("mode") == "Overwrite":
                output.lifecycle = "OVERWRITE"
    else:  # InsertInto*DirCommand
        location = facts.get("location")
        if location:
            output = _output(location, ctx, fields, query, None)
            if facts.get("overwrite", True):
                output.lifecycle = "OVERWRITE"
    if output is not None:
        visited.outputs.append(output)
        visited.job_suffix = naming.trim_path_suffix(output.name)
        if root.cls in _CTAS and ident is not None:
            # A CTAS is named by its table identifier, as the listener names it.
            visited.job_suffix = f"{ident[0] or 'default'}_{ident[1]}"
    return True


def _table_location(ident: tuple[str | None, str] | None, ctx: VisitContext) -> str | None:
    if ident is None:
        return None
    location = ctx.table(*ident).get("location")
    return str(location) if location else None


def _output(
    location: str,
    ctx: VisitContext,
    fields: list,
    query: PlanNode | None,
    ident: tuple[str | None, str] | None,
) -> CapturedDataset:
    namespace, name = dataset_at(location, ctx)
    ds = CapturedDataset(namespace, name, fields=list(fields), query=query)
    if ident is not None:
        ds.is_table = True
        ds.symlinks.append(symlink_for(ident, ctx))
    return ds
