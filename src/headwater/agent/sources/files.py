"""Files: relations over paths (``HadoopFsRelation``), file inserts, directory
writes and ``save(path)`` through a data source.

A file relation's root paths and an insert's output path are JVM facts; the
partition directories under a table's root are trimmed from dataset names.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from headwater import naming
from headwater.agent.plan import PlanNode
from headwater.agent.py4j.chains import JvmChain, chained, class_name
from headwater.agent.sources.common import (
    CapturedDataset,
    VisitContext,
    Visited,
    catalog_table_ident,
    dataset_at,
    datasets_at,
    schema_from_struct,
    symlink_for,
    written_query,
)
from headwater.agent.sources.family import SourceFamily
from headwater.agent.sources.jvm_common import option, query_schema

__all__ = [
    "FAMILY",
    "file_index_facts",
    "file_relation_facts",
    "file_sink_facts",
    "output_at",
    "save_to_path",
    "streaming_relation_facts",
]

logger = logging.getLogger(__name__)


def file_index_facts(index: Any) -> dict[str, Any]:
    """Root paths of a file relation's ``FileIndex`` (one call for all of them) and the
    index's class; raises for what is not a file index."""
    joined = str(index.rootPaths().mkString("\n"))
    return {"root_paths": [p for p in joined.split("\n") if p], "file_index_class": class_name(index)}


def file_relation_facts(relation: Any) -> dict[str, Any]:
    """:func:`file_index_facts` of a ``HadoopFsRelation``'s index."""
    return file_index_facts(relation.location())


def read_file_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """A ``LogicalRelation`` over files: one dataset per root path."""
    return datasets_at(node, list(ctx.facts(node).get("root_paths", [])), ctx)


_OBJECT = "java.lang.Object"
_INSERT_FS = "org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand"
# A file write's facts: three chains of one py4j call each, not seven calls.
_OUTPUT_PATH = JvmChain((_INSERT_FS, "outputPath", ()), (_OBJECT, "toString", ()))
_MODE = JvmChain((_INSERT_FS, "mode", ()), (_OBJECT, "toString", ()))
_INSERT_SCHEMA = JvmChain(
    (_INSERT_FS, "query", ()),
    ("org.apache.spark.sql.catalyst.plans.QueryPlan", "schema", ()),
    ("org.apache.spark.sql.types.DataType", "json", ()),
)


def insert_fs_facts(node: Any) -> dict[str, Any]:
    facts = {
        "output_path": str(chained(_OUTPUT_PATH, lambda n: n.outputPath().toString(), node)),
        "mode": str(chained(_MODE, lambda n: n.mode().toString(), node)),
    }
    try:
        schema = chained(_INSERT_SCHEMA, lambda n: n.query().schema().json(), node)
        facts["query_schema"] = json.loads(schema)
    except Exception:
        logger.debug("no query schema", exc_info=True)
    return facts


#: Option keys whose values are secrets (a JDBC password, a Kafka JAAS config, a cloud
#: key): never kept, so no event, log line or recorded fixture can carry them.
_SECRET_OPTION = re.compile(r"password|secret|token|credential|jaas|private.?key|access.?key", re.IGNORECASE)


def save_into_data_source_facts(node: Any) -> dict[str, Any]:
    """Options (secrets left out), mode and data-source class of a
    ``SaveIntoDataSourceCommand`` (every family's saves dispatch on the class; see
    :mod:`.registry`)."""
    options = node.options()
    seq = options.keys().toSeq()
    keys = [str(seq.apply(i)) for i in range(seq.size())]
    return {
        "options": {key: str(options.apply(key)) for key in keys if not _SECRET_OPTION.search(key)},
        "mode": str(node.mode().toString()),
        "data_source": str(node.dataSource().getClass().getName()),
        **query_schema(node),
    }


def _insert_dir_facts(node: Any) -> dict[str, Any]:
    location = option(node.storage().locationUri())
    return {
        "location": str(location.toString()) if location is not None else None,
        "overwrite": bool(node.overwrite()),
        **query_schema(node),
    }


