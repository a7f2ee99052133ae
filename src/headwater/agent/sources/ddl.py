"""Session-catalog DDL: the table a command changes, with the ``lifecycleStateChange`` facet.

CREATE (datasource and Hive), DROP, TRUNCATE, ALTER TABLE ADD COLUMNS, RENAME
and LOAD DATA. The table's location and schema come from the session catalog
(fetched on the listener thread), because the plan JSON names only the table.
"""

from __future__ import annotations

import logging
from typing import Any

from headwater import naming
from headwater.agent.plan import PlanNode
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    catalog_table_ident,
    dataset_at,
    schema_from_struct,
    symlink_for,
)
from headwater.agent.sources import dsv2
from headwater.agent.sources.family import SourceFamily

__all__ = ["DDL_COMMANDS", "DROP_COMMANDS", "FAMILY", "table_idents"]

logger = logging.getLogger(__name__)

# class -> (lifecycle change, how the job-name suffix is formed)
DDL_COMMANDS: dict[str, tuple[str | None, str]] = {
    "CreateDataSourceTableCommand": ("CREATE", "table"),
    "CreateTableCommand": ("CREATE", "path"),
    "CreateTableLikeCommand": ("CREATE", "path"),
    "DropTable": ("DROP", "path"),
    "DropTableCommand": ("DROP", "path"),
    "TruncateTableCommand": ("TRUNCATE", "path"),
    "AlterTableAddColumnsCommand": (None, "none"),
    "AlterTableRenameCommand": ("RENAME", "none"),
    "LoadDataCommand": (None, "table"),
}

#: Drops: the table is gone when Spark reports one, so its location is the one the
#: catalog gives a table of that name (its namespace's, which the job rarely
#: changes) and whether it dropped anything was noted when it ran (see
#: ``catalog_events``): nothing the job's next statement changes, so a drop is
#: captured later like any action.
DROP_COMMANDS = frozenset({"DropTable", "DropTableCommand"})


def table_idents(root: PlanNode, resolved: dict | None = None) -> list[tuple[str | None, str]]:
    """The tables a command at ``root`` names (for the catalog look-up)."""
    idents: list[tuple[str | None, str]] = []
    for key in ("table", "tableDesc", "tableName", "oldName", "newName", "targetTable"):
        ident = catalog_table_ident(root.fields.get(key))
        if ident is not None:
            if key == "newName" and ident[0] is None:
                old = catalog_table_ident(root.fields.get("oldName"))
                ident = (old[0] if old else None, ident[1])
            idents.append(ident)
    if resolved and resolved.get("table"):
        namespace = resolved.get("namespace") or []
        idents.append((namespace[-1] if namespace else None, resolved["table"]))
    return idents


def _resolved_identifier_facts(node: Any) -> dict[str, Any]:
    ident = node.identifier()
    facts: dict[str, Any] = {"namespace": [str(n) for n in list(ident.namespace())], "table": str(ident.name())}
    try:
        facts["catalog"] = str(node.catalog().name())
    except Exception:
        logger.debug("no catalog name", exc_info=True)
    return facts


def _write_command(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    """Add the table a DDL command at ``root`` changes."""
    if root.cls == "DropTable" and dsv2.is_v2_drop(root, ctx):
        dsv2.write_drop(root, ctx, visited)
        return
    change, suffix_kind = DDL_COMMANDS[root.cls]
    resolved = None
    if root.cls == "DropTable" and root.children:
        resolved = ctx.facts(root.children[0])
    idents = table_idents(root, resolved)
    if not idents:
        return
    ident = idents[-1]  # for RENAME: the new name
    table = ctx.table(*ident)
    location = table.get("location")
    if not location:
        return
    namespace, name = dataset_at(str(location), ctx)
    # A dropped table has no schema; a table of its name the job created since
    # has its own.
    fields = [] if change == "DROP" else schema_from_struct(table.get("schema"))
    if not fields and root.cls in ("CreateDataSourceTableCommand", "CreateTableCommand"):
        spec = root.fields.get("table")
        if isinstance(spec, dict):
            fields = schema_from_struct(spec.get("schema"))
    ds = CapturedDataset(namespace, name, fields=fields, lifecycle=change, is_table=True)
    ds.symlinks.append(symlink_for(ident, ctx))
    if root.cls == "AlterTableRenameCommand" and len(idents) == 2:
        old_location = ctx.table(*idents[0]).get("location")
        if old_location:
            ds.previous = dataset_at(str(old_location), ctx)
    visited.outputs.append(ds)
    if suffix_kind == "table":
        visited.job_suffix = f"{ident[0] or 'default'}_{ident[1]}"
    elif suffix_kind == "path":
        visited.job_suffix = naming.trim_path_suffix(name)


FAMILY = SourceFamily(
    name="session-catalog DDL",
    lookups={"ResolvedIdentifier": _resolved_identifier_facts},
    writes=dict.fromkeys(DDL_COMMANDS, _write_command),
)
