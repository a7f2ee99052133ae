"""Input datasets: the leaf relations an action read.

``LogicalRelation`` over files or a catalog table, ``HiveTableRelation``,
``LogicalRDD`` traced to the files its RDD reads, and ``InMemoryRelation``
followed through the cache to the plan that filled it.
"""

from __future__ import annotations

from headwater.agent.plan import PlanNode
from headwater.agent.visitors.datasets import (
    CapturedDataset,
    VisitContext,
    dataset_at,
    schema_from_attributes,
)

__all__ = ["catalog_table_ident", "relation_datasets", "visit_reads"]


def visit_reads(root: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """Every input dataset below ``root`` (including inner and cached plans)."""
    found: list[CapturedDataset] = []
    for node in root.walk():
        found.extend(relation_datasets(node, ctx))
    return found


def catalog_table_ident(table: object) -> tuple[str | None, str] | None:
    """``(database, table)`` of a serialised ``CatalogTable`` or ``TableIdentifier``."""
    if not isinstance(table, dict):
        return None
    ident = table.get("identifier", table)
    if not isinstance(ident, dict) or "table" not in ident:
        return None
    return ident.get("database"), str(ident["table"])


def symlink_for(ident: tuple[str | None, str], ctx: VisitContext) -> tuple[str, str, str]:
    """The ``symlinks`` identifier naming a catalog table."""
    database, table = ident
    namespace = ctx.table_namespace or ctx.warehouse_uri or "spark_catalog"
    return namespace, f"{database or 'default'}.{table}", "TABLE"


#: Leaf classes :func:`relation_datasets` reads datasets from.
_RELATIONS = frozenset({"LogicalRelation", "HiveTableRelation", "LogicalRDD"})


def relation_datasets(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """The datasets one leaf node reads (empty for non-relations)."""
    if node.cls not in _RELATIONS:
        return []  # most nodes: skip their output and schema
    facts = ctx.facts(node)
    attributes = node.output()
    by_id = {a.expr_id: a.name or "" for a in attributes if a.expr_id is not None}
    fields = schema_from_attributes(attributes)
    locations: list[str] = []
    ident = None
    if node.cls == "LogicalRelation":
        ident = catalog_table_ident(node.fields.get("catalogTable"))
        if ident is not None and facts.get("location"):
            locations = [facts["location"]]
        elif facts.get("root_paths"):
            locations = list(facts["root_paths"])
        elif facts.get("jdbc_url"):
            return [_jdbc_dataset(facts, fields, by_id)]
    elif node.cls == "HiveTableRelation":
        ident = catalog_table_ident(node.fields.get("tableMeta"))
        if facts.get("location"):
            locations = [facts["location"]]
    elif node.cls == "LogicalRDD":
        locations = list(facts.get("input_paths", []))
    else:
        return []
    datasets = []
    for location in locations:
        namespace, name = dataset_at(location, ctx)
        ds = CapturedDataset(namespace, name, fields=list(fields), attributes=dict(by_id))
        if ident is not None:
            ds.is_table = True
            ds.symlinks.append(symlink_for(ident, ctx))
        datasets.append(ds)
    return datasets


def _jdbc_dataset(facts: dict, fields: list, by_id: dict[int, str]) -> CapturedDataset:
    # jdbc:postgresql://host:port/db -> postgres://host:port, name db.table
    url = str(facts["jdbc_url"])
    rest = url[len("jdbc:") :] if url.startswith("jdbc:") else url
    scheme, _, tail = rest.partition("://")
    authority, _, database = tail.partition("/")
    database = database.split("?", 1)[0]
    if scheme == "postgresql":
        scheme = "postgres"
    table = str(facts.get("jdbc_table", ""))
    if table.count(".") == 0 and scheme == "postgres":
        table = f"public.{table}"
    name = f"{database}.{table}" if database else table
    return CapturedDataset(f"{scheme}://{authority}", name, fields=list(fields), attributes=by_id)
