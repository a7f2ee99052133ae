"""An Iceberg ALTER's schema comes from the command, not from the catalog as it is when
Spark reports it: under load the job's next statement (a RENAME COLUMN after an ADD
COLUMNS) may already have changed the table. Recorded Spark 4.0 plan shapes, no JVM."""

from __future__ import annotations

from typing import Any

from headwater.agent.plan import parse_plan
from headwater.agent.sources import VisitContext, visit_plan


def _attribute(name: str, type_: str, ident: int) -> list[dict[str, Any]]:
    return [{
        "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference", "num-children": 0,
        "name": name, "dataType": type_, "nullable": True, "metadata": {},
        "exprId": {"product-class": "org.apache.spark.sql.catalyst.expressions.ExprId", "id": ident, "jvmId": "j"},
        "qualifier": [],
    }]


_RESOLVED = {
    "class": "org.apache.spark.sql.catalyst.analysis.ResolvedTable", "num-children": 0,
    "catalog": None, "identifier": None, "table": None,
    "outputAttributes": [_attribute("a", "string", 0), _attribute("b", "string", 1)],
}

#: The table's facts when the ADD COLUMNS is captured after the job's RENAME ran.
_CATALOG_AFTER_RENAME = {
    "table_name": "ice.db.t",
    "table_class": "org.apache.iceberg.spark.source.SparkTable",
    "catalog": "ice",
    "namespace": ["db"],
    "name": "t",
    "location": "/w/db/t",
    "schema": {"type": "struct", "fields": [
        {"name": "a", "type": "string"}, {"name": "d", "type": "string"}, {"name": "c", "type": "integer"}]},
}


def _fields(root_json: dict[str, Any], facts: dict[str, Any]) -> list[tuple[str, str]]:
    tree = parse_plan([root_json, _RESOLVED])
    (output,) = visit_plan(VisitContext(tree=tree, node_facts={tree.key: facts})).outputs
    return [(name, type_) for name, type_, _ in output.fields]


def test_add_columns_reports_the_table_as_resolved_plus_the_columns_added() -> None:
    add = {"class": "org.apache.spark.sql.catalyst.plans.logical.AddColumns", "num-children": 1,
           "table": 0, "columnsToAdd": [None]}
    facts = {**_CATALOG_AFTER_RENAME, "added_columns": [{"name": "c", "type": "integer"}]}
    assert _fields(add, facts) == [("a", "string"), ("b", "string"), ("c", "integer")]


def test_rename_column_renames_in_the_table_as_resolved() -> None:
    rename = {
        "class": "org.apache.spark.sql.catalyst.plans.logical.RenameColumn", "num-children": 1, "table": 0,
        "column": [{"class": "org.apache.spark.sql.catalyst.analysis.ResolvedFieldName", "num-children": 0,
                    "path": [], "field": {"product-class": "org.apache.spark.sql.types.StructField",
                                          "name": "b", "dataType": "string", "nullable": True, "metadata": {}}}],
        "newName": "d",
    }
    assert _fields(rename, _CATALOG_AFTER_RENAME) == [("a", "string"), ("d", "string")]


def test_a_nested_column_added_falls_back_to_the_catalog() -> None:
    add = {"class": "org.apache.spark.sql.catalyst.plans.logical.AddColumns", "num-children": 1,
           "table": 0, "columnsToAdd": [None]}
    facts = {**_CATALOG_AFTER_RENAME, "added_columns": [{"name": "s.x", "type": "integer"}]}
    assert _fields(add, facts) == [("a", "string"), ("d", "string"), ("c", "integer")]
