"""What table formats tell the DSv2 family about their own tables, filled in by the registry.

The DSv2 family (:mod:`.dsv2`, :mod:`.dsv2_jvm`) reads and writes any v2 table;
what a format knows of its own tables — Iceberg's snapshot, Delta's version,
Kafka topics named by a relation's options — comes from the families registered
for that format (``v2_table_lookups``, ``v2_option_datasets``, ``v2_table_pins``).
Those families sit beside the DSv2 family and the registry above them all, so
the registry fills these mappings when it is imported (before any plan is captured) and
the DSv2 family reads them here, one floor down.
"""

from __future__ import annotations

from headwater.agent.sources.family import Lookup, OptionDatasets, TablePin

__all__ = ["OPTION_DATASETS", "TABLE_LOOKUPS", "TABLE_PINS"]

#: DSv2 ``Table`` class (short name) -> its format's look-up on the table.
TABLE_LOOKUPS: dict[str, Lookup] = {}
#: DSv2 ``Table`` class (short name) -> the datasets its relation's options name.
OPTION_DATASETS: dict[str, OptionDatasets] = {}
#: DSv2 ``Table`` class (short name) -> how its format pins a written table's state.
TABLE_PINS: dict[str, TablePin] = {}
