"""Column lineage from ``exprId``s in the optimized plan.

Every attribute in a Spark plan carries an ``exprId``. An ``Alias`` creates a new
id from the ids it references, so lineage is a graph ``exprId -> upstream
exprIds`` with a transformation on each edge; walking it from the written
columns down to the ids a leaf relation declares gives the input fields.

Edges:

* DIRECT — IDENTITY (a column passed through or renamed), TRANSFORMATION
  (computed from it), AGGREGATION (inside an aggregate function); ``masking``
  when the value cannot be recovered (hashes, counts).
* INDIRECT — FILTER, JOIN, GROUP_BY, SORT, WINDOW (the columns a node's
  condition / keys read) and CONDITIONAL (the condition of a CASE/IF); they
  affect every written column, or the dataset as a whole when
  ``columnLineage.datasetLineageEnabled`` is set.

Scalar subqueries (``(SELECT max(x) FROM t)`` in a projection or a filter)
count as reading the columns their plan outputs; when Spark has merged several
of them into one plan returning a struct, only the struct field the expression
picks. Their plans are walked like the rest, so a subquery's own filters and
groupings are INDIRECT dependencies too.

Commands that write assigned values rather than a projection (a MERGE's
clauses, an UPDATE's SET) are handed over as an :data:`ASSIGNMENTS` node,
which no Spark plan holds: its ``output`` attributes are the written columns
and ``assignments`` lists, per column, the value expressions written into it;
each is an edge described by the value's own SQL text. ``conditions`` lists, per
column, the conditions under which values are written into it (a MERGE
clause's ``WHEN MATCHED AND ...``): INDIRECT CONDITIONAL, as a CASE's are.

The walk is iterative with a visited set, so diamond-shaped plans (self joins,
unions) cost linear time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from headwater.agent.expressions import expr_sql, node_description
from headwater.agent.plan import Expr, PlanNode, parse_exprs

__all__ = ["ASSIGNMENTS", "DerivedLeaf", "Transformation", "column_lineage", "compose", "node_output"]

_MASKING_FUNCTIONS = frozenset({"Md5", "Sha1", "Sha2", "Murmur3Hash", "XxHash64", "Crc32"})
_MASKING_AGGREGATES = frozenset({"Count", "ApproximateCountDistinct", "CountIf"})
_CONDITIONALS = frozenset({"CaseWhen", "If", "Coalesce", "NullIf", "Nvl", "Nvl2"})
#: The class of the node that writes assigned values (see the module doc).
ASSIGNMENTS = "Assignments"
_DIRECT_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}
# Plan class -> (INDIRECT subtype, fields holding the columns it reads).
_INDIRECT_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Filter": ("FILTER", ("condition",)),
    "Join": ("JOIN", ("condition",)),
    "Aggregate": ("GROUP_BY", ("groupingExpressions",)),
    "Sort": ("SORT", ("order",)),
    "Window": ("WINDOW", ("partitionSpec", "orderSpec")),
}


@dataclass(frozen=True)
class Transformation:
    """One OpenLineage column transformation; ``description`` is Spark's SQL text."""

    type: str
    subtype: str
    masking: bool = False
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "subtype": self.subtype}
        if self.description:
            out["description"] = self.description
        out["masking"] = self.masking
        return out


@dataclass
class _Graph:
    #: exprId -> [(upstream exprId, transformation)]
    edges: dict[int, list[tuple[int, Transformation]]] = field(default_factory=dict)
    #: (exprIds read, subtype, description) for every indirect dependency in the plan.
    indirect: list[tuple[set[int], str, str | None]] = field(default_factory=list)

    def add(self, target: int, source: int, transformation: Transformation) -> None:
        if target == source:
            return
        self.edges.setdefault(target, []).append((source, transformation))


def node_output(node: PlanNode) -> list[int]:
    """The exprIds a plan node outputs, in column order."""
    cls = node.cls
    if cls == "Project":
        return _ids(node.exprs("projectList"))
    if cls == "Aggregate":
        return _ids(node.exprs("aggregateExpressions"))
    if cls == "Window":
        child = node_output(node.children[0]) if node.children else []
        return child + _ids(node.exprs("windowExpressions"))
    if cls == "Join":
        join_type = str(node.fields.get("joinType", {}).get("object", ""))
        left = node_output(node.children[0]) if node.children else []
        if "LeftSemi" in join_type or "LeftAnti" in join_type:
            return left
        right = node_output(node.children[1]) if len(node.children) > 1 else []
        return left + right
    if cls in ("Union", "Intersect", "Except"):
        return node_output(node.children[0]) if node.children else []
    if cls == "Generate":
        child = node_output(node.children[0]) if node.children else []
        return child + _ids(node.exprs("generatorOutput"))
    if "output" in node.fields or "dataCols" in node.fields:
        return _ids(node.output())
    if node.children:
        return node_output(node.children[0])
    if "query" in node.inner:
        return node_output(node.inner["query"])
    return []


