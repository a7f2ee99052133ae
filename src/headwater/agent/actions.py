"""One Spark action -> its START and COMPLETE/FAIL events.

The listener thread fills an :class:`ActionCapture` with plain data (the plan
tree, JVM facts, catalog facts, metrics); :func:`action_events` turns it into
events on the agent's worker thread, or in a unit test from recorded fixtures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from headwater import naming
from headwater.agent.capture import PlanCapture
from headwater.agent.columns import DerivedLeaf, Transformation, column_lineage
from headwater.agent.namespace_resolvers import resolve_namespace
from headwater.agent.plan import PlanNode
from headwater.agent.rdds import RddSavePhase, save_facts
from headwater.agent.run_model import RUN_FACET_SCHEMA, RunModel, iso_time, uuid7
from headwater.agent.sources import CapturedDataset, VisitContext, Visited, visit_plan
from headwater.agent.sources.kafka_schemas import declared_value_fields
from headwater.agent.sources.schema_registry import registry_for
from headwater.events import facets as F
from headwater.events.model import PRODUCER, SCHEMA_URL

__all__ = [
    "ActionCapture",
    "READ_ONLY_ROOTS",
    "STREAMING_ROOTS",
    "WRAPPER_ROOTS",
    "action_events",
    "column_sources",
    "is_read_only",
    "is_skipped",
    "plan_datasets",
    "rdd_save_events",
]

#: Plan roots of actions that only read (``collect``, ``count``, ``show``) or
#: change nothing lineage cares about; the listener emits nothing for them.
READ_ONLY_ROOTS = frozenset(
    {
        "Project",
        "Aggregate",
        "LocalRelation",
        # take()/head()/show() and Spark's own sampling for CSV/JSON schema inference
        "GlobalLimit",
        "LocalLimit",
        "Offset",
        "Tail",
        # DataFrame -> RDD or objects (df.rdd, Spark ML fitting and model loading)
        "DeserializeToObject",
        "SerializeFromObject",
        "ShowTables",
        "CreateNamespace",
        "SetCatalogAndNamespace",
        "CreateDatabaseCommand",
        "CreateViewCommand",
        "CreateTempViewUsing",
        "ShowTablesCommand",
        "ShowNamespaces",
        "SetCommand",
        "DescribeTableCommand",
        "DescribeRelation",
        "CacheTableCommand",
        "CacheTable",
        "UncacheTable",
    }
)


#: Plan roots of commands that only run another command, which Spark reports as an
#: action of its own, nested in this one's execution: that one is the action reported.
#: ``saveAsTable`` into a v1 table runs its CREATE TABLE AS SELECT this way (Spark 4.1+),
#: or nothing at all when the table exists and the mode is ``ignore``.
WRAPPER_ROOTS = frozenset({"SaveAsV1TableCommand"})


#: Plan roots of a streaming query's micro-batches, which Spark reports as actions:
#: they are part of the query's run (see :mod:`headwater.agent.streaming`), not runs
#: of their own — a query running for hours would otherwise send two events per batch.
STREAMING_ROOTS = frozenset(
    {"WriteToDataSourceV2", "WriteToMicroBatchDataSource", "WriteToMicroBatchDataSourceV1"}
)


def is_read_only(root_class: str) -> bool:
    """Whether an action whose optimized plan root is ``root_class`` is skipped by default."""
    return root_class in READ_ONLY_ROOTS


def is_skipped(root_class: str, capture_read_only: bool) -> bool:
    """Whether the listener emits nothing for an action whose plan root is ``root_class``."""
    return (
        root_class in WRAPPER_ROOTS
        or root_class in STREAMING_ROOTS
        or (is_read_only(root_class) and not capture_read_only)
    )


@dataclass
class ActionCapture:
    """Everything about one action, as plain Python values."""

    func_name: str
    plan: PlanCapture
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    executed: dict[str, Any] = field(default_factory=dict)
    start_time: float = 0.0
    end_time: float = 0.0
    sql: str | None = None
    error: tuple[str, str | None] | None = None
    #: The action's ``QueryExecution`` while its SQL text is still to be found
    #: through the ``spark.sql`` call that ran it (:mod:`.sql_calls`).
    query_execution: Any = None


def _catalog_args(ctx: VisitContext, catalog_impl: str) -> dict[str, Any]:
    type_ = "hive" if catalog_impl == "hive" else "in_memory"
    return {
        "name": "spark_catalog",
        "framework": type_,
        "type_": type_,
        "warehouse_uri": ctx.warehouse_uri,
    }


def plan_datasets(
    ctx: VisitContext,
    model: RunModel,
    catalog_impl: str = "hive",
    executed: dict[str, Any] | None = None,
) -> tuple[Visited, list[dict[str, Any]], list[dict[str, Any]]]:
    """What a captured plan reads and writes: the visit, and its inputs and outputs as
    OpenLineage datasets with their facets and column lineage. ``executed`` holds the
    action's statistics, when it has any."""
    executed = executed if executed is not None else {}
    visited: Visited = visit_plan(ctx)
    _declared_values(visited, ctx)
    _registered_values(visited, model)
    _resolve_namespaces([*visited.inputs, *visited.outputs], model)
    enabled = model.enabled
    catalog = _catalog_args(ctx, catalog_impl)
    leaves, derived, row_sources = _lineage_leaves(visited)

    from headwater.agent.facets import input_dataset_json, output_dataset_json

    if ctx.warehouse_uri:
        warehouse = naming.dataset_from_location(ctx.warehouse_uri)
        warehouse_ns = resolve_namespace(warehouse[0], getattr(model.config, "namespace_resolvers", ()))
        for ds in visited.outputs:
            ds.in_warehouse = ds.namespace == warehouse_ns and (
                ds.name == warehouse[1] or ds.name.startswith(warehouse[1].rstrip("/") + "/")
            )

    # Spark counts what an action read per stage, not per relation: the figures
    # belong to an input only when it is the action's one input.
    read = executed if len(visited.inputs) == 1 else None
    inputs = [input_dataset_json(ds, enabled, catalog, read) for ds in visited.inputs]
    outputs = []
    for ds in visited.outputs:
        lineage = None
        if ds.query is not None and ds.fields and enabled("columnLineage"):
            lineage = column_lineage(
                ds.query,
                [name for name, _, _ in ds.fields],
                leaves,
                dataset_lineage=bool(getattr(model.config, "dataset_lineage_enabled", False)),
                derived=derived,
                row_sources=row_sources,
            )
        outputs.append(output_dataset_json(ds, enabled, catalog, lineage, executed))
    return visited, inputs, outputs


