"""What a source family registers: the plan classes it understands, and how.

A source family (files, session-catalog tables, JDBC, Kafka, a table format)
is one module that declares one :class:`SourceFamily`; :mod:`.registry` merges
them. Two kinds of function are registered:

- **look-ups** run on the agent's capture thread with the JVM node over py4j
  and return plain facts (paths, options, a table version) — the values a
  plan's JSON leaves ``null``. They may raise: the caller logs and goes on.
- **visitors** run later, without a JVM, on the plain plan tree and those
  facts, and return or add :class:`~.common.CapturedDataset` objects.

A ``LogicalRelation`` leaf and a ``SaveIntoDataSourceCommand`` root wrap a
data-source object whose class says what it is; families register for those
classes (``relation_*``, ``save_writes``) rather than for the plan class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from headwater.agent.plan import PlanNode
from headwater.agent.sources.common import CapturedDataset, VisitContext, Visited

__all__ = [
    "Lookup",
    "OptionDatasets",
    "ReadVisitor",
    "SourceFamily",
    "StreamSinkLookup",
    "StreamSinkVersion",
    "TablePin",
    "WriteVisitor",
]

#: JVM object -> plain facts (py4j calls; runs on the capture thread).
Lookup = Callable[[Any], dict[str, Any]]
#: A leaf plan node -> the datasets it reads.
ReadVisitor = Callable[[PlanNode, VisitContext], list[CapturedDataset]]
#: A root command -> adds its outputs (and job-name suffix) to ``Visited``.
WriteVisitor = Callable[[PlanNode, VisitContext, Visited], None]
#: A DSv2 relation's options and output attributes -> the datasets they name.
OptionDatasets = Callable[[Mapping[str, str], list[Any]], list[CapturedDataset]]
#: A streaming query's sink (a ``Table``) and its write options -> plain facts: a
#: ``location``, or a ``table_class`` and ``options`` that name the datasets.
StreamSinkLookup = Callable[[Any, Mapping[str, str]], dict[str, Any]]
#: A streaming query's sink -> a reader of the table version its latest commit left
#: (made once when the query starts; the reader is called per RUNNING and at the end).
StreamSinkVersion = Callable[[Any], Callable[[], str]]


@dataclass(frozen=True)
class TablePin:
    """How a table format holds on to the state of a table a command wrote.

    ``take`` runs on Spark's listener thread as soon as the command is reported,
    with the DSv2 ``Table``, and returns a handle on the table's state as it is
    then (an immutable JVM object, a version number): one or two py4j calls, no
    I/O. ``facts`` runs later on the capture thread with the table and that
    handle, and returns the facts that state gives (the version written, the
    location, the schema), whatever the job has done to the table since.
    """

    take: Callable[[Any], Any]
    facts: Callable[[Any, Any], dict[str, Any]]
    #: Readies, on the capture thread, what ``take`` needs to be quick (a JVM chain
    #: built for the table's class loader), given a table of the format.
    prepare: Callable[[Any], None] | None = None
    #: Whether the pin serves only a table loaded after a create or an ALTER, not
    #: the table a write's plan holds (whose facts the format reads otherwise).
    loaded_only: bool = False


@dataclass(frozen=True)
class SourceFamily:
    """One source family's registrations (every mapping is keyed by short class name)."""

    name: str
    #: plan class -> look-up of that node's facts.
    lookups: Mapping[str, Lookup] = field(default_factory=dict)
    #: leaf plan class -> its input datasets.
    reads: Mapping[str, ReadVisitor] = field(default_factory=dict)
    #: root command class -> its outputs.
    writes: Mapping[str, WriteVisitor] = field(default_factory=dict)
    #: ``BaseRelation`` class under a ``LogicalRelation`` -> look-up on the relation.
    relation_lookups: Mapping[str, Lookup] = field(default_factory=dict)
    #: ``BaseRelation`` class under a ``LogicalRelation`` -> its input datasets.
    relation_reads: Mapping[str, ReadVisitor] = field(default_factory=dict)
    #: data-source class of a ``SaveIntoDataSourceCommand`` -> its outputs.
    save_writes: Mapping[str, WriteVisitor] = field(default_factory=dict)
    #: data-source class of a ``SaveIntoDataSourceCommand`` -> look-up of the facts
    #: its format adds on the command (a table version), besides options and mode.
    save_lookups: Mapping[str, Lookup] = field(default_factory=dict)
    #: ``provider`` of the catalog table a ``LogicalRelation`` reads -> look-up of
    #: that format's facts (a table ``version``) on the relation node.
    table_provider_lookups: Mapping[str, Lookup] = field(default_factory=dict)
    #: ``FileIndex`` class of a file relation read by path (a ``HadoopFsRelation``'s
    #: ``location``) -> look-up of its format's facts (a table version) on the index.
    file_index_lookups: Mapping[str, Lookup] = field(default_factory=dict)
    #: DSv2 ``Table`` class under a ``DataSourceV2Relation`` -> look-up of its
    #: format's own facts (a table version, a file format) on the table.
    v2_table_lookups: Mapping[str, Lookup] = field(default_factory=dict)
    #: DSv2 ``Table`` class whose datasets the relation's options name, not a
    #: location (a Kafka table: bootstrap servers and topics) -> those datasets,
    #: from ``DataSourceV2Relation.options`` (a write's ``writeOptions``) and its output.
    v2_option_datasets: Mapping[str, OptionDatasets] = field(default_factory=dict)
    #: DSv2 ``Table`` class whose state (a snapshot) changes in place -> how a write's
    #: or a create's state is pinned when Spark reports it (see :class:`TablePin`).
    v2_table_pins: Mapping[str, TablePin] = field(default_factory=dict)
    #: Class of a Structured Streaming query's sink (``FileStreamSink``, a Kafka
    #: table) -> look-up of what it writes, given the sink and the query's options.
    stream_sinks: Mapping[str, StreamSinkLookup] = field(default_factory=dict)
    #: Class of a streaming sink into a table format (a ``DeltaSink``, an Iceberg
    #: ``SparkTable``) -> the reader of the version its micro-batches committed (see
    #: :data:`StreamSinkVersion`).
    stream_sink_versions: Mapping[str, StreamSinkVersion] = field(default_factory=dict)
