"""The source families, merged: which look-up and which visitor a plan class gets.

Adding a connector is one module declaring a
:class:`~headwater.agent.sources.family.SourceFamily` and one entry in
:data:`FAMILIES`. Two plan classes wrap a data-source object and dispatch on
its class: a ``LogicalRelation`` leaf (a catalog table when its JSON names
one; a file relation when its relation has root paths — asked first, one
py4j call, because most relations are files; else the relation's class) and a
``SaveIntoDataSourceCommand`` root (the data source's class; a plain ``path``
option otherwise). A Structured Streaming query's sink is visited as such a save:
its family's ``stream_sinks`` look-up gives the facts a save would have, on a
:data:`STREAM_WRITE` root above the query's plan.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from headwater.agent.plan import PlanNode, short_class
from headwater.agent.sources import (
    ddl,
    delta,
    dsv2,
    files,
    formats,
    iceberg,
    jdbc,
    kafka,
    local_sinks,
    logical_rdds,
    tables,
)
from headwater.agent.sources.common import CapturedDataset, VisitContext, Visited
from headwater.agent.sources.family import (
    Lookup,
    OptionDatasets,
    ReadVisitor,
    SourceFamily,
    StreamSinkLookup,
    StreamSinkVersion,
    TablePin,
    WriteVisitor,
)

__all__ = [
    "FAMILIES",
    "NODE_LOOKUPS",
    "STREAM_WRITE",
    "V2_OPTION_DATASETS",
    "V2_TABLE_LOOKUPS",
    "V2_TABLE_PINS",
    "base_relation_facts",
    "read_datasets",
    "relation_facts",
    "stream_sink_facts",
    "stream_sink_version",
    "write_outputs",
]

logger = logging.getLogger(__name__)

FAMILIES: tuple[SourceFamily, ...] = (
    files.FAMILY,
    tables.FAMILY,
    ddl.FAMILY,
    jdbc.FAMILY,
    logical_rdds.FAMILY,
    delta.FAMILY,
    kafka.FAMILY,
    dsv2.FAMILY,
    iceberg.FAMILY,
    local_sinks.FAMILY,
)


def _merged(kind: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for family in FAMILIES:
        for cls, function in getattr(family, kind).items():
            if cls in merged:
                raise ValueError(f"{cls} is registered twice in {kind} (again by {family.name})")
            merged[cls] = function
    return merged


_READS: Mapping[str, ReadVisitor] = _merged("reads")
_WRITES: Mapping[str, WriteVisitor] = _merged("writes")
_RELATION_LOOKUPS: Mapping[str, Lookup] = _merged("relation_lookups")
_RELATION_READS: Mapping[str, ReadVisitor] = _merged("relation_reads")
_SAVE_WRITES: Mapping[str, WriteVisitor] = _merged("save_writes")
_SAVE_LOOKUPS: Mapping[str, Lookup] = _merged("save_lookups")
_TABLE_PROVIDER_LOOKUPS: Mapping[str, Lookup] = _merged("table_provider_lookups")
_FILE_INDEX_LOOKUPS: Mapping[str, Lookup] = _merged("file_index_lookups")
_STREAM_SINKS: Mapping[str, StreamSinkLookup] = _merged("stream_sinks")
_STREAM_SINK_VERSIONS: Mapping[str, StreamSinkVersion] = _merged("stream_sink_versions")

#: The root a streaming query's plan is visited under: the class of Spark's own
#: ``WriteToStream``, whose facts are its sink's (see :func:`stream_sink_facts`).
STREAM_WRITE = "WriteToStream"
#: DSv2 ``Table`` class -> its format's look-up (used by the DSv2 family).
V2_TABLE_LOOKUPS: Mapping[str, Lookup] = _merged("v2_table_lookups")
#: DSv2 ``Table`` class -> the datasets its relation's options name (used by the DSv2 family).
V2_OPTION_DATASETS: Mapping[str, OptionDatasets] = _merged("v2_option_datasets")
#: DSv2 ``Table`` class -> how its format pins a written table's state (used by the DSv2 family).
V2_TABLE_PINS: Mapping[str, TablePin] = _merged("v2_table_pins")
formats.TABLE_LOOKUPS.update(V2_TABLE_LOOKUPS)
formats.OPTION_DATASETS.update(V2_OPTION_DATASETS)
formats.TABLE_PINS.update(V2_TABLE_PINS)


def base_relation_facts(relation: Any) -> dict[str, Any]:
    """Facts of the ``BaseRelation`` under a ``LogicalRelation``; for files, with those
    the format of its file index adds (a Delta table read by path: its version)."""
    try:
        index = relation.location()
        facts = files.file_index_facts(index)
    except Exception:
        logger.debug("not a file relation", exc_info=True)
    else:
        return {**facts, **_format_facts(_FILE_INDEX_LOOKUPS, short_class(facts["file_index_class"]), index)}
    relation_class = str(relation.getClass().getName())
    facts: dict[str, Any] = {"relation_class": relation_class}
    lookup = _RELATION_LOOKUPS.get(short_class(relation_class))
    if lookup is not None:
        facts.update(lookup(relation))
    return facts


def relation_facts(node: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Facts of a ``LogicalRelation``: a catalog table's location, else its relation's."""
    table = fields.get("catalogTable")
    if isinstance(table, dict):
        found = tables.catalog_relation_facts(node)
        if found:
            return {**found, **_format_facts(_TABLE_PROVIDER_LOOKUPS, str(table.get("provider") or ""), node)}
    return base_relation_facts(node.relation())


