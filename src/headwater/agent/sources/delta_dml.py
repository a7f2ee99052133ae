"""Delta's MERGE, UPDATE and DELETE as the plans they write, for column lineage.

MERGE and UPDATE write assigned values, not a projection: their column lineage
comes from an ``Assignments`` node (see :mod:`headwater.agent.columns`) built
from the clauses' actions (MERGE) or the SET expressions (UPDATE), each
assignment's value traced through the source plan. A DELETE writes no values:
its plan is the target table under a ``Filter`` of its condition.
"""

from __future__ import annotations

from typing import Any

from headwater.agent.columns import ASSIGNMENTS
from headwater.agent.plan import Expr, PlanNode, parse_exprs

__all__ = ["delete_query", "merge_query", "plan_output", "target_plan", "update_query"]


def _attribute_json(name: str, data_type: Any, expr_id: int) -> list[dict[str, Any]]:
    return [
        {
            "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
            "num-children": 0,
            "name": name,
            "dataType": data_type,
            "nullable": True,
            "metadata": {},
            "exprId": {"id": expr_id},
            "qualifier": [],
        }
    ]


def _expr_json(expr: Expr) -> list[dict[str, Any]]:
    """An expression back in ``toJSON``'s flattened pre-order form."""
    entries: list[dict[str, Any]] = []
    stack = [expr]
    while stack:
        current = stack.pop()
        entries.append(
            {"class": current.cls, "num-children": len(current.children), **current.fields}
        )
        stack.extend(reversed(current.children))
    return entries


def _assignments(
    targets: list[Expr],
    values: list[list[Expr]],
    children: list[PlanNode],
    node: PlanNode,
    conditions: list[list[Expr]] | None = None,
) -> PlanNode:
    """An ``Assignments`` node writing ``values[i]`` into column ``targets[i]``, when
    ``conditions[i]`` (a MERGE clause's ``AND ...``) hold.

    The written columns get ids of their own (negative: Spark's are not), so a
    target column that keeps its value is reached through its assignment, with
    that assignment's text as the description, rather than being its own leaf.
    """
    output = [
        _attribute_json(t.name or "", t.fields.get("dataType"), -1 - index)
        for index, t in enumerate(targets)
    ]
    assigned = [[_expr_json(v) for v in column] for column in values]
    held = [[_expr_json(c) for c in column] for column in conditions or []]
    return PlanNode(
        cls=ASSIGNMENTS,
        fields={"output": output, "assignments": assigned, "conditions": held},
        children=children,
        path=(*node.path, ("assignments", None)),
    )


def _unqualified(value: Expr, kept: set[int | None]) -> Expr:
    """A target column a clause keeps, named by the column alone (``event_id``, not
    ``target.event_id``): the target's alias is the statement's, not the table's."""
    if value.cls == "AttributeReference" and value.expr_id in kept:
        return Expr(value.cls, {**value.fields, "qualifier": []})
    return value


def _column_name(action: Expr) -> str:
    parts = action.fields.get("targetColNameParts")
    if isinstance(parts, list):
        return ".".join(str(p) for p in parts)
    text = str(parts or "")
    return text[1:-1] if text.startswith("[") and text.endswith("]") else text


def merge_query(root: PlanNode, target: PlanNode, source: PlanNode) -> PlanNode:
    """The MERGE as assignments: each target column takes, from every clause that
    sets it, the clause's value; the ON condition joins source to target."""
    targets = plan_output(target)
    values: list[list[Expr]] = [[] for _ in targets]
    kept = {t.expr_id for t in targets}
    position = {t.name: index for index, t in enumerate(targets)}
    conditions: list[list[Expr]] = [[] for _ in targets]
    for field_name in ("matchedClauses", "notMatchedClauses", "notMatchedBySourceClauses"):
        for clause in root.exprs(field_name):
            condition = parse_exprs(clause.fields.get("condition"))
            for action in clause.children:
                if action.cls != "DeltaMergeAction" or not action.children:
                    continue
                index = position.get(_column_name(action))
                if index is not None:
                    values[index].append(_unqualified(action.children[0], kept))
                    conditions[index].extend(condition)
    join = PlanNode(
        cls="Join",
        fields={
            "joinType": {"object": "org.apache.spark.sql.catalyst.plans.FullOuter$"},
            "condition": root.fields.get("condition"),
        },
        children=[target, source],
        path=(*root.path, ("merge-join", None)),
    )
    return _assignments(targets, values, [join], root, conditions)


def plan_output(plan: PlanNode) -> list[Expr]:
    """The attributes a (resolved) plan outputs: its leaf's, through aliases of the plan."""
    node = plan
    while node.children and node.cls in ("SubqueryAlias", "View", "Filter", "Project"):
        if node.cls == "Project":
            return [e for e in node.exprs("projectList") if e.expr_id is not None]
        node = node.children[0]
    return [a for a in node.output() if a.expr_id is not None]


def target_plan(root: PlanNode) -> PlanNode | None:
    """The table plan an UPDATE or DELETE reads (a plan field, not a child)."""
    return root.inner.get("target") or (root.children[0] if root.children else None)


def update_query(root: PlanNode) -> PlanNode | None:
    target = target_plan(root)
    if target is None:
        return None
    targets = plan_output(target)
    values = [[v] for v in root.exprs("updateExpressions")]
    child = target
    if root.fields.get("condition"):
        child = PlanNode(
            cls="Filter",
            fields={"condition": root.fields["condition"]},
            children=[target],
            path=(*root.path, ("update-filter", None)),
        )
    return _assignments(targets, values, [child], root)


def delete_query(root: PlanNode) -> PlanNode | None:
    target = target_plan(root)
    if target is None or not root.fields.get("condition"):
        return target
    return PlanNode(
        cls="Filter",
        fields={"condition": root.fields["condition"]},
        children=[target],
        path=(*root.path, ("delete-filter", None)),
    )
