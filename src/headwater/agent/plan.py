"""Spark plan JSON -> a plain Python tree, plus the few JVM look-ups JSON lacks.

``LogicalPlan.toJSON()`` returns the whole tree in one py4j call as a pre-order
array: each entry has ``class`` and ``num-children``; fields that hold a child
plan or a child expression are integer positions; fields that hold expressions
are flattened pre-order arrays (a ``Seq[Expression]`` is an array of those);
plans held in fields (a CTAS ``query``) are flattened pre-order arrays too.

:func:`parse_plan` rebuilds the tree as :class:`PlanNode`; each node keeps the
``path`` to reach it from the root over py4j (``("child", i)`` or
``("field", name)``), so the listener can fetch the values JSON leaves ``null``
(paths of a ``HadoopFsRelation``, an insert's ``outputPath``) on exactly the
nodes that need them — see ``headwater.agent.capture``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "Expr",
    "PathStep",
    "PlanNode",
    "parse_expr",
    "parse_exprs",
    "parse_plan",
    "short_class",
]

PathStep = tuple[str, Any]

# Fields whose array value is a nested logical plan rather than expressions
# (``source`` and ``target`` of Delta's MERGE command, which are not its children).
_PLAN_FIELDS = frozenset({"query", "plan", "source", "target"})


@lru_cache(maxsize=2048)
def short_class(name: str) -> str:
    """``org.apache.spark.sql.catalyst.plans.logical.Project`` -> ``Project``.

    Memoised: a plan names a few dozen classes thousands of times.
    """
    return name.rsplit(".", 1)[-1].rstrip("$")


@dataclass
class Expr:
    """One expression node: class, scalar fields and child expressions."""

    cls: str
    fields: dict[str, Any]
    children: list[Expr] = field(default_factory=list)

    #: The plan of a subquery expression (``ScalarSubquery``, ``Exists``, ``ListQuery``);
    #: set by :meth:`PlanNode.exprs`, which owns the parsed subquery plans.
    plan: PlanNode | None = None

    @property
    def expr_id(self) -> int | None:
        """The ``exprId`` of an attribute or alias, else ``None``."""
        ident = self.fields.get("exprId")
        # Parsed JSON objects are dicts: checked as such (an ABC check costs ~4x more,
        # and this runs for every attribute of a plan).
        if isinstance(ident, dict) or isinstance(ident, Mapping):
            value = ident.get("id")
            return int(value) if value is not None else None
        return None

    @property
    def name(self) -> str | None:
        value = self.fields.get("name")
        return value if isinstance(value, str) else None

    def walk(self) -> Iterator[Expr]:
        """This expression and all below it, pre-order (iterative)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def references(self) -> list[Expr]:
        """Every ``AttributeReference`` inside this expression."""
        return [e for e in self.walk() if e.cls == "AttributeReference"]


