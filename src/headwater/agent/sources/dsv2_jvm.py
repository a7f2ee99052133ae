"""The py4j side of the DSv2 family (:mod:`.dsv2`): which v2 commands it knows, and
the look-ups that fetch the facts their plan JSON leaves ``null``.

A relation's table (name, class, properties, schema) and its format's own
facts (``v2_table_lookups``, keyed by the table's short class name), the
catalog's name and the identifier; a created, replaced or altered table loaded
from its catalog after the command ran; where a dropped table was; the tables a
``DataSourceRDD``'s input partitions read. Each look-up may raise: the capture
logs and goes on.

A write or a create is captured on the agent's capture thread like any action,
but the table it wrote is catalog state the job's next statement may change (a
snapshot committed, a schema altered, the table dropped). So when Spark reports
it, :func:`pin_table` holds on to that state on the listener thread — the table
object (a create's loaded from its catalog) and its format's handle on the
state (:class:`~.family.TablePin`: an Iceberg ``TableMetadata``), a handful of
py4j calls — and :func:`pinned_root_facts` reads the facts from what was held.
An atomic CTAS or RTAS is reported as its write into the staged table first,
then as the command: the command pins the staged table that write held
(:class:`StagedTables`) rather than loading the table from its catalog.
An ALTER is pinned as a create is: its table loaded from its catalog, where
alone the state the command left is (Spark drops the table the catalog's
``alterTable`` returns, and the plan's ``ResolvedTable`` is the table as it was
resolved, before the change); the columns an ADD COLUMNS added are read from
the command on the capture thread.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from headwater.agent.plan import short_class
from headwater.agent.sources import formats
from headwater.agent.py4j.chains import JvmChain, chained, class_name
from headwater.agent.sources.jvm_common import option

__all__ = [
    "NESTED_WRITE",
    "PINNED",
    "PinnedTable",
    "StagedTables",
    "TABLE_ALTERS",
    "TABLE_CREATES",
    "TABLE_WRITES",
    "V2_DROP",
    "alter_facts",
    "create_facts",
    "dropped_table_facts",
    "pin_table",
    "pinned_root_facts",
    "rdd_scan_tables",
    "scan_relation_facts",
    "streaming_relation_facts",
    "table_facts",
    "table_write_facts",
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

#: Roots captured on the capture thread with their table's state pinned when Spark
#: reports them (see :func:`pin_table`).
PINNED = frozenset(TABLE_WRITES) | frozenset(TABLE_CREATES) | TABLE_ALTERS

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


def _unwrapped(jtable: Any, build: bool = True) -> tuple[Any, str]:
    """The table and its class name; a DELETE/UPDATE/MERGE reads and writes its table
    through a ``RowLevelOperationTable``, which is looked through."""
    table_class = class_name(jtable, build)
    if short_class(table_class) == "RowLevelOperationTable":
        jtable = jtable.table()
        table_class = class_name(jtable, build)
    return jtable, table_class


def table_facts(jtable: Any) -> dict[str, Any]:
    """A DSv2 ``Table``'s name, class and properties, with its format's own facts."""
    jtable, table_class = _unwrapped(jtable)
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


def _identifier_facts(catalog: Any, ident: Any) -> dict[str, Any]:
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
    facts = _identifier_facts(option(jrelation.catalog()), option(jrelation.identifier()))
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
        _RELATION_IDENT.prepare(relation)
    if "options" in facts:
        try:
            facts["options"].update(_string_map(node.writeOptions()))
        except Exception:
            logger.debug("no write options", exc_info=True)
    return facts


def _loaded_table_facts(catalog: Any, ident: Any) -> dict[str, Any]:
    """The table ``ident`` names, loaded from ``catalog`` now (after the command ran)."""
    facts = _identifier_facts(catalog, ident)
    try:
        facts.update(table_facts(catalog.loadTable(ident)))
    except Exception:
        logger.debug("could not load %s", facts.get("name"), exc_info=True)
    return facts


def create_facts(node: Any) -> dict[str, Any]:
    resolved = node.name()  # a ResolvedIdentifier
    return _loaded_table_facts(resolved.catalog(), resolved.identifier())


#: A v2 relation's identifier as text (the staged table a CTAS/RTAS wrote).
_RELATION_IDENT = JvmChain(
    ("org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation", "identifier", ()),
    ("scala.Option", "get", ()),
    ("java.lang.Object", "toString", ()),
)
#: A v2 create's identifier as text.
_CREATE_IDENT = JvmChain(
    ("org.apache.spark.sql.catalyst.plans.logical.V2CreateTablePlan", "tableName", ()),
    ("java.lang.Object", "toString", ()),
)


class StagedTables:
    """The staged tables of the atomic CTAS/RTAS writes reported last, by identifier.

    Spark reports an atomic CTAS's or RTAS's write into its staged table just
    before the command, and by the time the command is reported the staged table
    holds the state the command committed. The command takes its table from here
    instead of loading it from the catalog on the listener thread (an Iceberg
    Hadoop catalog reads a metadata file to load one). Only tables whose format
    pins their state (:class:`~.family.TablePin`) are kept; used on Spark's
    listener thread only.
    """

    _KEPT = 8

    def __init__(self) -> None:
        self._tables: dict[str, Any] = {}

    def keep(self, relation: Any, jtable: Any, table_class: str) -> None:
        if short_class(table_class) not in formats.TABLE_PINS:
            return
        key = str(
            chained(_RELATION_IDENT, lambda r: r.identifier().get().toString(), relation, False)
        )
        self._tables.pop(key, None)
        self._tables[key] = jtable
        while len(self._tables) > self._KEPT:
            del self._tables[next(iter(self._tables))]

    def take(self, node: Any) -> Any:
        """The staged table of the create ``node``, if its write was kept."""
        if not self._tables:
            return None
        key = str(chained(_CREATE_IDENT, lambda n: n.tableName().toString(), node, False))
        return self._tables.pop(key, None)


@dataclass(frozen=True)
class PinnedTable:
    """The state of the table a write, a create or an ALTER wrote, held when Spark
    reported it."""

    #: The DSv2 ``Table``: the one the write's relation holds, or a create's or an
    #: ALTER's, loaded from its catalog right after the command.
    table: Any
    table_class: str
    #: The format's handle on the table's state (:class:`~.family.TablePin`), if any.
    handle: Any
    #: The short class of the command's root (a key of :data:`PINNED`).
    root_class: str

    @property
    def loaded(self) -> bool:
        """Whether :attr:`table` was loaded after the command (not a write's own)."""
        return self.root_class not in TABLE_WRITES


def _loaded_after(node: Any, root_class: str, staged: StagedTables | None) -> Any:
    """The table a create or an ALTER ``node`` left: a CTAS's/RTAS's staged table if
    ``staged`` kept it, else loaded from its catalog now."""
    if root_class in TABLE_CREATES:
        jtable = staged.take(node) if staged is not None else None
        if jtable is not None:
            return jtable
        resolved = node.name()  # a ResolvedIdentifier
    else:
        resolved = node.table()  # a ResolvedTable
    return resolved.catalog().loadTable(resolved.identifier())


def pin_table(node: Any, root_class: str, staged: StagedTables | None = None) -> PinnedTable | None:
    """On the listener thread: hold on to the state of the table the write, create or
    ALTER ``node`` wrote (4–9 py4j calls once the capture thread has built the chains
    they use; no I/O but the catalog look-up of a create whose staged table ``staged``
    does not hold, or of an ALTER)."""
    relation = jtable = None
    if root_class in TABLE_WRITES:
        relation = getattr(node, TABLE_WRITES[root_class][0])()
        jtable = relation.table()
    elif root_class in TABLE_CREATES or root_class in TABLE_ALTERS:
        jtable = _loaded_after(node, root_class, staged)
    else:
        return None
    jtable, table_class = _unwrapped(jtable, build=False)
    loaded = root_class not in TABLE_WRITES
    if short_class(table_class).startswith("Staged") and not loaded:
        if staged is not None:  # a CTAS's own write, reported as the command next
            staged.keep(relation, jtable, table_class)
        return None
    pin = formats.TABLE_PINS.get(short_class(table_class))
    if pin is not None and pin.loaded_only and not loaded:
        pin = None
    if pin is None and not loaded:
        return None  # a write whose facts do not change with the table (Delta's: see delta.py)
    handle = pin.take(jtable) if pin is not None else None
    return PinnedTable(jtable, table_class, handle, root_class)


def pinned_root_facts(pinned: PinnedTable, node: Any) -> dict[str, Any]:
    """The facts of a write's, a create's or an ALTER's root ``node`` from the state
    :func:`pin_table` held: the table as it was loaded then, and the format's facts of
    that state (the version written, the location, the schema) over what the table
    says now."""
    if pinned.loaded:
        if pinned.root_class in TABLE_CREATES:
            _CREATE_IDENT.prepare(node)
            resolved = node.name()
        else:
            resolved = node.table()
        facts = _identifier_facts(resolved.catalog(), resolved.identifier())
        facts.update(table_facts(pinned.table))
        if "read_version" in facts:
            # A table loaded right after the command: the version it read is the
            # version the command left.
            facts["version"] = facts["read_version"]
        if pinned.root_class == "AddColumns":
            facts.update(_added_columns(node))
    else:
        facts = table_write_facts(node)
    pin = formats.TABLE_PINS.get(short_class(pinned.table_class))
    if pin is not None and pin.prepare is not None:
        pin.prepare(pinned.table)
    if pin is not None and pinned.handle is not None:
        try:
            facts.update(pin.facts(pinned.table, pinned.handle))
        except Exception:
            logger.debug(
                "no facts from the pinned state of %s", facts.get("table_name"), exc_info=True
            )
    return facts


def _added_columns(node: Any) -> dict[str, Any]:
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
        facts.update(_added_columns(node))
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
    facts = _identifier_facts(catalog, ident)
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
                    lookup = formats.TABLE_LOOKUPS.get(short_class(str(partition.getClass().getName())))
                    if lookup is not None:
                        facts = dict(lookup(partition))
                        if facts not in found:
                            found.append(facts)
        dependencies = current.dependencies()
        for index in range(int(dependencies.size())):
            stack.append(dependencies.apply(index).rdd())
    return found