def _ids(exprs: Iterable[Expr]) -> list[int]:
    return [e.expr_id for e in exprs if e.expr_id is not None]


def _merged_subquery_field(plan: PlanNode, ordinal: Any) -> set[int] | None:
    """The exprIds behind field ``ordinal`` of a merged scalar subquery's struct.

    Spark's ``MergeScalarSubqueries`` turns ``(SELECT max(x) FROM t)`` and
    ``(SELECT avg(y) FROM t)`` into one plan whose single output is
    ``named_struct('max(x)', max(x), 'avg(y)', avg(y))``, read with
    ``GetStructField``; ``None`` when the plan is not of that shape.
    """
    if plan.cls != "Project" or not isinstance(ordinal, int):
        return None
    projected = plan.exprs("projectList")
    if len(projected) != 1 or projected[0].cls != "Alias" or not projected[0].children:
        return None
    struct = projected[0].children[0]
    if struct.cls != "CreateNamedStruct" or 2 * ordinal + 1 >= len(struct.children):
        return None
    return _value_ids(struct.children[2 * ordinal + 1])


def _value_ids(expr: Expr) -> set[int]:
    """exprIds an expression reads: its attributes and the columns its subqueries return."""
    ids: set[int] = set()
    stack = [expr]
    while stack:
        current = stack.pop()
        if current.cls == "AttributeReference":
            if current.expr_id is not None:
                ids.add(current.expr_id)
            continue
        if current.cls == "GetStructField" and current.children:
            subquery = current.children[0]
            picked = None
            if subquery.plan is not None:
                picked = _merged_subquery_field(subquery.plan, current.fields.get("ordinal"))
            if picked is not None:
                ids |= picked
                stack.extend(subquery.children)  # outer references of a correlated subquery
                continue
        if current.plan is not None:
            ids.update(node_output(current.plan))
        stack.extend(current.children)
    return ids


def _direct_kind(expr: Expr, description: str | None = None) -> Transformation:
    classes = {e.cls for e in expr.walk()}
    if expr.cls == "AttributeReference":
        return Transformation("DIRECT", "IDENTITY", False, description)
    if "AggregateExpression" in classes:
        masking = bool(classes & _MASKING_AGGREGATES) or bool(classes & _MASKING_FUNCTIONS)
        return Transformation("DIRECT", "AGGREGATION", masking, description)
    return Transformation("DIRECT", "TRANSFORMATION", bool(classes & _MASKING_FUNCTIONS), description)


def _named_expression_edges(graph: _Graph, expr: Expr) -> None:
    """Edges for one Alias (a new column computed from others)."""
    if expr.cls != "Alias" or expr.expr_id is None or not expr.children:
        return
    _value_edges(graph, expr.expr_id, expr.children[0], expr_sql(expr))


def _value_edges(graph: _Graph, target: int, body: Expr, description: str) -> None:
    """Edges from column ``target`` to what the expression ``body`` it takes reads."""
    kind = _direct_kind(body, description)
    conditional_ids: set[int] = set()
    value_ids: set[int] = set()
    # CASE/IF: attributes in conditions are INDIRECT CONDITIONAL, values DIRECT.
    stack = [body]
    while stack:
        current = stack.pop()
        if current.cls == "CaseWhen":
            # children alternate condition, value, ...; an odd count ends with ELSE.
            for index, child in enumerate(current.children):
                is_condition = index % 2 == 0 and index < len(current.children) - (
                    len(current.children) % 2
                )
                if is_condition:
                    conditional_ids |= _value_ids(child)
                else:
                    stack.append(child)
        elif current.cls == "If" and len(current.children) == 3:
            cond, then, other = current.children
            conditional_ids |= _value_ids(cond)
            stack.extend([then, other])
        elif current.cls in _CONDITIONALS:
            # coalesce(a, b): which argument is taken depends on the others being null.
            conditional_ids |= _refs(current.children)
            stack.extend(current.children)
        elif current.cls == "AttributeReference":
            if current.expr_id is not None:
                value_ids.add(current.expr_id)
        elif current.plan is not None or current.cls == "GetStructField":
            value_ids |= _value_ids(current)
        else:
            stack.extend(current.children)
    for ident in value_ids:
        graph.add(target, ident, kind)
    for ident in conditional_ids:
        graph.add(target, ident, Transformation("INDIRECT", "CONDITIONAL", False, description))


