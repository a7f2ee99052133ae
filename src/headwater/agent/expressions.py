"""Expression JSON -> the SQL text Spark's ``Expression.sql`` would print.

Used for the ``description`` of column-lineage transformations (``t1.a AS
ident``, ``INNER JOIN ON (t1.a = t2.a)``, ``GROUP BY t1.a, t1.b``), which the
OpenLineage listener takes from Spark. Common expressions are printed exactly;
anything else falls back to Spark's default ``name(arg, ...)`` form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from headwater.agent.plan import Expr, PlanNode

__all__ = ["expr_sql", "node_description"]

_BINARY = {
    "EqualTo": "=",
    "EqualNullSafe": "<=>",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "Divide": "/",
    "Remainder": "%",
    "And": "AND",
    "Or": "OR",
}
_FUNCTION_NAMES = {
    "Average": "avg",
    "Count": "count",
    "Sum": "sum",
    "Max": "max",
    "Min": "min",
    "First": "first",
    "Last": "last",
    "RowNumber": "row_number",
    "Rank": "rank",
    "DenseRank": "dense_rank",
    "Murmur3Hash": "hash",
    "XxHash64": "xxhash64",
}
_JOIN_TYPES = {
    "Inner": "INNER",
    "LeftOuter": "LEFT OUTER",
    "RightOuter": "RIGHT OUTER",
    "FullOuter": "FULL OUTER",
    "LeftSemi": "LEFT SEMI",
    "LeftAnti": "LEFT ANTI",
    "Cross": "CROSS",
}
_PLAIN_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
#: JSON type names whose SQL name differs (``DataType.sql``).
_TYPE_SQL = {"long": "BIGINT", "integer": "INT", "short": "SMALLINT", "byte": "TINYINT"}


def _quote(name: str) -> str:
    return name if _PLAIN_NAME.match(name) else "`" + name.replace("`", "``") + "`"


def _qualifier(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [part.strip() for part in inner.split(",")] if inner else []
    return []


def _literal(expr: Expr) -> str:
    value = expr.fields.get("value")
    data_type = expr.fields.get("dataType")
    if value is None:
        return "NULL"
    if data_type == "string":
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if data_type == "long":
        return f"{value}L"
    if data_type == "boolean":
        return str(value).upper()
    return str(value)


def expr_sql(expr: Expr) -> str:
    """The SQL text of one expression (iterative over deep trees is not needed here)."""
    cls = expr.cls
    kids = expr.children
    if cls == "AttributeReference":
        parts = [_quote(q) for q in _qualifier(expr.fields.get("qualifier"))]
        return ".".join([*parts, _quote(expr.name or "")])
    if cls == "Alias":
        return f"{expr_sql(kids[0])} AS {_quote(expr.name or '')}" if kids else _quote(expr.name or "")
    if cls == "Literal":
        return _literal(expr)
    if cls in _BINARY and len(kids) == 2:
        return f"({expr_sql(kids[0])} {_BINARY[cls]} {expr_sql(kids[1])})"
    if cls == "IsNotNull" and kids:
        return f"({expr_sql(kids[0])} IS NOT NULL)"
    if cls == "IsNull" and kids:
        return f"({expr_sql(kids[0])} IS NULL)"
    if cls == "Not" and kids:
        return f"(NOT {expr_sql(kids[0])})"
    if cls == "AggregateExpression" and kids:
        inner = expr_sql(kids[0])
        if expr.fields.get("isDistinct") and "(" in inner:
            name, rest = inner.split("(", 1)
            return f"{name}(DISTINCT {rest}"
        return inner
    if cls == "Cast" and kids:
        target = str(expr.fields.get("dataType"))
        return f"CAST({expr_sql(kids[0])} AS {_TYPE_SQL.get(target, target.upper())})"
    if cls == "SortOrder" and kids:
        direction = str(expr.fields.get("direction", {}).get("object", ""))
        nulls = str(expr.fields.get("nullOrdering", {}).get("object", ""))
        text = expr_sql(kids[0]) + (" DESC" if "Descending" in direction else " ASC")
        return text + (" NULLS LAST" if "NullsLast" in nulls else " NULLS FIRST")
    if cls == "CaseWhen":
        parts = ["CASE"]
        pairs = len(kids) // 2
        for index in range(pairs):
            parts.append(f"WHEN {expr_sql(kids[2 * index])} THEN {expr_sql(kids[2 * index + 1])}")
        if len(kids) % 2:
            parts.append(f"ELSE {expr_sql(kids[-1])}")
        parts.append("END")
        return " ".join(parts)
    name = _FUNCTION_NAMES.get(cls, cls.lower())
    return f"{name}({', '.join(expr_sql(k) for k in kids)})"


def _join_sql(exprs: Sequence[Expr]) -> str:
    return ", ".join(expr_sql(e) for e in exprs)


def node_description(node: PlanNode) -> str | None:
    """How a plan node uses columns indirectly: ``WHERE ...``, ``INNER JOIN ON ...``."""
    if node.cls == "Filter":
        return "WHERE " + _join_sql(node.exprs("condition"))
    if node.cls == "Join":
        join_type = str(node.fields.get("joinType", {}).get("object", "")).rsplit(".", 1)[-1].rstrip("$")
        kind = _JOIN_TYPES.get(join_type, join_type.upper())
        condition = node.exprs("condition")
        return f"{kind} JOIN ON {_join_sql(condition)}" if condition else f"{kind} JOIN"
    if node.cls == "Aggregate":
        return "GROUP BY " + _join_sql(node.exprs("groupingExpressions"))
    if node.cls == "Sort":
        return "ORDER BY " + _join_sql(node.exprs("order"))
    if node.cls == "Window":
        text = "PARTITION BY " + _join_sql(node.exprs("partitionSpec"))
        order = node.exprs("orderSpec")
        return text + (" ORDER BY " + _join_sql(order) if order else "")
    return None
