"""The py4j side of the DSv2 family (:mod:`.dsv2`): which v2 commands it knows, and
the look-ups that fetch the facts their plan JSON leaves ``null``.

A relation's table (name, class, properties, schema) and its format's own
facts (``v2_table_lookups``, keyed by the table's short class name), the
catalog's name and the identifier; a created, replaced or altered table loaded
from its catalog after the command ran; where a dropped table was; the tables a
``DataSourceRDD``'s input partitions read. Each look-up may raise: the capture
logs and goes on.

A write's, a create's or an ALTER's table state is held on the listener thread
by :mod:`.dsv2_pins`, which reads its facts through the look-ups here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from headwater.agent.plan import short_class
from headwater.agent.py4j.chains import JvmChain, class_name
from headwater.agent.sources import formats
from headwater.agent.sources.jvm_common import option

__all__ = [
    "NESTED_WRITE",
    "RELATION_IDENT",
    "TABLE_ALTERS",
    "TABLE_CREATES",
    "TABLE_WRITES",
    "V2_DROP",
    "added_columns",
    "alter_facts",
    "create_facts",
    "dropped_table_facts",
    "identifier_facts",
    "rdd_scan_tables",
    "scan_relation_facts",
    "streaming_relation_facts",
    "table_facts",
    "table_write_facts",
    "unwrapped_table",
    "v2_relation_facts",
]

logger = logging.getLogger(__name__)

#: Writes into an existing v2 table: the relation written is the root's ``table``
#: (``originalTable`` for the row-level rewrites, whose ``table`` wraps it), with the
#: ``lifecycleStateChange`` each reports.
TABLE_WRITES: dict[str, tuple[str, str | None]] = {
    "AppendData": ("table", None),
    "OverwriteByExpression": ("table", "OVERWRITE"),
    "OverwritePartitionsDynamic": ("table", "OVERWRITE"),
    "ReplaceData": ("originalTable", None),
    "WriteDelta": ("originalTable", None),
    # A DELETE that drops whole files (no rows rewritten), as analysed and as the
    # optimizer makes it when the filters alone decide (a whole partition).
    "DeleteFromTable": ("table", None),
    "DeleteFromTableWithFilters": ("table", None),
}
#: Commands that create or replace a v2 table (named by a ``ResolvedIdentifier``).
TABLE_CREATES: dict[str, str] = {
    "CreateTableAsSelect": "CREATE",
    "ReplaceTableAsSelect": "OVERWRITE",
    "CreateTable": "CREATE",
    "ReplaceTable": "OVERWRITE",
}
#: ALTER TABLE commands on a v2 table (a ``ResolvedTable`` child): the table as it is after.
TABLE_ALTERS = frozenset(
    {
        "AddColumns",
        "ReplaceColumns",
        "DropColumns",
        "RenameColumn",
        "AlterColumn",  # Spark 3.5
        "AlterColumns",  # Spark 4.1: one command for all the ALTER COLUMNs of a statement
        "SetTableProperties",
        "UnsetTableProperties",
        "SetTableLocation",
    }
)

#: Catalog classes and interfaces whose tables live in Spark's session catalog.
_SESSION_BACKED = frozenset(
    {
        "org.apache.spark.sql.execution.datasources.v2.V2SessionCatalog",
        "org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension",
        "org.apache.spark.sql.connector.catalog.CatalogExtension",
    }
)

#: Fact of a write into a staged table: the write an atomic CTAS/RTAS runs as a
#: query of its own, which the listener hears of before the command itself.
NESTED_WRITE = "nested_write"
#: Fact of a ``DropTable`` of a v2 catalog's table (see :func:`dropped_table_facts`).
V2_DROP = "v2_drop"


def _format_facts(jtable: Any, table_class: str) -> dict[str, Any]:
    lookup = formats.TABLE_LOOKUPS.get(short_class(table_class))
    if lookup is None:
        return {}
    try:
        return dict(lookup(jtable))
    except Exception:
        logger.debug("format look-up failed for %s", table_class, exc_info=True)
        return {}


def unwrapped_table(jtable: Any, build: bool = True) -> tuple[Any, str]:
    """The table and its class name; a DELETE/UPDATE/MERGE reads and writes its table
    through a ``RowLevelOperationTable``, which is looked through."""
    table_class = class_name(jtable, build)
    if short_class(table_class) == "RowLevelOperationTable":
        jtable = jtable.table()
        table_class = class_name(jtable, build)
    return jtable, table_class


def table_facts(jtable: Any) -> dict[str, Any]:
    """A DSv2 ``Table``'s name, class and properties, with its format's own facts."""
    jtable, table_class = unwrapped_table(jtable)
    facts: dict[str, Any] = {"table_name": str(jtable.name()), "table_class": table_class}
    try:
        properties = jtable.properties()
        for key in ("location", "provider"):
            value = properties.get(key)
            if value is not None:
                facts[f"table_{key}"] = str(value)
    except Exception:
        logger.debug("no table properties", exc_info=True)
    try:
        facts["schema"] = _struct_json(jtable.schema())
    except Exception:
        logger.debug("no table schema", exc_info=True)
    facts.update(_format_facts(jtable, table_class))
    return facts


def _struct_json(struct: Any) -> Any:
    return json.loads(struct.json())


def identifier_facts(catalog: Any, ident: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    if catalog is not None:
        facts["catalog"] = str(catalog.name())
        facts["catalog_class"] = str(catalog.getClass().getName())
    if ident is not None:
        facts["namespace"] = [str(part) for part in ident.namespace()]
        facts["name"] = str(ident.name())
    return facts


def _names_by_options(table_class: str) -> bool:
    return short_class(table_class) in formats.OPTION_DATASETS


def _string_map(options: Any) -> dict[str, str]:
    """A Java or Scala string map as a dict."""
    if options is None:
        return {}
    try:
        entries = options.entrySet().toArray()  # java.util.Map
        return {str(e.getKey()): str(e.getValue()) for e in entries}
    except Exception:
        keys = options.keys().toSeq()  # scala.collection.Map
        return {str(keys.apply(i)): str(options.apply(keys.apply(i))) for i in range(keys.size())}


def _relation_facts(jrelation: Any, options: Callable[[], Any]) -> dict[str, Any]:
    """Facts of a relation over a v2 table: its table's, its catalog's name and its
    identifier; for a table named by its options (a Kafka table), ``options()``."""
    jtable = jrelation.table()
    table_class = str(jtable.getClass().getName())
    if _names_by_options(table_class):
        return {"table_class": table_class, "options": _string_map(options())}
    # The format may name the table better than the identifier the relation was
    # loaded by (Iceberg's time-travel selectors ride on the table name), so its
    # facts come last.
    facts = identifier_facts(option(jrelation.catalog()), option(jrelation.identifier()))
    facts.update(table_facts(jtable))
    return facts


def v2_relation_facts(jrelation: Any) -> dict[str, Any]:
    """Facts of a ``DataSourceV2Relation`` (see :func:`_relation_facts`)."""
    return _relation_facts(jrelation, jrelation.options)


def streaming_relation_facts(jrelation: Any) -> dict[str, Any]:
    """Facts of a ``StreamingRelationV2``, a stream read of a v2 table, as those of a
    ``DataSourceV2Relation``: its options are the reader's ``extraOptions``, and its
    catalog and identifier are Options (set for a table read by name)."""
    return _relation_facts(jrelation, jrelation.extraOptions)


def scan_relation_facts(node: Any) -> dict[str, Any]:
    """A ``DataSourceV2ScanRelation``'s relation facts, and its scan's description:
    the filters a source takes into its scan entirely (Iceberg takes every one it
    can) leave no ``Filter`` in the plan, only there."""
    facts = v2_relation_facts(node.relation())
    try:
        facts["scan_description"] = str(node.scan().description())
    except Exception:
        logger.debug("no scan description", exc_info=True)
    return facts


def table_write_facts(node: Any) -> dict[str, Any]:
    field = TABLE_WRITES[short_class(str(node.getClass().getName()))][0]
    relation = getattr(node, field)()
    facts = v2_relation_facts(relation)
    if short_class(str(facts.get("table_class", ""))).startswith("Staged"):
        facts[NESTED_WRITE] = True
        RELATION_IDENT.prepare(relation)
    if "options" in facts:
        try:
            facts["options"].update(_string_map(node.writeOptions()))
        except Exception:
            logger.debug("no write options", exc_info=True)
    return facts


def _loaded_table_facts(catalog: Any, ident: Any) -> dict[str, Any]:
    """The table ``ident`` names, loaded from ``catalog`` now (after the command ran)."""
    facts = identifier_facts(catalog, ident)
    try:
        facts.update(table_facts(catalog.loadTable(ident)))
    except Exception:
        logger.debug("could not load %s", facts.get("name"), exc_info=True)
    return facts


def create_facts(node: Any) -> dict[str, Any]:
    resolved = node.name()  # a ResolvedIdentifier
    return _loaded_table_facts(resolved.catalog(), resolved.identifier())


#: A v2 relation's identifier as text (the staged table a CTAS/RTAS wrote).
RELATION_IDENT = JvmChain(
    ("org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation", "identifier", ()),
    ("scala.Option", "get", ()),
    ("java.lang.Object", "toString", ()),
)


def added_columns(node: Any) -> dict[str, Any]:
    """The columns an ``AddColumns`` command adds, read from the command (immutable,
    unlike the catalog's table), as ``added_columns`` (name and Spark type JSON)."""
    try:
        columns = node.columnsToAdd()
        return {
            "added_columns": [
                {
                    "name": str(columns.apply(i).colName()),
                    "type": json.loads(str(columns.apply(i).dataType().json())),
                }
                for i in range(int(columns.size()))
            ]
        }
    except Exception:
        logger.debug("no columns to add", exc_info=True)
        return {}


def alter_facts(node: Any) -> dict[str, Any]:
    """An ALTER's table loaded from its catalog now, when its state could not be
    pinned when Spark reported the command (see :func:`pin_table`)."""
    resolved = node.table()  # a ResolvedTable, holding the table as it was before
    facts = _loaded_table_facts(resolved.catalog(), resolved.identifier())
    if short_class(str(node.getClass().getName())) == "AddColumns":
        facts.update(added_columns(node))
    return facts


def _session_backed(catalog: Any) -> bool:
    """Whether ``catalog`` is the session catalog or extends it (its class, a
    superclass or one of their interfaces is in :data:`_SESSION_BACKED`)."""
    current = catalog.getClass()
    while current is not None:
        if str(current.getName()) in _SESSION_BACKED:
            return True
        if any(str(i.getName()) in _SESSION_BACKED for i in current.getInterfaces()):
            return True
        current = current.getSuperclass()
    return False


def dropped_table_facts(node: Any) -> dict[str, Any]:
    """A v2 ``DropTable``: the identifier, and where the table was.

    The table is gone when the listener hears of the drop, so its location is
    the one the catalog gives its tables: the namespace's location plus the
    table name (the Iceberg Hadoop catalog's layout, and the default of the
    others). Drops in the session catalog, or in a catalog that extends it
    (Delta's, Iceberg's ``SparkSessionCatalog``), are :mod:`.ddl`'s.
    """
    resolved = node.child()
    catalog, ident = resolved.catalog(), resolved.identifier()
    if _session_backed(catalog):
        return {}
    facts = identifier_facts(catalog, ident)
    facts[V2_DROP] = True
    try:
        metadata = catalog.loadNamespaceMetadata(ident.namespace())
        base = metadata.get("location")
        if base is not None:
            facts["table_location"] = f"{str(base).rstrip('/')}/{facts['name']}"
    except Exception:
        logger.debug("no namespace location for %s", facts.get("name"), exc_info=True)
    return facts


#: RDDs walked to find the DSv2 scans under a DataFrame made from an RDD.
_MAX_RDDS = 200


def rdd_scan_tables(rdd: Any) -> list[dict[str, Any]]:
    """Facts of the DSv2 tables an RDD's lineage scans (``df.rdd`` of a table read,
    mapped and made a DataFrame again): each ``DataSourceRDD``'s input partitions,
    asked by their class through ``v2_table_lookups`` (an Iceberg partition knows its
    table)."""
    found: list[dict[str, Any]] = []
    seen: set[int] = set()
    stack = [rdd]
    while stack and len(seen) < _MAX_RDDS:
        current = stack.pop()
        ident = int(current.id())
        if ident in seen:
            continue
        seen.add(ident)
        if str(current.getClass().getName()).endswith(".DataSourceRDD"):
            partitions = current.partitions()
            if len(partitions):
                inputs = partitions[0].inputPartitions()
                if int(inputs.size()):
                    partition = inputs.head()
                    lookup = formats.TABLE_LOOKUPS.get(
                        short_class(str(partition.getClass().getName()))
                    )
                    if lookup is not None:
                        facts = dict(lookup(partition))
                        if facts not in found:
                            found.append(facts)
        dependencies = current.dependencies()
        for index in range(int(dependencies.size())):
            stack.append(dependencies.apply(index).rdd())
    return found
