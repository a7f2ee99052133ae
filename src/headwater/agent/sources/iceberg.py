"""Iceberg tables: the facts of an Iceberg ``SparkTable`` the DSv2 family asks for.

Plan nodes over Iceberg tables are :mod:`.dsv2`'s; this module answers its
``v2_table_lookups`` for Iceberg's table classes with the table's location,
the snapshot (``version``: the one a time-travel read pinned, else the
table's current snapshot — after a write, the one it made), the storage
layer and file format, and the catalog's type and warehouse.
"""

from __future__ import annotations

import logging
from typing import Any

from headwater.agent.sources.family import SourceFamily

__all__ = ["FAMILY", "iceberg_table_facts"]

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
    """Location, snapshot, storage and catalog facts of an Iceberg ``SparkTable``."""
    table = jtable.table()  # org.apache.iceberg.Table
    facts: dict[str, Any] = {"storage_layer": "iceberg", "location": str(table.location())}
    pinned = jtable.snapshotId()  # set for a time-travel read, else null
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
    properties = table.properties()
    facts["file_format"] = str(properties.get("write.format.default") or "parquet").lower()
    try:
        catalog = table.io().properties()
        if catalog.get("type") is not None:
            facts["catalog_type"] = str(catalog.get("type"))
        if catalog.get("warehouse") is not None:
            facts["warehouse"] = str(catalog.get("warehouse"))
    except Exception:
        logger.debug("no catalog properties on the table's FileIO", exc_info=True)
    if "catalog_type" not in facts:
        try:
            operations = str(table.operations().getClass().getSimpleName())
            facts["catalog_type"] = _CATALOG_TYPES.get(operations, operations)
        except Exception:
            logger.debug("no table operations", exc_info=True)
    return facts


FAMILY = SourceFamily(
    name="iceberg",
    v2_table_lookups={"SparkTable": iceberg_table_facts, "StagedSparkTable": iceberg_table_facts},
)