def _declared_values(visited: Visited, ctx: VisitContext) -> None:
    """Note on each topic read the fields the plan parses its ``value`` into."""
    topics = {
        expr_id: ds
        for ds in visited.inputs
        if ds.dataset_type == "TOPIC"
        for expr_id, column in ds.attributes.items()
        if column == "value"
    }
    if not topics:
        return
    by_id = {expr_id: (ds.namespace, ds.name) for expr_id, ds in topics.items()}
    declared = declared_value_fields(ctx.tree, by_id)
    for ds in topics.values():
        fields = declared.get((ds.namespace, ds.name))
        if fields is not None:
            ds.declared_value = fields


def _registered_values(visited: Visited, model: RunModel) -> None:
    """Give each topic whose ``value`` has no fields in the plan (bytes, or a string
    the plan does not build from a struct) the fields of the value schema registered
    for it, when a schema registry is configured."""
    config = model.config
    registry = registry_for(
        getattr(config, "schema_registry_url", None),
        getattr(config, "schema_registry_timeout", 2.0),
    )
    if registry is None:
        return
    for ds in (*visited.inputs, *visited.outputs):
        if ds.dataset_type != "TOPIC" or not any(f[0] == "value" and not f[2] for f in ds.fields):
            continue
        registered = registry.value_fields(ds.name)
        if registered:
            ds.fields = [
                ("value", "struct", registered) if f[0] == "value" else f for f in ds.fields
            ]


