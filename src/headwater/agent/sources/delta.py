"""Delta Lake tables: MERGE, UPDATE and DELETE, ``save(path)`` through Delta's data
source, the version of Delta tables read, and Delta's facts for DSv2 writes.

A Delta table is a dataset at its location (``symlinks`` name it when the
session catalog holds it), with the ``version`` facet: the table version a
write committed, or the version a read scanned. The commands name their table
by a ``catalogTable`` (in the JSON) and a file index or ``DeltaLog`` (in the
JVM); the look-ups here read the location and the versions from the JVM.

The version a command committed is not kept in its plan. A command that read
the table first (MERGE, UPDATE, DELETE, an append through DSv2) read it at a
snapshot, so it committed that snapshot's version plus one — unless it changed
nothing, when the table stays where it was. The newest version the session
knows, read when the action is captured, tells those cases apart; a later write
by the job may have moved it further, which the read snapshot bounds:
``min(newest, read + 1)``. A ``save(path)`` reads nothing first, so it gets the
newest version.

MERGE, UPDATE and DELETE write the plans :mod:`.delta_dml` builds from them,
which the column lineage follows.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from headwater import naming
from headwater.agent.plan import PlanNode
from headwater.agent.py4j.chains import JvmChain, chained
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    catalog_table_ident,
    schema_from_attributes,
    schema_from_struct,
)
from headwater.agent.sources.delta_dml import (
    delete_query,
    merge_query,
    plan_output,
    target_plan,
    update_query,
)
from headwater.agent.sources.dsv2 import NESTED_WRITE
from headwater.agent.sources.family import SourceFamily, TablePin
from headwater.agent.sources.files import output_at, save_to_path
from headwater.agent.sources.jvm_common import option, table_location

__all__ = ["FAMILY", "STORAGE", "written_version"]

logger = logging.getLogger(__name__)

#: The ``storage`` facet of every Delta table: Delta stores its data as Parquet.
STORAGE = ("delta", "parquet")

_LOG_FILE_INDEX = "org.apache.spark.sql.delta.files.TahoeLogFileIndex"
#: The version a Delta relation scans: the snapshot its file index pinned when the
#: query was analysed (``version()`` of a ``TahoeLogFileIndex`` is the newest one).
#: One call when Delta is on the JVM's class path; with ``spark.jars.packages`` its
#: classes are not visible to the chain's builder and the four calls are made one by
#: one (0.16 ms a relation, measured on Spark 4.0.1 / Delta 4.0.0; cached per relation).
_RELATION_VERSION = JvmChain(
    ("org.apache.spark.sql.execution.datasources.LogicalRelation", "relation", ()),
    ("org.apache.spark.sql.execution.datasources.HadoopFsRelation", "location", ()),
    (_LOG_FILE_INDEX, "snapshotAtAnalysis", ()),
    ("org.apache.spark.sql.delta.SnapshotDescriptor", "version", ()),
)


def written_version(newest: int | None, read: int | None) -> int | None:
    """The version a command that read the table at ``read`` committed (see the module doc).

    >>> written_version(4, 1)
    2
    >>> written_version(1, 1)
    1
    >>> written_version(3, None)
    3
    """
    if newest is None:
        return None
    return newest if read is None else min(newest, read + 1)


# -- look-ups (py4j) -----------------------------------------------------------------------


def _newest(delta_log: Any) -> int:
    # The snapshot the session last loaded or committed: no file listing.
    return int(delta_log.unsafeVolatileSnapshot().version())


def _scanned_version(file_index: Any) -> int:
    """The version a Delta file index scans (see :data:`_RELATION_VERSION`)."""
    try:
        return int(file_index.snapshotAtAnalysis().version())
    except Exception:  # an index over a fixed snapshot: a time-travel or batch index
        return int(file_index.version())


def _index_facts(file_index: Any, catalog_table: Any) -> dict[str, Any]:
    """Location and version written of the table behind a Delta ``TahoeFileIndex``."""
    table = option(catalog_table)
    location = table_location(table) if table is not None else None
    read = _scanned_version(file_index)
    return {
        "location": location or str(file_index.path().toString()),
        "version": written_version(_newest(file_index.deltaLog()), read),
    }


def _merge_facts(node: Any) -> dict[str, Any]:
    return _index_facts(node.targetFileIndex(), node.catalogTable())


def _update_facts(node: Any) -> dict[str, Any]:
    return _index_facts(node.tahoeFileIndex(), node.catalogTable())


def _delete_facts(node: Any) -> dict[str, Any]:
    delta_log = node.deltaLog()
    table = option(node.catalogTable())
    location = table_location(table) if table is not None else None
    read = None
    try:
        read = _scanned_version(node.target().collectLeaves().apply(0).relation().location())
    except Exception:
        logger.debug("no read snapshot for the DELETE", exc_info=True)
    return {
        "location": location or str(delta_log.dataPath().toString()),
        "version": written_version(_newest(delta_log), read),
    }


def _scala_object(anchor: Any, name: str) -> Any:
    """The Scala ``object`` ``name``, loaded by the class loader of ``anchor``'s class
    (the one that loaded Delta, which Spark may have added at run time)."""
    loader = anchor.getClass().getClassLoader()
    return loader.loadClass(f"{name}$").getField("MODULE$").get(None)


def _save_facts(node: Any) -> dict[str, Any]:
    """The version a ``save(path)`` through Delta's data source committed."""
    path = option(node.options().get("path"))
    if path is None:
        return {}
    source = node.dataSource()
    session = _scala_object(source, "org.apache.spark.sql.SparkSession").active()
    delta_log_object = _scala_object(source, "org.apache.spark.sql.delta.DeltaLog")
    delta_log = delta_log_object.forTable(session, str(path))
    return {"version": _newest(delta_log)}


