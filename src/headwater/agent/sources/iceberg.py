"""Iceberg tables: the facts of an Iceberg ``SparkTable`` the DSv2 family asks for.

Plan nodes over Iceberg tables are :mod:`.dsv2`'s; this module answers its
``v2_table_lookups`` for Iceberg's table classes with the table's location,
the snapshot (``version``: the one a time-travel read pinned, else the
table's current snapshot — after a write, the one it made), the storage
layer and file format, and the catalog's type and warehouse.

A write's, a create's or an ALTER's table is pinned when Spark reports the
command (``v2_table_pins``): its ``TableMetadata`` then, one py4j call.
Metadata is immutable, so the snapshot it names is the one the command
committed, and its location, schema and file format the table's then,
whatever the job commits, alters or drops before the action is captured.

A stream into an Iceberg table (``toTable``) commits one snapshot per
micro-batch; ``stream_sink_versions`` reads the snapshot the latest one left,
in the value format of a batch write's ``version``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from headwater.agent.py4j.chains import JvmChain, chained, jvm_of
from headwater.agent.sources.family import SourceFamily, TablePin

__all__ = ["FAMILY", "iceberg_table_facts", "input_partition_facts", "pinned_facts", "spark_struct"]

logger = logging.getLogger(__name__)

#: Iceberg ``TableOperations`` class -> catalog type, when the catalog's
#: properties do not say it (the FileIO of a Hadoop catalog carries them).
_CATALOG_TYPES = {
    "HadoopTableOperations": "hadoop",
    "HiveTableOperations": "hive",
    "RESTTableOperations": "rest",
    "GlueTableOperations": "glue",
    "JdbcTableOperations": "jdbc",
    "NessieTableOperations": "nessie",
    "DynamoDbTableOperations": "dynamodb",
}


def iceberg_table_facts(jtable: Any) -> dict[str, Any]:
    """Location, snapshot, storage and catalog facts of an Iceberg ``SparkTable``, and
    its namespace and name: a read with ``snapshot-id``/``as-of-timestamp``/``branch``
    options loads the table under a name with a selector (``t.snapshot_id_42``),
    which the Iceberg table's own name (``catalog.namespace.t``) has not."""
    table = jtable.table()
    pinned = jtable.snapshotId()  # set by time travel
    travelled = pinned is not None
    if pinned is None:
        pinned = _branch_head(jtable, table)
    facts = _table_facts(table, pinned)
    facts.update(_identifier(str(table.name())))
    if travelled:
        facts["time_travel"] = True
    return facts


def _branch(jtable: Any) -> str | None:
    """The branch a ``SparkTable`` reads or writes (``t.branch_dev``, the ``branch``
    option), ``None`` for the main branch."""
    try:
        branch = jtable.branch()
    except Exception:  # an Iceberg release without branches
        return None
    return None if branch is None or str(branch) == "main" else str(branch)


def _branch_head(jtable: Any, table: Any) -> Any:
    """The newest snapshot of the branch a ``SparkTable`` reads or writes, ``None`` for
    the main branch."""
    branch = _branch(jtable)
    if branch is None:
        return None
    snapshot = table.snapshot(branch)
    return snapshot.snapshotId() if snapshot is not None else None


#: A ``SparkTable``'s Iceberg ``TableMetadata`` as it is now, in one call.
_METADATA = JvmChain(
    ("org.apache.iceberg.spark.source.SparkTable", "table", ()),
    ("org.apache.iceberg.HasTableOperations", "operations", ()),
    ("org.apache.iceberg.TableOperations", "current", ()),
    target_loader=True,
)


def _take_metadata(jtable: Any) -> Any:
    # On Spark's listener thread: one call once the capture thread built the chain.
    return chained(_METADATA, lambda table: table.table().operations().current(), jtable, build=False)


def _spark_schema(jtable: Any, schema: Any) -> dict[str, Any]:
    """An Iceberg ``Schema`` as Spark ``StructType`` JSON (Iceberg's own conversion;
    top-level columns from its text if that is not reachable)."""
    try:
        return json.loads(str(jvm_of(jtable).org.apache.iceberg.spark.SparkSchemaUtil.convert(schema).json()))
    except Exception:
        logger.debug("no Spark schema of the Iceberg schema", exc_info=True)
        return spark_struct(str(schema.toString()))


def pinned_facts(jtable: Any, metadata: Any) -> dict[str, Any]:
    """Location, snapshot (of the branch written), schema and file format of a pinned
    ``TableMetadata``."""
    branch = _branch(jtable)
    if branch is None:
        snapshot = metadata.currentSnapshot()
    else:
        ref = metadata.ref(branch)
        snapshot = metadata.snapshot(ref.snapshotId()) if ref is not None else None
    facts: dict[str, Any] = {
        "storage_layer": "iceberg",
        "location": str(metadata.location()),
        "version": None,
        "previous_version": None,
    }
    if snapshot is not None:
        facts["version"] = str(snapshot.snapshotId())
        parent = snapshot.parentId()
        if parent is not None:
            facts["previous_version"] = str(parent)
    facts["schema"] = _spark_schema(jtable, metadata.schema())
    facts["file_format"] = _file_format(metadata.properties())
    # The catalog's facts ride on the table's FileIO, which no later commit or drop
    # changes (the table's own state may be gone by now).
    facts.update(_catalog_facts(jtable.table()))
    return facts


