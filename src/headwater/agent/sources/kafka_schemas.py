"""The schema inside a Kafka message's bytes, where a plan shows it.

To Spark a Kafka ``value`` is bytes: the topic's columns say nothing about the
fields a producer serialises into it or a consumer parses out of it. Both are
in the plans, as expressions:

* a producer writes ``to_json(struct(...))`` (``StructsToJson``) or
  ``to_avro(struct(...))`` (``CatalystDataToAvro``) as the ``value`` column:
  :func:`written_value_fields` reads the struct's fields (names, and types
  from the attributes, casts and literals that make them; ``unknown`` for a
  field computed by another function);
* a consumer parses ``from_json(CAST(value AS STRING), schema)``
  (``JsonToStructs``, whose ``schema`` the plan JSON carries):
  :func:`declared_value_fields` reads that schema, for the topics whose
  ``value`` the expression parses.

Both give the ``value`` column as a struct with nested fields, so a producer's
and a consumer's view of one topic compare field by field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from headwater.agent.plan import Expr, PlanNode
from headwater.agent.sources.common import schema_from_struct
from headwater.events.facets import SchemaField

__all__ = ["declared_value_fields", "written_value_fields"]

_SERIALIZERS = frozenset({"StructsToJson", "CatalystDataToAvro"})
_PARSERS = frozenset({"JsonToStructs"})
_WRAPPERS = frozenset({"Alias", "Cast"})
#: Nodes whose output columns are their child's.
_PASS_THROUGH = frozenset(
    {"Filter", "Sort", "GlobalLimit", "LocalLimit", "Limit", "Repartition",
     "RepartitionByExpression", "RebalancePartitions", "SubqueryAlias", "Distinct"}
)
_PROJECTIONS = {"Project": "projectList", "Aggregate": "aggregateExpressions"}


def _unwrap(expr: Expr) -> Expr:
    while expr.cls in _WRAPPERS and expr.children:
        expr = expr.children[0]
    return expr


def _defining(node: PlanNode, name: str | None, expr_id: int | None, budget: list[int]) -> Expr | None:
    """The expression that computes the column ``name`` (or ``expr_id``) of ``node``,
    followed down through projections that only pass it on."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    field = _PROJECTIONS.get(node.cls)
    if field is not None:
        for expr in node.exprs(field):
            matches = expr.expr_id == expr_id if expr_id is not None else (
                (expr.name or "").lower() == (name or "").lower()
            )
            if not matches:
                continue
            inner = _unwrap(expr)
            if inner.cls == "AttributeReference" and inner.expr_id is not None:
                for child in node.children:
                    found = _defining(child, None, inner.expr_id, budget)
                    if found is not None:
                        return found
            return inner
        return None
    if node.cls in _PASS_THROUGH:
        for child in node.children:
            found = _defining(child, name, expr_id, budget)
            if found is not None:
                return found
    return None


def _type_of(expr: Expr) -> tuple[str, list[SchemaField]]:
    if expr.cls == "CreateNamedStruct":
        return "struct", _struct_fields(expr)
    data_type = expr.fields.get("dataType")
    if data_type is not None:
        fields = schema_from_struct({"fields": [{"name": "_", "type": data_type}]})
        if fields:
            return fields[0][1], list(fields[0][2])
    return "unknown", []


def _struct_fields(struct: Expr) -> list[SchemaField]:
    """The fields of a ``CreateNamedStruct``: its children are name, value pairs."""
    fields: list[SchemaField] = []
    children = struct.children
    for name_expr, value in zip(children[0::2], children[1::2], strict=False):
        name = name_expr.fields.get("value")
        if isinstance(name, str):
            # A cast's own type is the field's: only aliases are looked through.
            while value.cls == "Alias" and value.children:
                value = value.children[0]
            fields.append((name, *_type_of(value)))
    return fields


def written_value_fields(query: PlanNode | None) -> list[SchemaField] | None:
    """The fields of the struct a Kafka write serialises as its ``value`` column, or
    ``None`` when the value is not a serialised struct."""
    if query is None:
        return None
    value = _defining(query, "value", None, [200])
    if value is None or value.cls not in _SERIALIZERS or not value.children:
        return None
    kind, fields = _type_of(_unwrap(value.children[0]))
    return fields if kind == "struct" else None


def _parsed(expressions: Iterable[Expr]) -> Iterable[tuple[int, Mapping[str, Any]]]:
    for expr in expressions:
        for part in expr.walk():
            if part.cls in _PARSERS and part.children and isinstance(part.fields.get("schema"), Mapping):
                source = _unwrap(part.children[0])
                if source.cls == "AttributeReference" and source.expr_id is not None:
                    yield source.expr_id, part.fields["schema"]


def declared_value_fields(
    tree: PlanNode, value_ids: Mapping[int, tuple[str, str]]
) -> dict[tuple[str, str], list[SchemaField]]:
    """For each topic whose ``value`` attribute (``value_ids``: exprId -> the topic's
    namespace and name) the plan parses with ``from_json``: the fields it declares."""
    found: dict[tuple[str, str], list[SchemaField]] = {}
    for node in tree.walk():
        for name, raw in node.fields.items():
            if not isinstance(raw, list) or not raw:
                continue
            for expr_id, schema in _parsed(node.exprs(name)):
                topic = value_ids.get(expr_id)
                if topic is not None and topic not in found:
                    found[topic] = schema_from_struct(schema)
    return found