def _relation_version(node: Any) -> dict[str, Any]:
    """The version a ``LogicalRelation`` over a Delta table scans."""
    def step_by_step(relation_node: Any) -> int:
        return _scanned_version(relation_node.relation().location())

    try:
        return {"version": int(chained(_RELATION_VERSION, step_by_step, node))}
    except Exception:  # not a TahoeLogFileIndex: the chain's cast fails in the JVM
        return {"version": step_by_step(node)}


def _index_version(file_index: Any) -> dict[str, Any]:
    """The version and storage of a Delta table read by its path, from its file index."""
    return {"version": _scanned_version(file_index), "storage_layer": STORAGE[0], "file_format": STORAGE[1]}


def v2_table_facts(table: Any) -> dict[str, Any]:
    """Delta's facts for a ``DeltaTableV2`` under a DSv2 relation (see :mod:`.dsv2`)."""
    facts: dict[str, Any] = {
        "location": str(table.path().toString()),
        "storage_layer": STORAGE[0],
        "file_format": STORAGE[1],
    }
    read = int(table.initialSnapshot().version())
    # The snapshot the table object was loaded at: a create's table, loaded right
    # after the command (see dsv2_pins.pin_table), is at the version it left.
    facts["read_version"] = str(read)
    if table.timeTravelOpt().isDefined():
        facts["version"] = str(read)
    else:
        facts["version"] = str(written_version(_newest(table.deltaLog()), read))
    return facts


#: The newest snapshot of a ``DeltaTableV2``'s log the session knows, in one call:
#: right after the session's own commit, the state that commit left (no I/O).
_NEWEST_SNAPSHOT = JvmChain(
    ("org.apache.spark.sql.delta.catalog.DeltaTableV2", "deltaLog", ()),
    ("org.apache.spark.sql.delta.DeltaLog", "unsafeVolatileSnapshot", ()),
    target_loader=True,
)


def _take_snapshot(table: Any) -> Any:
    # On Spark's listener thread: one call once the capture thread built the chain.
    return chained(
        _NEWEST_SNAPSHOT, lambda t: t.deltaLog().unsafeVolatileSnapshot(), table, build=False
    )


def _pinned_snapshot_facts(table: Any, snapshot: Any) -> dict[str, Any]:
    """Location, version and schema of a created or altered table from the snapshot
    pinned when Spark reported the command: a ``DeltaTableV2`` reads its own snapshot
    only when first asked, which on the capture thread may be a later one."""
    version = str(int(snapshot.version()))
    return {
        "location": str(table.path().toString()),
        "storage_layer": STORAGE[0],
        "file_format": STORAGE[1],
        "version": version,
        "read_version": version,
        "schema": json.loads(str(snapshot.schema().json())),
    }


def staged_table_facts(table: Any) -> dict[str, Any]:
    """A table a Delta CTAS or REPLACE stages, which only that command's own write
    (reported as the command) writes; its location when the statement names one."""
    facts: dict[str, Any] = {"storage_layer": STORAGE[0], "file_format": STORAGE[1], NESTED_WRITE: True}
    location = table.properties().get("location")
    if location is not None:
        facts["location"] = str(location)
    return facts


# -- visitors (no JVM) ---------------------------------------------------------------------


