"""JVM facts about an action beyond its plan's nodes, fetched over py4j.

:class:`RelationHashes` hashes a plan's relations in one call;
:func:`executed_plan_facts` reads the physical plan's node name and write
metrics; :func:`nested_execution_root` relates a nested insert to its command;
:class:`CatalogLookup` reads table metadata by name. (The look-ups of single
plan nodes belong to their source family, see :mod:`headwater.agent.sources`.)
Each py4j call costs ~0.1-0.5 ms, so every look-up asks for as little as it
can. Everything returned is plain Python. Every look-up is guarded by its
caller: a missing fact means a less complete event, never an exception into
the job.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from headwater.agent.py4j.chains import ChainUnavailable, JvmChain, class_name, java_array
from headwater.agent.sources.jvm_common import option, table_location

__all__ = [
    "CatalogLookup",
    "RelationHashes",
    "executed_plan_facts",
    "execution_ids",
    "execution_input_metrics",
]

logger = logging.getLogger(__name__)


class RelationHashes:
    """``semanticHash()`` of all ``LogicalRelation`` leaves of a plan in one py4j call.

    Asking each leaf costs two round trips (the leaf, then its hash); a plan that
    reads a DataFrame in twelve union branches asks 24 times per action.
    Instead the JVM maps the leaves itself. :meth:`of_plan` runs
    ``plan.collectLeaves().map(leafHash).mkString(",")`` as one
    :class:`~headwater.agent.py4j.chains.JvmChain`, where ``leafHash`` gives a
    relation's ``semanticHash()`` and ``-`` for any other leaf, so the answer also
    tells how many leaves the JVM sees; calling an instance on a leaves ``Seq``
    runs ``leaves.filter(isRelation).map(semanticHash).mkString(",")`` (three
    calls). The functions are ``scala.Function1`` instances the JVM makes from
    method handles (``MethodHandleProxies``) — no code of ours runs in the JVM,
    and they are built once per agent.

    Both return ``None`` when the JVM cannot do this; callers then ask each leaf.
    """

    def __init__(self, jvm: Any) -> None:
        self._jvm = jvm
        self._functions: tuple[Any, Any, Any] | None = None
        self._unavailable = False
        self._chain_unavailable = False
        # Scala 2.13 (Spark 4) maps collections directly; Scala 2.12 (Spark 3.5)
        # needs an implicit builder for that, so its chain maps an iterator.
        self._chains = (
            JvmChain(
                ("org.apache.spark.sql.catalyst.trees.TreeNode", "collectLeaves", ()),
                ("scala.collection.IterableOps", "map", (("scala.Function1", self._leaf_hash),)),
                ("scala.collection.IterableOnceOps", "mkString", (("java.lang.String", ","),)),
            ),
            JvmChain(
                ("org.apache.spark.sql.catalyst.trees.TreeNode", "collectLeaves", ()),
                ("scala.collection.IterableLike", "iterator", ()),
                ("scala.collection.Iterator", "map", (("scala.Function1", self._leaf_hash),)),
                ("scala.collection.TraversableOnce", "mkString", (("java.lang.String", ","),)),
            ),
        )

    def _build(self) -> tuple[Any, Any, Any]:
        jvm = self._jvm
        for_name = jvm.java.lang.Class.forName
        method_type = jvm.java.lang.invoke.MethodType.methodType
        handles = jvm.java.lang.invoke.MethodHandles
        lookup = handles.publicLookup()
        as_function = jvm.java.lang.invoke.MethodHandleProxies.asInterfaceInstance
        function1 = for_name("scala.Function1")
        java_object = for_name("java.lang.Object")
        semantic_hash = lookup.findVirtual(
            for_name("org.apache.spark.sql.catalyst.plans.QueryPlan"),
            "semanticHash",
            method_type(jvm.java.lang.Integer.TYPE),
        )
        is_relation = lookup.findVirtual(
            for_name("java.lang.Class"),
            "isInstance",
            method_type(jvm.java.lang.Boolean.TYPE, java_object),
        ).bindTo(for_name("org.apache.spark.sql.execution.datasources.LogicalRelation"))
        # leaf -> its semanticHash() if it is a LogicalRelation, else "-"
        to_object = method_type(java_object, java_object)
        other = handles.constant(java_object, "-")
        other = handles.dropArguments(other, 0, java_array(jvm, "java.lang.Class", [java_object]))
        leaf_hash = handles.guardWithTest(is_relation, semantic_hash.asType(to_object), other)
        return (
            as_function(function1, is_relation),
            as_function(function1, semantic_hash),
            as_function(function1, leaf_hash),
        )

    def _functions_built(self) -> tuple[Any, Any, Any]:
        if self._functions is None:
            self._functions = self._build()
        return self._functions

    def _leaf_hash(self, jvm: Any) -> Any:
        return self._functions_built()[2]

    def of_plan(self, plan: Any) -> tuple[int, list[int]] | None:
        """``(number of leaves, hashes of its LogicalRelation leaves in leaf order)``."""
        if self._chain_unavailable:
            return None
        for chain in self._chains:
            try:
                parts = str(chain(plan)).split(",")
            except ChainUnavailable:
                continue  # this Scala's collections: the next chain
            except Exception:
                logger.debug("relation hashes of a plan failed", exc_info=True)
                return None
            self._chains = (chain,)
            return len(parts), [int(part) for part in parts if part != "-"]
        self._chain_unavailable = True
        return None

    def __call__(self, leaves: Any) -> list[int] | None:
        if self._unavailable:
            return None
        try:
            is_relation, semantic_hash, _ = self._functions_built()
            try:
                text = str(leaves.filter(is_relation).map(semantic_hash).mkString(","))
            except Exception:
                # Scala 2.12: a Seq maps with an implicit builder; its iterator does not.
                text = str(leaves.iterator().filter(is_relation).map(semantic_hash).mkString(","))
            return [int(part) for part in text.split(",")] if text else []
        except Exception:
            # Not this JVM (another Scala or Spark version): ask leaf by leaf from now on.
            logger.debug("relation hashes in one call are not available", exc_info=True)
            self._unavailable = True
            return None


def executed_plan_facts(qe: Any) -> dict[str, Any]:
    """Job-name node and write metrics from the executed (physical) plan."""
    facts: dict[str, Any] = {}
    plan = qe.executedPlan()
    name = str(plan.nodeName())
    if name.startswith("WholeStageCodegen"):
        plan = plan.child()
        name = str(plan.nodeName())
    facts["node_name"] = name
    # The job name keeps the listener's node name; write metrics live in the
    # command node, which adaptive execution wraps (AdaptiveSparkPlan -> final
    # plan -> ResultQueryStage -> ...). The walk goes by node name — one py4j
    # call per level where a class name takes two — and only the node
    # found is checked by class.
    for _ in range(6):
        if name == "AdaptiveSparkPlan":
            plan = plan.executedPlan()
        elif name.endswith("QueryStage"):
            plan = plan.plan()
        elif name.startswith("WholeStageCodegen"):
            plan = plan.child()
        else:
            break
        name = str(plan.nodeName())
    # DataWritingCommandExec names itself "Execute <command>" (so does the
    # ExecutedCommandExec of other commands, which has no write metrics).
    if name.startswith("Execute ") and str(
        class_name(plan)
    ).endswith("DataWritingCommandExec"):
        facts.update(_write_metrics(plan))
    return facts


_OBJECT = "java.lang.Object"
_WRITE_METRICS_TEXT = JvmChain(
    ("org.apache.spark.sql.execution.command.DataWritingCommandExec", "cmd", ()),
    ("org.apache.spark.sql.execution.command.DataWritingCommand", "metrics", ()),
    (_OBJECT, "toString", ()),
)
#: One entry of a metrics map's text: ``numFiles -> SQLMetric(id: 1, name: Some(...), value: 2)``.
_METRIC_TEXT = re.compile(r"(\w+) -> SQLMetric\(id: (-?\d+), name: [^\n]*?, value: (-?\d+)\)")
_WRITE_METRICS = ("numOutputRows", "numOutputBytes", "numFiles")


def _write_metrics(plan: Any) -> dict[str, int]:
    """A write's metrics, read from the text of its metrics map (one py4j call, not
    eight); asked metric by metric if that text is not as expected."""
    try:
        found = {key: (int(ident), int(value)) for key, ident, value
                 in _METRIC_TEXT.findall(str(_WRITE_METRICS_TEXT(plan)))}
    except ChainUnavailable:
        found = {}
    if not found:
        metrics = plan.cmd().metrics()
        for key in _WRITE_METRICS:
            try:
                metric = metrics.apply(key)
                found[key] = (int(metric.id()), int(metric.value()))
            except Exception:  # a command without that metric
                logger.debug("no %s metric", key, exc_info=True)
    facts = {key: found[key][1] for key in _WRITE_METRICS if key in found}
    if found:
        # Any one of the write's metrics names its execution in Spark's status store.
        key = next((key for key in _WRITE_METRICS if key in found), next(iter(found)))
        facts["write_metric_id"] = found[key][0]
    return facts


#: One metric of an execution in the status store: ``SQLPlanMetric(<name>,<id>,<type>)``.
_PLAN_METRIC_ID = re.compile(r",(-?\d+),\w+\)")


def execution_ids(store: Any, metric_id: int, recent: int = 16) -> tuple[int, int]:
    """``(execution id, root execution id)`` of the SQL execution that owns metric
    ``metric_id``; the two differ when it runs inside another one (a CTAS's insert).

    Spark reports a command and the insert it runs as two executions, both to
    every ``QueryExecutionListener``; only its status store relates them
    (``rootExecutionId``, Spark 3.4+), and only it names an action's execution
    (a ``QueryExecution``'s own ``id`` is not its execution's). The execution is
    found among the ``recent`` newest ones of ``store`` (the session's
    ``SQLAppStatusStore``) by the id of one of its metrics: about eight py4j
    calls, as the write's execution is the newest or nearly. ``LookupError`` if
    it is not there (yet).
    """
    count = int(store.executionsCount())
    start = max(count - recent, 0)
    executions = store.executionsList(start, count - start)
    for index in range(int(executions.size()) - 1, -1, -1):
        execution = executions.apply(index)
        ids = {int(found) for found in _PLAN_METRIC_ID.findall(str(execution.metrics().toString()))}
        if metric_id in ids:
            return int(execution.executionId()), int(execution.rootExecutionId())
    raise LookupError(f"no execution with metric {metric_id} among the {recent} newest")


def execution_input_metrics(app_store: Any, sql_store: Any, execution_id: int) -> dict[str, int]:
    """Rows and bytes the SQL execution ``execution_id`` read from storage: Spark's
    input metrics (``inputRecords``, ``inputBytes``) summed over the stages of its
    jobs, from the application's status stores. Empty when the execution is not
    (or no longer) in the store. About 2 + 3 py4j calls per job and stage."""
    execution = option(sql_store.execution(execution_id))
    if execution is None:
        return {}
    jobs = execution.jobs().keys().toSeq()
    rows = size = 0
    for index in range(int(jobs.size())):
        stages = app_store.job(jobs.apply(index)).stageIds()
        for position in range(int(stages.size())):
            stage = app_store.lastStageAttempt(stages.apply(position))
            rows += int(stage.inputRecords())
            size += int(stage.inputBytes())
    return {"input_rows": rows, "input_bytes": size}


class CatalogLookup:
    """Table metadata from the session catalog, by ``db.table`` name.

    Used for DDL and CTAS, whose JSON names the table but not its location
    (a managed table's location is chosen by the catalog).
    """

    def __init__(self, jsession: Any) -> None:
        self._session = jsession
        self._catalog = jsession.sessionState().catalog()
        self._parser = jsession.sessionState().sqlParser()

    def table(self, database: str | None, table: str) -> dict[str, Any]:
        """``location``, ``exists``, ``table_type``, ``provider``, ``schema`` of a table."""
        qualified = f"`{database}`.`{table}`" if database else f"`{table}`"
        ident = self._parser.parseTableIdentifier(qualified)
        facts: dict[str, Any] = {"database": database, "table": table}
        try:
            meta = self._catalog.getTableMetadata(ident)
        except Exception:
            facts["exists"] = False
            try:
                facts["location"] = str(self._catalog.defaultTablePath(ident).toString())
            except Exception:
                logger.debug("no default path for %s", qualified, exc_info=True)
            return facts
        facts["exists"] = True
        facts["location"] = table_location(meta)
        facts["table_type"] = str(meta.tableType().name())
        provider = option(meta.provider())
        facts["provider"] = str(provider) if provider is not None else None
        facts["schema"] = json.loads(meta.schema().json())
        return facts