def output_at(
    location: str,
    ctx: VisitContext,
    fields: list,
    query: PlanNode | None,
    ident: tuple[str | None, str] | None,
) -> CapturedDataset:
    """The output dataset at ``location``, a session-catalog table when ``ident`` names one."""
    namespace, name = dataset_at(location, ctx)
    ds = CapturedDataset(namespace, name, fields=list(fields), query=query)
    if ident is not None:
        ds.is_table = True
        ds.symlinks.append(symlink_for(ident, ctx))
    return ds



def _add(output: CapturedDataset, visited: Visited) -> None:
    visited.outputs.append(output)
    visited.job_suffix = naming.trim_path_suffix(output.name)


def write_insert_fs(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    location = facts.get("output_path")
    if not location:
        return
    ident = catalog_table_ident(root.fields.get("catalogTable"))
    output = output_at(location, ctx, schema_from_struct(facts.get("query_schema")), written_query(root), ident)
    if facts.get("mode") == "Overwrite":
        output.lifecycle = "OVERWRITE"
    _add(output, visited)


def write_dir(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    facts = ctx.facts(root)
    location = facts.get("location")
    if not location:
        return
    output = output_at(location, ctx, schema_from_struct(facts.get("query_schema")), written_query(root), None)
    if facts.get("overwrite", True):
        output.lifecycle = "OVERWRITE"
    _add(output, visited)


def save_to_path(root: PlanNode, ctx: VisitContext, visited: Visited) -> None:
    """A ``SaveIntoDataSourceCommand`` with a ``path`` option (any file-based source); a
    session-catalog table when its facts name one (``table_ident``: database, table)."""
    facts = ctx.facts(root)
    location = facts.get("options", {}).get("path")
    if not location:
        return
    table = facts.get("table_ident")
    ident = (table[0], table[1]) if isinstance(table, (list, tuple)) and len(table) == 2 else None
    output = output_at(location, ctx, schema_from_struct(facts.get("query_schema")), written_query(root), ident)
    if facts.get("mode") == "Overwrite":
        output.lifecycle = "OVERWRITE"
    _add(output, visited)


# --- Structured Streaming: a stream read by path, a file sink ------------------------------

def streaming_relation_facts(node: Any) -> dict[str, Any]:
    """The paths a ``StreamingRelation`` (a v1 stream source: files, Delta by path) reads:
    its data source's ``path`` option and ``paths``, and the source's class name."""
    source = node.dataSource()
    joined = str(source.paths().mkString("\n"))
    paths = [p for p in joined.split("\n") if p]
    path = option(source.options().get("path"))
    if path is not None and str(path) not in paths:
        paths.insert(0, str(path))
    return {"stream_paths": paths, "stream_source": str(source.className())}


def read_streaming_relation(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """A stream read by path: one dataset per path, as a batch read of that path."""
    return datasets_at(node, list(ctx.facts(node).get("stream_paths", [])), ctx)


#: ``FileStreamSink.toString``: ``FileSink[<path>]``.
_FILE_SINK = re.compile(r"^FileSink\[(.*)\]$", re.DOTALL)


def file_sink_facts(sink: Any, options: Any) -> dict[str, Any]:
    """The directory a ``FileStreamSink`` writes (from its text: its path field is
    private), as the ``path`` option of a save there (see :func:`save_to_path`)."""
    match = _FILE_SINK.match(str(sink.toString()))
    return {"options": {"path": match.group(1)}} if match else {}


FAMILY = SourceFamily(
    name="files",
    lookups={
        "InsertIntoHadoopFsRelationCommand": insert_fs_facts,
        "SaveIntoDataSourceCommand": save_into_data_source_facts,
        "InsertIntoDataSourceDirCommand": _insert_dir_facts,
        "InsertIntoHiveDirCommand": _insert_dir_facts,
        "StreamingRelation": streaming_relation_facts,
    },
    reads={"StreamingRelation": read_streaming_relation},
    writes={
        "InsertIntoHadoopFsRelationCommand": write_insert_fs,
        "InsertIntoDataSourceDirCommand": write_dir,
        "InsertIntoHiveDirCommand": write_dir,
    },
    relation_lookups={"HadoopFsRelation": file_relation_facts},
    relation_reads={"HadoopFsRelation": read_file_relation},
    stream_sinks={"FileStreamSink": file_sink_facts},
)