def _assignment_edges(graph: _Graph, node: PlanNode) -> None:
    """Edges of an :data:`ASSIGNMENTS` node (see the module doc)."""
    conditions = node.fields.get("conditions") or []
    assignments = node.fields.get("assignments", [])
    for index, (target, values) in enumerate(zip(_ids(node.output()), assignments, strict=False)):
        for value in parse_exprs(values):
            _value_edges(graph, target, value, expr_sql(value))
        for condition in parse_exprs(conditions[index] if index < len(conditions) else None):
            conditional = Transformation("INDIRECT", "CONDITIONAL", False, expr_sql(condition))
            for source in _value_ids(condition):
                graph.add(target, source, conditional)


def _build_graph(root: PlanNode) -> _Graph:
    graph = _Graph()
    for node in root.walk():
        for list_field in ("projectList", "aggregateExpressions", "windowExpressions"):
            for expr in node.exprs(list_field):
                _named_expression_edges(graph, expr)
        if node.cls == ASSIGNMENTS:
            _assignment_edges(graph, node)
        if node.cls == "Generate":
            # explode(split(value)) AS word: each generated column is computed from
            # the columns the generator reads.
            generator = node.exprs("generator")
            kind = Transformation(
                "DIRECT", "TRANSFORMATION", False, ", ".join(expr_sql(g) for g in generator) or None
            )
            for target in _ids(node.exprs("generatorOutput")):
                for source in _refs(generator):
                    graph.add(target, source, kind)
        read = _INDIRECT_FIELDS.get(node.cls)
        if read is not None:
            subtype, field_names = read
            ids: set[int] = set()
            for name in field_names:
                ids |= _refs(node.exprs(name))
            graph.indirect.append((ids, subtype, node_description(node)))
        if node.cls in ("Union", "Intersect", "Except") and len(node.children) > 1:
            first = node_output(node.children[0])
            for other in node.children[1:]:
                for target, source in zip(first, node_output(other), strict=False):
                    graph.add(target, source, Transformation("DIRECT", "IDENTITY"))
        if node.cls == "MergeRows":
            _merge_rows_edges(graph, node)
        elif node.cls == "Expand":
            _expand_edges(graph, node)
        cached = node.inner.get("cached")
        if cached is not None:
            for target, source in zip(_ids(node.output()), node_output(cached), strict=False):
                graph.add(target, source, Transformation("DIRECT", "IDENTITY"))
    graph.indirect = [item for item in graph.indirect if item[0]]
    return graph


#: ``MergeRows`` fields holding its instructions (``Keep``, ``Split``, ``Discard``).
_MERGE_INSTRUCTIONS = ("matchedInstructions", "notMatchedInstructions", "notMatchedBySourceInstructions")


def _positional_edges(graph: _Graph, outputs: Sequence[int], values: Sequence[Expr | None]) -> None:
    """Edges from each output column to what the value in its position reads."""
    for target, value in zip(outputs, values, strict=False):
        if value is None:
            continue
        kind = _direct_kind(value)
        for source in _value_ids(value):
            graph.add(target, source, kind)


def _merge_rows_edges(graph: _Graph, node: PlanNode) -> None:
    """Edges for the rows a MERGE writes: each instruction gives, for every output
    column, the expression (a child of the instruction, by position) whose value it
    writes — from the target row or the source row — so a column derives from all
    of them."""
    outputs = _ids(node.exprs("output"))
    for name in _MERGE_INSTRUCTIONS:
        for instruction in node.exprs(name):
            for key in ("output", "otherOutput"):
                positions = instruction.fields.get(key)
                if isinstance(positions, list):
                    children = instruction.children
                    values = [children[p] if isinstance(p, int) and p < len(children) else None for p in positions]
                    _positional_edges(graph, outputs, values)


def _expand_edges(graph: _Graph, node: PlanNode) -> None:
    """Edges for ``Expand`` (an UPDATE's delete and insert rows, grouping sets): each
    projection gives a value for every output column."""
    outputs = _ids(node.exprs("output"))
    for projection in node.fields.get("projections") or []:
        _positional_edges(graph, outputs, parse_exprs(projection))


def _refs(exprs: Sequence[Expr]) -> set[int]:
    ids: set[int] = set()
    for expr in exprs:
        ids |= _value_ids(expr)
    return ids