@dataclass
class PlanNode:
    """One logical plan node; ``fields`` are the JSON fields minus child positions."""

    cls: str
    fields: dict[str, Any]
    children: list[PlanNode] = field(default_factory=list)
    path: tuple[PathStep, ...] = ()
    #: Plans held in fields (``query`` of a CTAS, a cached relation's plan) and the
    #: plans of subquery expressions (``subquery:0``, ``subquery:1``, ... in the order
    #: Spark's ``QueryPlan.subqueries`` lists them).
    inner: dict[str, PlanNode] = field(default_factory=dict)
    _parsed: dict[str, list[Expr]] = field(default_factory=dict, repr=False, compare=False)
    #: id() of a subquery's raw JSON plan -> its parsed plan (links Expr.plan).
    _subqueries: dict[int, PlanNode] = field(default_factory=dict, repr=False, compare=False)
    _key: str | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        """A stable identifier of this node within its plan (its JVM path)."""
        # Asked for many times per node (facts, visitors); the path never changes.
        if self._key is None:
            self._key = "/".join(f"{kind}:{value}" for kind, value in self.path) or "root"
        return self._key

    def walk(self) -> Iterator[PlanNode]:
        """This node, its children and inner plans, pre-order (iterative)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(list(node.inner.values())))
            stack.extend(reversed(node.children))

    def exprs(self, name: str) -> list[Expr]:
        """The expressions held in field ``name`` (one or a sequence); parsed once."""
        parsed = self._parsed.get(name)
        if parsed is None:
            parsed = self._parsed[name] = parse_exprs(self.fields.get(name))
            if self._subqueries:
                for expr in parsed:
                    for part in expr.walk():
                        raw = part.fields.get("plan")
                        if isinstance(raw, list):
                            part.plan = self._subqueries.get(id(raw))
        return parsed

    def output(self) -> list[Expr]:
        """The ``output`` attributes a leaf relation declares.

        ``HiveTableRelation`` serialises them as ``dataCols`` + ``partitionCols``.
        """
        if "output" not in self.fields and "dataCols" in self.fields:
            return self.exprs("dataCols") + self.exprs("partitionCols")
        return self.exprs("output")


def parse_plan(
    entries: Sequence[Mapping[str, Any]],
    path: tuple[PathStep, ...] = (),
    subqueries: bool = True,
) -> PlanNode:
    """Rebuild the tree from ``toJSON()``'s pre-order array.

    ``subqueries=False`` skips looking for subquery plans inside expressions: for a
    caller that knows the JSON text holds no ``"plan"`` key (a subquery expression
    serialises its plan under it), that look is wasted on every expression field.
    """
    if not entries:
        raise ValueError("empty plan JSON")
    node, end = _build_plan(entries, 0, path, subqueries)
    if end != len(entries):
        raise ValueError(f"plan JSON has {len(entries) - end} trailing entries")
    return node


def _build_plan(
    entries: Sequence[Mapping[str, Any]],
    start: int,
    path: tuple[PathStep, ...],
    subqueries: bool = True,
    key: str | None = None,
) -> tuple[PlanNode, int]:
    # Iterative would be nicer, but plan depth is bounded by Spark's own recursion;
    # we keep a simple recursive descent with an explicit position.
    entry = entries[start]
    count = int(entry.get("num-children", 0))
    fields: dict[str, Any] = {}
    inner: dict[str, PlanNode] = {}
    for name, value in entry.items():
        if name in ("class", "num-children"):
            continue
        if name in _PLAN_FIELDS and _looks_like_plan(value):
            inner[name] = parse_plan(value, (*path, ("field", name)), subqueries)
            continue
        fields[name] = value
    found: dict[int, PlanNode] = {}
    if subqueries:
        for value in fields.values():
            for raw in _subquery_plans(value):
                index = len(found)
                subplan = parse_plan(raw, (*path, ("subquery", index)))
                inner[f"subquery:{index}"] = subplan
                found[id(raw)] = subplan
    node = PlanNode(
        cls=short_class(str(entry["class"])),
        fields=fields,
        path=path,
        inner=inner,
        _subqueries=found,
        _key=key,
    )
    # Children's keys extend this node's (the same text PlanNode.key would join).
    prefix = f"{node.key}/" if path else ""
    position = start + 1
    for index in range(count):
        child, position = _build_plan(
            entries, position, (*path, ("child", index)), subqueries, f"{prefix}child:{index}"
        )
        node.children.append(child)
    return node, position


def _subquery_plans(value: Any) -> Iterator[list[Any]]:
    """Raw plans of the subquery expressions in one field, in expression pre-order.

    The order matches ``QueryPlan.subqueries`` on the JVM (fields in constructor
    order, each expression tree pre-order), so ``("subquery", i)`` path steps
    resolve to the same plan there.
    """
    if not isinstance(value, list) or not value:
        return
    if isinstance(value[0], list):
        for item in value:
            yield from _subquery_plans(item)
        return
    for entry in value:
        if (type(entry) is dict or isinstance(entry, Mapping)) and "plan" in entry and _looks_like_plan(entry["plan"]):
            yield entry["plan"]


def _looks_like_plan(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], Mapping)
        and "class" in value[0]
        and ".expressions." not in str(value[0]["class"])
    )


def parse_expr(entries: Sequence[Mapping[str, Any]]) -> Expr:
    """One expression from its flattened pre-order array."""
    expr, _ = _build_expr(entries, 0)
    return expr


def _build_expr(entries: Sequence[Mapping[str, Any]], start: int) -> tuple[Expr, int]:
    # The hottest loop of a capture (thousands of expression nodes per large plan):
    # copy the entry and drop two keys rather than filter every key.
    entry = entries[start]
    fields = dict(entry)
    cls = fields.pop("class")
    count = int(fields.pop("num-children", 0))
    expr = Expr(cls=short_class(str(cls)), fields=fields)
    position = start + 1
    children = expr.children
    for _ in range(count):
        child, position = _build_expr(entries, position)
        children.append(child)
    return expr, position


def parse_exprs(value: Any) -> list[Expr]:
    """Expressions from a field value: one flattened array, or an array of them."""
    if not isinstance(value, list) or not value:
        return []
    if isinstance(value[0], list):
        return [parse_expr(item) for item in value if item]
    if isinstance(value[0], Mapping) and "class" in value[0]:
        return [parse_expr(value)]
    return []
