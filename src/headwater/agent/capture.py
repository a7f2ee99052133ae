"""One action's plan as plain Python: a ``toJSON`` of the plan, then the JVM facts JSON lacks.

:func:`capture_plan` serialises the optimized plan once and asks the JVM only
about the nodes :data:`~headwater.agent.sources.registry.NODE_LOOKUPS` names, with as few
py4j round trips as it can: the leaves of each plan (the root plan, a
CTAS query, each subquery, each followed cache) come in one ``collectLeaves()``
call and are picked by their pre-order position, and a :class:`RelationCache`
remembers relations across actions. The result, a :class:`PlanCapture`, is
plain data: recordable as a golden fixture and rebuilt without a JVM.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from headwater.agent.plan import PlanNode, parse_plan
from headwater.agent.sources.registry import NODE_LOOKUPS, base_relation_facts, relation_facts

__all__ = [
    "CTAS_COMMANDS",
    "JvmFacts",
    "PlanCapture",
    "RelationCache",
    "capture_plan",
    "resolve",
]

logger = logging.getLogger(__name__)

#: node.key -> facts for that node (plain values only).
JvmFacts = dict[str, dict[str, Any]]

try:  # the server's JSON library, when installed beside the agent: ~2x faster here
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - the standard library does the same, slower
    _fast_loads = None


def _may_hold_subqueries(text: str) -> bool:
    """Whether a plan's JSON text can hold a subquery expression (which serialises
    its plan under a ``"plan"`` key); when not, parsing skips looking for one."""
    return '"plan"' in text


def _loads(text: str) -> Any:
    """A plan's JSON text as Python values: ``json.loads``'s result, faster when it can be.

    orjson gives the same values for the JSON Spark writes; what it refuses
    (``NaN``, integers over 64 bits, lone surrogates) goes to ``json.loads``.
    """
    if _fast_loads is not None:
        try:
            return _fast_loads(text)
        except ValueError:
            pass
    return json.loads(text)


class PlanCapture:
    """A plan tree plus the JVM facts for its nodes.

    ``raw`` keeps the JSON each tree was parsed from (the root plan under
    ``"root"``, followed cached plans under their node's key), so a capture can be
    recorded as a golden fixture and rebuilt without a JVM.
    """

    def __init__(self, tree: PlanNode, facts: JvmFacts, raw: dict[str, Any] | None = None) -> None:
        self.tree = tree
        self.facts = facts
        self.raw = raw or {}

    def facts_for(self, node: PlanNode) -> dict[str, Any]:
        return self.facts.get(node.key, {})

    def to_json(self) -> dict[str, Any]:
        """A recordable form (used for golden fixtures)."""
        return {"plans": self.raw, "facts": self.facts}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlanCapture:
        """Rebuild a recorded capture (see :meth:`to_json`)."""
        plans = data["plans"]
        tree = parse_plan(plans["root"])
        if "field:query" in plans:
            tree.inner["query"] = parse_plan(plans["field:query"], _QUERY_PATH)
        pending = True
        while pending:
            pending = False
            for node in list(tree.walk()):
                cached_key = f"{node.key}/cached:None" if node.path else "cached:None"
                if node.cls == "InMemoryRelation" and "cached" not in node.inner and cached_key in plans:
                    node.inner["cached"] = parse_plan(plans[cached_key], (*node.path, ("cached", None)))
                    pending = True
        return cls(tree, data.get("facts", {}), plans)


def resolve(root: Any, path: tuple[tuple[str, Any], ...], cache: dict[tuple, Any]) -> Any:
    """The JVM object at ``path`` below ``root``; prefixes are cached in ``cache``."""
    current = root
    for depth in range(len(path)):
        prefix = path[: depth + 1]
        if prefix in cache:
            current = cache[prefix]
            continue
        kind, value = path[depth]
        if kind == "child":
            current = current.children().apply(value)
        elif kind == "field":
            current = getattr(current, value)()
        elif kind == "cached":
            current = current.cacheBuilder().logicalPlan()
        elif kind == "subquery":
            current = current.subqueries().apply(value)
        else:  # pragma: no cover - paths are built by parse_plan/capture_plan only
            raise ValueError(f"unknown path step {kind!r}")
        cache[prefix] = current
    return current


#: Commands whose ``query`` the optimized plan still holds in analyzed form.
CTAS_COMMANDS = frozenset(
    {
        "CreateDataSourceTableAsSelectCommand",
        "CreateHiveTableAsSelectCommand",
        "OptimizedCreateHiveTableAsSelectCommand",
    }
)
_QUERY_PATH = (("field", "query"),)


class RelationCache:
    """JVM facts of leaf relations, shared across actions (bounded).

    Keyed by the relation's own JSON, whose output ``exprId`` values are unique to one
    relation instance in the JVM: the same key means the same (immutable) relation
    object, so its paths cannot have changed. A pipeline that reads the same
    DataFrame in many actions asks the JVM about it once.
    """

    def __init__(self, max_entries: int = 512) -> None:
        self._entries: dict[str, dict[str, Any]] = {}
        self._max = max_entries
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, facts: dict[str, Any]) -> None:
        with self._lock:
            if len(self._entries) >= self._max:
                self._entries.clear()
            self._entries[key] = facts


#: Leaf classes whose facts depend only on the (immutable) relation object.
_CACHEABLE = frozenset({"LogicalRelation", "HiveTableRelation", "LogicalRDD"})


def _relation_key(node: PlanNode) -> str:
    return node.cls + json.dumps(node.fields, sort_keys=True, default=str)


def _shared_relation_key(node: PlanNode, semantic_hash: int) -> str:
    """A key for the relation object under a ``LogicalRelation`` read more than once.

    Spark gives each repeated read of one DataFrame in a query (a self-union, a
    self-join) new ``exprId`` values but keeps the relation object. The node's
    ``semanticHash()`` hashes its canonical form — the relation (a file relation
    hashes its file index, which hashes its root paths; its schema, format and
    options) with the ``exprId`` values normalised away — so together with the
    columns it declares it finds the relation again with one call on the node
    instead of three.
    """
    columns = [(a.name, a.fields.get("dataType")) for a in node.output()]
    return f"{semantic_hash}:{json.dumps(columns, default=str)}"


def _plan_roots(tree: PlanNode) -> list[PlanNode]:
    """``tree`` and every plan held inside it (CTAS query, subqueries), not cached plans."""
    roots = [tree]
    stack = [tree]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        for key, inner in node.inner.items():
            if key != "cached":
                roots.append(inner)
                stack.append(inner)
    return roots


def _children_preorder(root: PlanNode) -> list[PlanNode]:
    """Nodes reached through ``children`` only, pre-order (as ``TreeNode.foreach``)."""
    order: list[PlanNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(node.children))
    return order


def capture_plan(
    jplan: Any,
    max_cached_depth: int = 8,
    optimize: Callable[[Any], Any] | None = None,
    relations: RelationCache | None = None,
    relation_hashes: Callable[[Any], list[int] | None] | None = None,
    root_lookup: Callable[[Any], dict[str, Any]] | None = None,
) -> PlanCapture:
    """Serialise ``jplan`` once, then fetch JVM facts for the nodes that need them.

    ``root_lookup``, when given, fetches the root's facts in place of the
    look-up registered for its class (a write whose table state was pinned).

    py4j round trips are the cost here: the leaves of each plan come in
    one ``collectLeaves()`` call and are picked by their pre-order position,
    instead of walking ``children()`` node by node; relations seen before (same
    JSON, so the same JVM object) come from ``relations`` without any call.
    A relation read again under new ``exprId`` values is found in ``relations``
    by its ``semanticHash()``; ``relation_hashes`` (see
    :class:`~headwater.agent.jvm.RelationHashes`) fetches those of all of a plan's
    ``LogicalRelation`` leaves in one chain of calls, else each is asked alone.

    Cached relations (``InMemoryRelation``) are followed to the plan that filled
    the cache, which becomes the node's ``cached`` inner plan. A CTAS keeps its
    query analyzed (not optimized) inside the optimized plan; with ``optimize``
    (the session optimizer) that query is replaced by its optimized form, whose
    inferred filters and pruned columns are what the action really read.
    """
    root_text = jplan.toJSON()
    root_json = _loads(root_text)
    tree = parse_plan(root_json, subqueries=_may_hold_subqueries(root_text))
    raw: dict[str, Any] = {"root": root_json}
    facts: JvmFacts = {}
    cache: dict[tuple, Any] = {}
    if optimize is not None and tree.cls in CTAS_COMMANDS and "query" in tree.inner:
        try:
            query = optimize(jplan.query())
            query_text = query.toJSON()
            query_json = _loads(query_text)
            tree.inner["query"] = parse_plan(query_json, _QUERY_PATH, _may_hold_subqueries(query_text))
            raw["field:query"] = query_json
            cache[_QUERY_PATH] = query
        except Exception:
            logger.debug("could not optimize the CTAS query", exc_info=True)
    pending = [tree]
    depth = 0
    while pending and depth <= max_cached_depth:
        next_round: list[PlanNode] = []
        for subtree in pending:
            for plan_root in _plan_roots(subtree):
                _fetch_facts(
                    jplan, plan_root, facts, cache, relations, raw, next_round, relation_hashes,
                    root_lookup if plan_root is tree else None,
                )
        pending = next_round
        depth += 1
    return PlanCapture(tree, facts, raw)


def _fetch_facts(
    jplan: Any,
    plan_root: PlanNode,
    facts: JvmFacts,
    cache: dict[tuple, Any],
    relations: RelationCache | None,
    raw: dict[str, Any],
    next_round: list[PlanNode],
    relation_hashes: Callable[[Any], list[int] | None] | None = None,
    root_lookup: Callable[[Any], dict[str, Any]] | None = None,
) -> None:
    """Facts for the nodes of one plan (children only; inner plans are their own roots);
    ``root_lookup`` for ``plan_root`` itself, when given."""
    wanted: list[tuple[PlanNode, int | None]] = []
    #: node.key -> its position among the plan's LogicalRelation leaves
    relation_position: dict[str, int] = {}
    leaf_count = 0
    for node in _children_preorder(plan_root):
        index = None
        if not node.children:
            index = leaf_count
            leaf_count += 1
            if node.cls == "LogicalRelation":
                relation_position[node.key] = len(relation_position)
        if (node.cls == "InMemoryRelation" and "cached" not in node.inner) or node.cls in NODE_LOOKUPS:
            wanted.append((node, index))
    if not wanted:
        return
    leaves: list[Any] = []  # [the JVM leaves Seq] once fetched
    hashes: list[list[int] | None] = []  # [semanticHash of each LogicalRelation leaf] once fetched

    def jvm_leaves() -> Any:
        if not leaves:
            found = resolve(jplan, plan_root.path, cache).collectLeaves()
            # A count that differs means the JSON and the JVM disagree on the tree:
            # fall back to walking the path rather than pick a wrong leaf.
            leaves.append(found if int(found.size()) == leaf_count else None)
        return leaves[0]

    def jvm_node(node: PlanNode, index: int | None) -> Any:
        if index is not None and jvm_leaves() is not None:
            return leaves[0].apply(index)
        return resolve(jplan, node.path, cache)

    def semantic_hash(node: PlanNode, index: int | None) -> tuple[int, Any]:
        """The node's ``semanticHash()`` (from the batch when there is one) and its JVM
        node if that had to be fetched."""
        if not hashes:
            found = None
            of_plan = getattr(relation_hashes, "of_plan", None)
            if of_plan is not None:
                # One call for the plan's leaf count and all its relations' hashes;
                # a count that differs from the JSON's falls back as below.
                counted = of_plan(resolve(jplan, plan_root.path, cache))
                if counted is not None and counted[0] == leaf_count:
                    found = counted[1]
            if found is None:
                seq = jvm_leaves() if relation_hashes is not None else None
                found = relation_hashes(seq) if seq is not None and relation_hashes is not None else None
            hashes.append(found if found is not None and len(found) == len(relation_position) else None)
        batch = hashes[0]
        position = relation_position.get(node.key)
        if batch is not None and position is not None:
            return batch[position], None
        jnode = jvm_node(node, index)
        return int(jnode.semanticHash()), jnode

    for node, index in wanted:
        if node.cls == "InMemoryRelation":
            try:
                cached_path = (*node.path, ("cached", None))
                cached = jvm_node(node, index).cacheBuilder().logicalPlan()
                cache[cached_path] = cached
                cached_text = cached.toJSON()
                cached_json = _loads(cached_text)
                inner = parse_plan(cached_json, cached_path, _may_hold_subqueries(cached_text))
                raw[inner.key] = cached_json
                node.inner["cached"] = inner
                next_round.append(inner)
            except Exception:
                logger.debug("could not follow cached relation %s", node.key, exc_info=True)
            continue
        key = _relation_key(node) if relations is not None and node.cls in _CACHEABLE else None
        if key is not None:
            known = relations.get(key)  # type: ignore[union-attr]
            if known is not None:
                facts[node.key] = known
                continue
        try:
            if node.cls == "LogicalRelation" and relations is not None and not isinstance(
                node.fields.get("catalogTable"), dict
            ):
                hashed, jnode = semantic_hash(node, index)
                shared = _shared_relation_key(node, hashed)
                found_facts = relations.get(shared)
                if found_facts is None:
                    jnode = jnode if jnode is not None else jvm_node(node, index)
                    found_facts = base_relation_facts(jnode.relation())
                relations.put(shared, found_facts)
                facts[node.key] = found_facts
                relations.put(key, found_facts)  # type: ignore[arg-type]
                continue
            jnode = jvm_node(node, index)
            if node.cls == "LogicalRelation":
                found_facts = relation_facts(jnode, node.fields)
            elif node is plan_root and root_lookup is not None:
                found_facts = root_lookup(jnode)
            else:
                found_facts = NODE_LOOKUPS[node.cls](jnode)
            facts[node.key] = found_facts
            if key is not None:
                relations.put(key, found_facts)  # type: ignore[union-attr]
        except Exception:
            logger.debug("JVM look-up failed for %s at %s", node.cls, node.key, exc_info=True)