def _lineage_leaves(
    visited: Visited,
) -> tuple[dict[int, tuple[str, str, str]], dict[int, list[DerivedLeaf]], list[DerivedLeaf]]:
    """The column-lineage leaves of what a plan read: input exprIds to fields, the
    fields a computed input attribute derives from, and sources' row filters."""
    leaves: dict[int, tuple[str, str, str]] = {}
    derived: dict[int, list[DerivedLeaf]] = {}
    row_sources: list[DerivedLeaf] = []
    for ds in visited.inputs:
        for expr_id, column in ds.attributes.items():
            leaves[expr_id] = (ds.namespace, ds.name, column)
        for expr_id, sources in ds.derived_attributes.items():
            derived.setdefault(expr_id, []).extend(
                ((ds.namespace, ds.name, column), how) for column, how in sources
            )
        row_sources.extend(((ds.namespace, ds.name, column), how) for column, how in ds.row_sources)
    return leaves, derived, row_sources


def column_sources(
    visited: Visited, query: PlanNode, names: list[str]
) -> dict[str, list[DerivedLeaf]]:
    """Each of ``query``'s output columns (``names``, in order) -> the input fields
    it derives from, each with its transformation (the plan's INDIRECT ones too)."""
    leaves, derived, row_sources = _lineage_leaves(visited)
    fields, _ = column_lineage(query, names, leaves, derived=derived, row_sources=row_sources)
    return {
        name: [
            (
                (item["namespace"], item["name"], item["field"]),
                Transformation(
                    t["type"], t["subtype"], bool(t.get("masking")), t.get("description")
                ),
            )
            for item in items
            for t in item["transformations"]
        ]
        for name, items in fields.items()
    }


def action_events(
    capture: ActionCapture,
    model: RunModel,
    ctx: VisitContext,
    catalog_impl: str = "hive",
) -> list[dict[str, Any]]:
    """START and COMPLETE (or FAIL) events of one action."""
    visited, inputs, outputs = plan_datasets(ctx, model, catalog_impl, capture.executed)
    enabled = model.enabled
    job_name = model.action_job_name(capture.executed.get("node_name"), visited.job_suffix)
    run_id = uuid7(int(capture.start_time * 1000) if capture.start_time else None)
    began = time.perf_counter()
    plan_facets = _plan_facets(capture, model, bool(visited.outputs))
    model.debug_counters.count_action(time.perf_counter() - began)
    run_facets = {**model.action_run_facets(), **plan_facets}
    job = {
        "namespace": model.namespace,
        "name": job_name,
        "facets": model.job_facets("SQL_JOB", capture.sql),
    }

    def event(event_type: str, when: float, extra_run: dict[str, Any], with_stats: bool) -> dict:
        outs = outputs if with_stats else [_without_stats(o) for o in outputs]
        ins = inputs if with_stats else [_without_input_stats(i) for i in inputs]
        return {
            "eventType": event_type,
            "eventTime": iso_time(when),
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {"runId": run_id, "facets": {**run_facets, **extra_run}},
            "job": job,
            "inputs": ins,
            "outputs": outs,
        }

    start = event("START", capture.start_time or capture.end_time, model.start_run_facets(), with_stats=False)
    events = [start]
    if "numOutputRows" in capture.executed:
        # The action ran Spark jobs that wrote data: the listener reports RUNNING
        # as those jobs progress, with the write statistics so far; we report it
        # once, between START and the end, with the final statistics.
        events.append(event("RUNNING", capture.start_time or capture.end_time, {}, with_stats=True))
    if capture.error is not None:
        extra = {}
        if enabled("errorMessage"):
            extra["errorMessage"] = F.error_message_facet(capture.error[0], capture.error[1])
        end = event("FAIL", capture.end_time, extra, with_stats=False)
    else:
        end = event("COMPLETE", capture.end_time, {}, with_stats=True)
    events.append(end)
    return events


_KNOWN_LEAVES = frozenset({"LogicalRelation", "HiveTableRelation", "LogicalRDD", "InMemoryRelation"})


