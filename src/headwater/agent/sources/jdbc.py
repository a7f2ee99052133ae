"""JDBC tables: reads through a ``JDBCRelation``, writes through ``JdbcRelationProvider``.

Named as the OpenLineage naming table names database tables
(:mod:`headwater.jdbc_urls`): the namespace of the database service, and the table as
``database.schema.table``.

A read of ``dbtable=<table>`` is that table, its schema the relation's output.
A read of ``query=<SQL>`` (or of a ``dbtable`` that is a subquery or a join) is
every table the SQL reads, however Spark wraps it (``(<SQL>) SPARK_GEN_SUBQ_n``):
:mod:`.jdbc_sql` parses the SQL and maps each output column of the relation to
the table columns it comes from, so the column lineage of what Spark then
writes reaches the database tables' columns. Each such table's schema lists
the columns of it the query returns or computes from, typed as the output
column they feed (the database's own types are not asked for).

A write (``df.write.jdbc(...)``, ``format("jdbc").save()``) is a
``SaveIntoDataSourceCommand`` over ``JdbcRelationProvider``: its ``dbtable``
with the schema and column lineage of the rows written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from headwater.agent.plan import PlanNode
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    column_names_by_id,
    schema_from_attributes,
    schema_from_struct,
    written_query,
)
from headwater.agent.sources.family import SourceFamily
from headwater.agent.sources.jdbc_sql import sql_lineage, table_parts
from headwater.agent.sources.jvm_common import option
from headwater.jdbc_urls import JdbcLocation, jdbc_location

__all__ = ["FAMILY"]

logger = logging.getLogger(__name__)

#: Connection options that name a database or schema beside the URL. Only these
#: are read from the JVM: the others may hold credentials.
NAMING_OPTIONS = frozenset(
    {
        "databasename",
        "database",
        "servername",
        "portnumber",
        "instancename",
        "db",
        "schema",
        "currentschema",
        "catalog",
        "projectid",
        "defaultdataset",
        "ssl",
    }
)

# What Spark's JDBCOptions makes of a ``query`` option.
_GENERATED_SUBQUERY = re.compile(r"^\s*\((?P<sql>.*)\)\s+SPARK_GEN_SUBQ_\d+\s*$", re.S)
_WHITESPACE_INSIDE = re.compile(r"\S\s+\S")


def _jdbc_relation_facts(relation: Any) -> dict[str, Any]:
    options = relation.jdbcOptions()
    parameters = options.parameters()
    keys = str(parameters.keySet().mkString("\n")).split("\n")
    return {
        "jdbc_url": str(options.url()),
        "jdbc_table": str(options.tableOrQuery()),
        "jdbc_options": {
            key.lower(): str(option(parameters.get(key)))
            for key in keys
            if key.lower() in NAMING_OPTIONS
        },
    }


def _location(url: str, options: Mapping[str, str]) -> JdbcLocation:
    return jdbc_location(url, {k: v for k, v in options.items() if k.lower() in NAMING_OPTIONS})


def _is_table_name(dbtable: str) -> bool:
    """``schema.table``, ``"My Table"``: not a subquery, not a join."""
    text = dbtable.strip()
    if text.startswith("("):
        return False
    unquoted = re.sub(r'"[^"]*"|`[^`]*`|\[[^\]]*\]', "x", text)
    return _WHITESPACE_INSIDE.search(unquoted) is None


def _read_jdbc_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    facts = ctx.facts(node)
    url = facts.get("jdbc_url")
    if not url:
        return []
    location = _location(str(url), facts.get("jdbc_options") or {})
    attributes = node.output()
    table_or_query = str(facts.get("jdbc_table", ""))
    generated = _GENERATED_SUBQUERY.match(table_or_query)
    if generated is None and _is_table_name(table_or_query):
        name = location.table_name(table_parts(table_or_query, location.dialect))
        by_id = column_names_by_id(attributes)
        return [
            CapturedDataset(
                location.namespace,
                name,
                fields=schema_from_attributes(attributes),
                attributes=by_id,
            )
        ]
    sql = generated["sql"] if generated else f"SELECT * FROM {table_or_query}"
    return _query_datasets(sql, location, attributes)


def _query_datasets(
    sql: str, location: JdbcLocation, attributes: list[Any]
) -> list[CapturedDataset]:
    """One dataset per table the SQL reads; the relation's output attributes map to
    the table columns they come from."""
    lineage = sql_lineage(sql, location.dialect, [a.name or "" for a in attributes])
    if lineage is None:
        return []
    datasets = {
        parts: CapturedDataset(location.namespace, location.table_name(parts))
        for parts in lineage.tables
    }
    types = schema_from_attributes(attributes)
    for attribute, (_, type_, children), sources in zip(
        attributes, types, lineage.columns, strict=False
    ):
        for (parts, column), transformations in sorted(sources.items()):
            ds = datasets.get(parts)
            if ds is None:
                continue
            if attribute.expr_id is not None:
                ds.derived_attributes.setdefault(attribute.expr_id, []).extend(
                    (column, how) for how in sorted(transformations, key=_order)
                )
            direct = any(how.type == "DIRECT" for how in transformations)
            if direct and all(field[0] != column for field in ds.fields):
                ds.fields.append((column, type_, children))
    for (parts, column), transformations in sorted(lineage.rows.items()):
        if parts in datasets:
            datasets[parts].row_sources.extend(
                (column, how) for how in sorted(transformations, key=_order)
            )
    return list(datasets.values())


def _order(how: Any) -> tuple[str, str, str]:
    return (how.type, how.subtype, how.description or "")


def _write_jdbc(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    options = {str(k).lower(): str(v) for k, v in (facts.get("options") or {}).items()}
    url, table = options.get("url"), options.get("dbtable")
    if not url or not table:
        return
    location = _location(url, options)
    output = CapturedDataset(
        location.namespace,
        location.table_name(table_parts(table, location.dialect)),
        fields=schema_from_struct(facts.get("query_schema")),
        query=written_query(root),
    )
    mode = facts.get("mode")
    if mode == "Overwrite":
        output.lifecycle = "OVERWRITE"
    elif mode == "ErrorIfExists":
        # The write fails unless it creates the table.
        output.lifecycle = "CREATE"
    visited.outputs.append(output)
    # The listener names the job after the table as the write names it.
    visited.job_suffix = table


FAMILY = SourceFamily(
    name="jdbc",
    relation_lookups={"JDBCRelation": _jdbc_relation_facts},
    relation_reads={"JDBCRelation": _read_jdbc_relation},
    save_writes={"JdbcRelationProvider": _write_jdbc},
)