def _add_table_output(
    root: PlanNode,
    ctx: VisitContext,
    visited: Visited,
    target: PlanNode | None,
    query: PlanNode | None,
) -> None:
    facts = ctx.facts(root)
    location = facts.get("location")
    if not location:
        return
    ident = catalog_table_ident(root.fields.get("catalogTable"))
    # A MERGE with schema evolution writes the columns it added too.
    fields = schema_from_struct(root.fields.get("migratedSchema"))
    if not fields and target is not None:
        fields = schema_from_attributes(plan_output(target))
    output = output_at(str(location), ctx, fields, query, ident)
    _set_table_format(output, facts)
    visited.outputs.append(output)
    visited.job_suffix = naming.trim_path_suffix(output.name)


def _set_table_format(ds: CapturedDataset, facts: Any) -> None:
    if facts.get("version") is not None:
        ds.version = str(facts["version"])
    ds.storage = STORAGE


def _write_merge(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    target, source = root.inner.get("target"), root.inner.get("source")
    query = None
    if target is not None and source is not None:
        query = merge_query(root, target, source)
    _add_table_output(root, ctx, visited, target, query)


def _write_update(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    _add_table_output(root, ctx, visited, target_plan(root), update_query(root))


def _write_delete(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    _add_table_output(root, ctx, visited, target_plan(root), delete_query(root))


def _write_save(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    """``df.write.format("delta").save(path)``: the table at the path, at the version written."""
    before = len(visited.outputs)
    save_to_path(root, ctx, visited)
    for output in visited.outputs[before:]:
        _set_table_format(output, ctx.facts(root))


#: ``DeltaSink.toString``: ``DeltaSink[<table path>]``, for a stream into a path or a table.
_DELTA_SINK = re.compile(r"^DeltaSink\[(.*)\]$", re.DOTALL)


def _stream_sink_facts(sink: Any, options: Any) -> dict[str, Any]:
    """A stream into a Delta table (``format("delta").start(path)`` or ``toTable``) is
    a ``DeltaSink`` at the table's path: named as a ``save(path)`` there is."""
    match = _DELTA_SINK.match(str(sink.toString()))
    if match is None:
        return {}
    facts: dict[str, Any] = {
        "options": {"path": match.group(1)},
        "data_source": "org.apache.spark.sql.delta.sources.DeltaDataSource",
    }
    # A toTable sink holds the catalog table it writes: the dataset gets its symlink.
    try:
        table = option(sink.catalogTable())
        if table is not None:
            ident = table.identifier()
            facts["table_ident"] = [option(ident.database()), str(ident.table())]
    except Exception:
        logger.debug("no catalog table on %s", sink, exc_info=True)
    return facts


def _stream_sink_version(sink: Any) -> Callable[[], str]:
    """The reader of the version a ``DeltaSink``'s latest micro-batch committed: the
    newest snapshot of the table's log, which the sink's own commits advance (the
    log is looked up once; each read is two py4j calls and no file listing)."""
    match = _DELTA_SINK.match(str(sink.toString()))
    if match is None:
        raise LookupError(f"no table path in {sink}")
    session = _scala_object(sink, "org.apache.spark.sql.SparkSession").active()
    delta_logs = _scala_object(sink, "org.apache.spark.sql.delta.DeltaLog")
    delta_log = delta_logs.forTable(session, match.group(1))
    return lambda: str(_newest(delta_log))


FAMILY = SourceFamily(
    name="delta",
    lookups={
        "MergeIntoCommand": _merge_facts,
        "UpdateCommand": _update_facts,
        "DeleteCommand": _delete_facts,
    },
    writes={
        "MergeIntoCommand": _write_merge,
        "UpdateCommand": _write_update,
        "DeleteCommand": _write_delete,
    },
    save_writes={"DeltaDataSource": _write_save},
    save_lookups={"DeltaDataSource": _save_facts},
    table_provider_lookups={"delta": _relation_version},
    # A read by path: the index the optimizer prepared pins the version it scans.
    file_index_lookups=dict.fromkeys(
        ("PreparedDeltaFileIndex", "TahoeLogFileIndex", "TahoeBatchFileIndex"), _index_version
    ),
    v2_table_lookups={
        "DeltaTableV2": v2_table_facts,
        "DeltaCatalog$StagedDeltaTableV2": staged_table_facts,
        # Delta 4.1+ (the Spark 4.1 build) nests the staged table in the catalog's base class.
        "AbstractDeltaCatalog$StagedDeltaTableV2": staged_table_facts,
    },
    # A created or altered table's state, pinned when Spark reports the command (a
    # write's version comes from the snapshot its plan read: see the module doc).
    v2_table_pins={
        "DeltaTableV2": TablePin(
            _take_snapshot, _pinned_snapshot_facts, _NEWEST_SNAPSHOT.prepare, loaded_only=True
        )
    },
    stream_sinks={"DeltaSink": _stream_sink_facts},
    stream_sink_versions={"DeltaSink": _stream_sink_version},
)