def _plan_facets(capture: ActionCapture, model: RunModel, wrote: bool = False) -> dict[str, Any]:
    """The listener's opt-in ``spark.logicalPlan`` and ``spark_unknown`` run facets.

    ``spark_unknown`` lists the leaves no source family reads and, as ``output``,
    the root when it writes no dataset (a query: ``show()``, ``collect()``).
    """
    facets: dict[str, Any] = {}
    if model.enabled("spark.logicalPlan") and "root" in capture.plan.raw:
        facets["spark.logicalPlan"] = {
            "_producer": PRODUCER,
            "_schemaURL": RUN_FACET_SCHEMA,
            "plan": capture.plan.raw["root"],
        }
    if model.enabled("spark_unknown"):
        unknown = []
        for node in capture.plan.tree.walk():
            if node.children or node.inner or node.cls in _KNOWN_LEAVES or "output" not in node.fields:
                continue
            unknown.append(
                {
                    "description": {"nodeClass": node.cls},
                    "inputAttributes": [],
                    "outputAttributes": [
                        {"name": attr.name, "type": attr.fields.get("dataType"), "metadata": {}}
                        for attr in node.output()
                    ],
                }
            )
        root = capture.plan.tree
        output = None
        if not wrote and (root.children or root.inner):
            output = {"description": {"nodeClass": root.cls}, "inputAttributes": [], "outputAttributes": []}
        if unknown or output is not None:
            facets["spark_unknown"] = {
                "_producer": PRODUCER,
                "_schemaURL": RUN_FACET_SCHEMA,
                **({"output": output} if output is not None else {}),
                "inputs": unknown,
            }
    return facets


def _without_input_stats(item: dict[str, Any]) -> dict[str, Any]:
    facets = {k: v for k, v in item.get("inputFacets", {}).items() if k != "inputStatistics"}
    return {**item, "inputFacets": facets}


def _without_stats(output: dict[str, Any]) -> dict[str, Any]:
    # Statistics are known only when the action has finished.
    facets = {k: v for k, v in output.get("outputFacets", {}).items() if k != "outputStatistics"}
    return {**output, "outputFacets": facets}


def _resolve_namespaces(datasets: list[CapturedDataset], model: RunModel) -> None:
    """Apply the configured namespace resolvers to every dataset an action emits,
    before its facets and column lineage are built from the namespace."""
    resolvers = getattr(model.config, "namespace_resolvers", ())
    if resolvers:
        for ds in datasets:
            ds.namespace = resolve_namespace(ds.namespace, resolvers)


def _file_dataset(location: str, remove_path: Any) -> CapturedDataset:
    namespace, name = naming.dataset_from_location(location)
    name = naming.remove_path_pattern(naming.trim_partition_dirs(name), remove_path)
    return CapturedDataset(namespace, name)


def rdd_save_events(item: RddSavePhase, model: RunModel, remove_path: Any = None) -> list[dict[str, Any]]:
    """The START, or the COMPLETE/FAIL, of an RDD save (see :mod:`headwater.agent.rdds`)."""
    from headwater.agent.facets import input_dataset_json, output_dataset_json

    save = item.save
    facts = save_facts(save)
    if save.run_id is None:
        save.run_id = uuid7(int(save.start_time * 1000))
    enabled = model.enabled
    read = [_file_dataset(p, remove_path) for p in facts["inputs"]]
    written = _file_dataset(facts["output"], remove_path)
    _resolve_namespaces([*read, written], model)
    inputs = [input_dataset_json(ds, enabled) for ds in read]
    outputs = [output_dataset_json(written, enabled)]
    run_facets = model.action_run_facets()
    if item.phase == "START":
        event_type, when = "START", save.start_time
    else:
        event_type, when = ("COMPLETE" if save.error is None else "FAIL"), save.end_time or save.start_time
        if save.error is not None and enabled("errorMessage"):
            run_facets["errorMessage"] = F.error_message_facet(save.error[0], save.error[1])
    return [
        {
            "eventType": event_type,
            "eventTime": iso_time(when),
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {"runId": save.run_id, "facets": run_facets},
            "job": {
                "namespace": model.namespace,
                # The listener names RDD jobs {app}.{rdd graph}, with no plan node.
                "name": f"{model.app_name}.{naming.normalize_job_name(facts['suffix'])}",
                "facets": model.job_facets("RDD_JOB"),
            },
            "inputs": inputs,
            "outputs": outputs,
        }
    ]
