"""Holding on to the state of the v2 table a command wrote, when Spark reports it.

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

import logging
from dataclasses import dataclass
from typing import Any

from headwater.agent.plan import short_class
from headwater.agent.py4j.chains import JvmChain, chained
from headwater.agent.sources import formats
from headwater.agent.sources.dsv2_jvm import (
    RELATION_IDENT,
    TABLE_ALTERS,
    TABLE_CREATES,
    TABLE_WRITES,
    added_columns,
    identifier_facts,
    table_facts,
    table_write_facts,
    unwrapped_table,
)

__all__ = ["PINNED", "PinnedTable", "StagedTables", "pin_table", "pinned_root_facts"]

logger = logging.getLogger(__name__)

#: Roots captured on the capture thread with their table's state pinned when Spark
#: reports them (see :func:`pin_table`).
PINNED = frozenset(TABLE_WRITES) | frozenset(TABLE_CREATES) | TABLE_ALTERS

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
            chained(RELATION_IDENT, lambda r: r.identifier().get().toString(), relation, False)
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
    jtable, table_class = unwrapped_table(jtable, build=False)
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
        facts = identifier_facts(resolved.catalog(), resolved.identifier())
        facts.update(table_facts(pinned.table))
        if "read_version" in facts:
            # A table loaded right after the command: the version it read is the
            # version the command left.
            facts["version"] = facts["read_version"]
        if pinned.root_class == "AddColumns":
            facts.update(added_columns(node))
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