def _file_format(properties: Any) -> str:
    """The file format a table's properties (a Java map) say its writes use."""
    return str(properties.get("write.format.default") or "parquet").lower()


def _identifier(table_name: str) -> dict[str, Any]:
    """``catalog``, ``namespace`` and ``name`` from an Iceberg table name
    (``catalog.namespace.table``); none for a table named by its path."""
    if "/" in table_name:
        return {}
    parts = table_name.split(".")
    if len(parts) >= 3:
        return {"catalog": parts[0], "namespace": parts[1:-1], "name": parts[-1]}
    if len(parts) == 2:
        return {"namespace": parts[:1], "name": parts[1]}
    return {}


def input_partition_facts(partition: Any) -> dict[str, Any]:
    """The table a ``SparkInputPartition`` of a scan reads, named as the DSv2 family
    names a relation's (``catalog.namespace.table``; its schema as Spark types)."""
    table = partition.table()
    facts = _table_facts(table, None)
    facts.update(_identifier(str(table.name())))
    facts["schema"] = spark_struct(str(table.schema().toString()))
    return facts


#: Iceberg primitive type -> Spark type name.
_SPARK_TYPES = {
    "boolean": "boolean",
    "int": "integer",
    "long": "long",
    "float": "float",
    "double": "double",
    "date": "date",
    "time": "long",
    "timestamp": "timestamp_ntz",
    "timestamptz": "timestamp",
    "string": "string",
    "uuid": "string",
    "binary": "binary",
}
#: A top-level column of ``Schema.toString()``: ``  1: a: optional long``.
_COLUMN = re.compile(r"^  \d+: (?P<name>[^:]+): (?:optional|required) (?P<type>.+?)(?: \(.*\))?$")


def _spark_type(iceberg_type: str) -> str:
    if iceberg_type.startswith("decimal"):
        return iceberg_type.replace(" ", "")
    if iceberg_type.startswith("fixed"):
        return "binary"
    for prefix, spark in (("struct", "struct"), ("list", "array"), ("map", "map")):
        if iceberg_type.startswith(prefix):
            return spark
    return _SPARK_TYPES.get(iceberg_type, iceberg_type)


def spark_struct(schema_text: str) -> dict[str, Any]:
    """A Spark ``StructType`` JSON of the top-level columns of an Iceberg schema's text
    (nested types by kind only)."""
    fields = []
    for line in schema_text.splitlines():
        match = _COLUMN.match(line)
        if match:
            fields.append({"name": match["name"], "type": _spark_type(match["type"].strip())})
    return {"type": "struct", "fields": fields}


def _table_facts(table: Any, pinned: Any) -> dict[str, Any]:
    """Facts of an ``org.apache.iceberg.Table``; ``pinned`` is a time-travel snapshot id."""
    facts: dict[str, Any] = {"storage_layer": "iceberg", "location": str(table.location())}
    if pinned is not None:
        facts["version"] = str(pinned)
    else:
        current = table.currentSnapshot()
        if current is not None:
            facts["version"] = str(current.snapshotId())
            parent = current.parentId()
            if parent is not None:
                # What a write's own read of its table saw (see dsv2.read_v2_relation).
                facts["previous_version"] = str(parent)
    facts["file_format"] = _file_format(table.properties())
    facts.update(_catalog_facts(table))
    return facts


def _catalog_facts(table: Any) -> dict[str, Any]:
    """The type and warehouse of the catalog of an ``org.apache.iceberg.Table``."""
    facts: dict[str, Any] = {}
    try:
        catalog = table.io().properties()
        for key, fact in (("type", "catalog_type"), ("warehouse", "warehouse")):
            value = catalog.get(key)
            if value is not None:
                facts[fact] = str(value)
    except Exception:
        logger.debug("no catalog properties on the table's FileIO", exc_info=True)
    if "catalog_type" not in facts:
        try:
            operations = str(table.operations().getClass().getSimpleName())
            facts["catalog_type"] = _CATALOG_TYPES.get(operations, operations)
        except Exception:
            logger.debug("no table operations", exc_info=True)
    return facts


def _stream_sink_version(sink: Any) -> Callable[[], str]:
    """The reader of the snapshot a stream's latest micro-batch committed to an Iceberg
    ``SparkTable`` sink: the current snapshot (the written branch's head) of the table
    object the stream's writes commit through, whose own commits advance it (the
    table is looked up once; each read is two py4j calls)."""
    table = sink.table()
    branch = _branch(sink)

    def read() -> str:
        snapshot = table.currentSnapshot() if branch is None else table.snapshot(branch)
        if snapshot is None:
            raise LookupError(f"no snapshot in {table}")
        return str(snapshot.snapshotId())

    return read


FAMILY = SourceFamily(
    name="iceberg",
    v2_table_lookups={
        "SparkTable": iceberg_table_facts,
        "StagedSparkTable": iceberg_table_facts,
        # The input partitions of a scan, met under a DataFrame made from an RDD.
        "SparkInputPartition": input_partition_facts,
    },
    v2_table_pins={
        "SparkTable": TablePin(_take_metadata, pinned_facts, _METADATA.prepare),
        # The table an atomic CTAS/RTAS wrote, pinned by the command (dsv2_pins.StagedTables).
        "StagedSparkTable": TablePin(_take_metadata, pinned_facts, _METADATA.prepare),
    },
    stream_sink_versions={"SparkTable": _stream_sink_version},
)