def compose(outer: Transformation, inner: Transformation) -> Transformation:
    """The transformation of a path: the stronger DIRECT kind wins; INDIRECT stays."""
    masking = outer.masking or inner.masking
    if outer.type == "INDIRECT":
        return Transformation("INDIRECT", outer.subtype, masking, outer.description)
    if inner.type == "INDIRECT":
        return Transformation("INDIRECT", inner.subtype, masking, inner.description)
    outer_rank = _DIRECT_RANK.get(outer.subtype, 1)
    inner_rank = _DIRECT_RANK.get(inner.subtype, 1)
    if inner_rank > outer_rank:
        return Transformation("DIRECT", inner.subtype, masking, inner.description)
    if inner_rank < outer_rank:
        return Transformation("DIRECT", outer.subtype, masking, outer.description)
    return Transformation("DIRECT", outer.subtype, masking, outer.description or inner.description)


#: An input field (namespace, name, field) and how a leaf's value derives from it.
DerivedLeaf = tuple[tuple[str, str, str], Transformation]


def _sources(
    graph: _Graph,
    start: int,
    leaves: Mapping[int, tuple[str, str, str]],
    derived: Mapping[int, Sequence[DerivedLeaf]],
) -> dict[tuple[str, str, str], set[Transformation]]:
    """Input fields reached from ``start``, with the transformations on each path."""
    found: dict[tuple[str, str, str], set[Transformation]] = {}
    identity = Transformation("DIRECT", "IDENTITY")
    stack: list[tuple[int, Transformation]] = [(start, identity)]
    visited: set[tuple[int, Transformation]] = set()
    while stack:
        ident, via = stack.pop()
        if (ident, via) in visited:
            continue
        visited.add((ident, via))
        if ident in leaves:
            found.setdefault(leaves[ident], set()).add(via)
        for source, transformation in derived.get(ident, ()):
            found.setdefault(source, set()).add(compose(via, transformation))
        for source, transformation in graph.edges.get(ident, []):
            stack.append((source, compose(via, transformation)))
    return found


def column_lineage(
    query: PlanNode,
    output_names: Sequence[str],
    leaves: Mapping[int, tuple[str, str, str]],
    dataset_lineage: bool = False,
    derived: Mapping[int, Sequence[DerivedLeaf]] | None = None,
    row_sources: Sequence[DerivedLeaf] = (),
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """``(fields, dataset)`` of the columnLineage facet for the rows ``query`` writes.

    ``leaves`` maps input exprIds to ``(namespace, name, field)``. ``output_names``
    are the written column names in order (they may differ from the query's
    attribute names, e.g. for ``insertInto``). ``derived`` maps input exprIds
    whose value the source computed from several fields (a JDBC query's output
    columns) to those fields, each with its transformation; ``row_sources`` are
    INDIRECT dependencies a source applied to all its rows (its query's filters
    and joins), which count like the plan's own.
    """
    derived = derived or {}
    graph = _build_graph(query)
    outputs = node_output(query)
    indirect: dict[tuple[str, str, str], set[Transformation]] = {}
    for source, transformation in row_sources:
        indirect.setdefault(source, set()).add(transformation)
    for ids, subtype, description in graph.indirect:
        for ident in ids:
            for source, vias in _sources(graph, ident, leaves, derived).items():
                masking = any(v.masking for v in vias)
                indirect.setdefault(source, set()).add(
                    Transformation("INDIRECT", subtype, masking, description)
                )
    fields: dict[str, list[dict[str, Any]]] = {}
    for name, ident in zip(output_names, outputs, strict=False):
        direct = _sources(graph, ident, leaves, derived)
        merged: dict[tuple[str, str, str], set[Transformation]] = {
            k: set(v) for k, v in direct.items()
        }
        if not dataset_lineage:
            for source, kinds in indirect.items():
                merged.setdefault(source, set()).update(kinds)
        if merged:
            fields[name] = _input_fields(merged)
    dataset = _input_fields(indirect) if dataset_lineage else []
    return fields, dataset


def _input_fields(
    sources: Mapping[tuple[str, str, str], set[Transformation]],
) -> list[dict[str, Any]]:
    out = []
    for (namespace, name, column), kinds in sorted(sources.items()):
        ordered = sorted(kinds, key=lambda t: (t.type, t.subtype, t.masking, t.description or ""))
        out.append(
            {
                "namespace": namespace,
                "name": name,
                "field": column,
                "transformations": [t.to_json() for t in ordered],
            }
        )
    return out