def _format_facts(lookups: Mapping[str, Lookup], key: str, node: Any) -> dict[str, Any]:
    """A format's own facts on ``node`` (a version); none when its look-up fails, so
    the facts found without it stay."""
    lookup = lookups.get(key.lower()) or lookups.get(key)
    if lookup is None:
        return {}
    try:
        return dict(lookup(node))
    except Exception:
        logger.debug("format look-up failed for %s", key, exc_info=True)
        return {}


def stream_sink_facts(sink: Any, options: Mapping[str, str]) -> dict[str, Any]:
    """What a streaming query's sink writes, as the facts of a save (``options``,
    ``data_source``); only the sink's class for a sink no family knows."""
    sink_class = str(sink.getClass().getName())
    lookup = _STREAM_SINKS.get(short_class(sink_class))
    facts: dict[str, Any] = {"data_source": sink_class}
    if lookup is not None:
        facts.update(lookup(sink, options))
    return facts


def stream_sink_version(sink: Any) -> Callable[[], str] | None:
    """The reader of the table version a streaming sink committed last; ``None`` for a
    sink into no versioned table format. May raise (py4j), as a look-up may."""
    make = _STREAM_SINK_VERSIONS.get(short_class(str(sink.getClass().getName())))
    return None if make is None else make(sink)


def save_facts(node: Any) -> dict[str, Any]:
    """Facts of a ``SaveIntoDataSourceCommand``, with those its data source's format adds."""
    facts = files.save_into_data_source_facts(node)
    return {**facts, **_format_facts(_SAVE_LOOKUPS, short_class(str(facts.get("data_source", ""))), node)}


#: Plan class -> the look-up that fills its facts. ``LogicalRelation`` is
#: special: :func:`relation_facts` is called with the node's JSON fields too.
NODE_LOOKUPS: Mapping[str, Any] = {
    **_merged("lookups"),
    "LogicalRelation": relation_facts,
    "SaveIntoDataSourceCommand": save_facts,
}


def read_datasets(node: PlanNode, ctx: VisitContext) -> list[CapturedDataset]:
    """The datasets one leaf node reads (empty for every other node)."""
    if node.cls == "LogicalRelation":
        if isinstance(node.fields.get("catalogTable"), dict) and ctx.facts(node).get("location"):
            datasets = tables.read_catalog_relation(node, ctx)
            version = ctx.facts(node).get("version")
            for ds in datasets:
                ds.version = str(version) if version is not None else ds.version
            return datasets
        facts = ctx.facts(node)
        if "root_paths" in facts:
            datasets = files.read_file_relation(node, ctx)
            for ds in datasets:
                if facts.get("version") is not None:
                    ds.version = str(facts["version"])
                if facts.get("storage_layer"):
                    ds.storage = (str(facts["storage_layer"]), facts.get("file_format"))
            return datasets
        reader = _RELATION_READS.get(short_class(str(facts.get("relation_class", ""))))
        return reader(node, ctx) if reader is not None else []
    reader = _READS.get(node.cls)
    return reader(node, ctx) if reader is not None else []


def write_outputs(root: PlanNode, ctx: VisitContext, visited: Visited) -> bool:
    """Add the outputs of the command at ``root``; ``False`` if no family writes with it."""
    if root.cls in ("SaveIntoDataSourceCommand", STREAM_WRITE):
        source = short_class(str(ctx.facts(root).get("data_source", "")))
        _SAVE_WRITES.get(source, files.save_to_path)(root, ctx, visited)
        return True
    writer = _WRITES.get(root.cls)
    if writer is None:
        return False
    writer(root, ctx, visited)
    return True
