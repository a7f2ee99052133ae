"""JDBC tables: a ``LogicalRelation`` over a ``JDBCRelation``.

Named as the OpenLineage naming spec names database tables: the namespace is
``<scheme>://host:port`` of the JDBC URL, the name ``database.schema.table``.
"""

from __future__ import annotations

from typing import Any

from headwater.agent.plan import PlanNode
from headwater.agent.sources.common import CapturedDataset, VisitContext, schema_from_attributes
from headwater.agent.sources.family import SourceFamily

__all__ = ["FAMILY"]


def _jdbc_relation_facts(relation: Any) -> dict[str, Any]:
    options = relation.jdbcOptions()
    return {"jdbc_url": str(options.url()), "jdbc_table": str(options.tableOrQuery())}


def _read_jdbc_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    facts = ctx.facts(node)
    if not facts.get("jdbc_url"):
        return []
    attributes = node.output()
    by_id = {a.expr_id: a.name or "" for a in attributes if a.expr_id is not None}
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
    return [
        CapturedDataset(
            f"{scheme}://{authority}", name, fields=schema_from_attributes(attributes), attributes=by_id
        )
    ]


FAMILY = SourceFamily(
    name="jdbc",
    relation_lookups={"JDBCRelation": _jdbc_relation_facts},
    relation_reads={"JDBCRelation": _read_jdbc_relation},
)
