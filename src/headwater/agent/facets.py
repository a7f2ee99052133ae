"""Captured datasets -> OpenLineage dataset JSON with their facets.

Which facets: ``schema`` (nested fields), ``dataSource``, ``datasetType``
(TABLE, FILE or TOPIC), ``symlinks`` and ``catalog`` for catalog tables,
``version`` and ``storage`` for table formats, ``lifecycleStateChange`` for DDL and overwrites,
``columnLineage`` on outputs, ``outputStatistics`` from Spark's write metrics.
Facets the configuration disables (``spark.openlineage.facets.<name>.disabled``)
are left out here, in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from headwater.agent.sources import CapturedDataset
from headwater.events import facets as F
from headwater.events.model import PRODUCER

__all__ = [
    "DATASET_TYPE_SCHEMA",
    "DECLARED_SCHEMA",
    "INPUT_FACET_SCHEMA",
    "dataset_type",
    "input_dataset_json",
    "output_dataset_json",
]

Enabled = Callable[[str], bool]

#: The input facet holding the schema a consumer declares for a topic's value.
DECLARED_SCHEMA = "declaredSchema"
INPUT_FACET_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/InputDatasetFacet"
DATASET_TYPE_SCHEMA = (
    "https://openlineage.io/spec/facets/1-0-1/DatasetTypeDatasetFacet.json#/$defs/DatasetTypeDatasetFacet"
)
#: Namespace schemes of file systems and object stores: their datasets are files.
_FILE_SCHEMES = frozenset(
    {"file", "s3", "gs", "hdfs", "abfs", "abfss", "wasb", "wasbs", "adl", "dbfs", "viewfs", "oss", "cos"}
)


def dataset_type(ds: CapturedDataset) -> str:
    """TABLE for catalog and database tables, FILE for paths, TOPIC for Kafka topics."""
    if ds.dataset_type:
        return ds.dataset_type
    if ds.is_table:
        return "TABLE"
    scheme = ds.namespace.split("://", 1)[0].lower()
    if scheme == "kafka":
        return "TOPIC"
    return "FILE" if scheme in _FILE_SCHEMES else "TABLE"


def _common(ds: CapturedDataset, enabled: Enabled, catalog: Mapping[str, Any] | None) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if enabled("dataSource"):
        facets["dataSource"] = F.data_source_facet(ds.namespace)
    if enabled("datasetType"):
        facets["datasetType"] = {
            "_producer": PRODUCER,
            "_schemaURL": DATASET_TYPE_SCHEMA,
            "datasetType": dataset_type(ds),
        }
    if ds.fields and enabled("schema"):
        facets["schema"] = F.schema_facet(ds.fields)
    if ds.symlinks and enabled("symlinks"):
        facets["symlinks"] = F.symlinks_facet(ds.symlinks)
    if ds.catalog is not None and enabled("catalog"):
        facets["catalog"] = F.catalog_facet(**ds.catalog)
    elif catalog is not None and (ds.is_table or ds.in_warehouse) and enabled("catalog"):
        facets["catalog"] = F.catalog_facet(**catalog)
    if ds.version is not None and enabled("version"):
        facets["version"] = F.version_facet(ds.version)
    if ds.storage is not None and enabled("storage"):
        facets["storage"] = F.storage_facet(*ds.storage)
    if ds.lifecycle and enabled("lifecycleStateChange"):
        facets["lifecycleStateChange"] = F.lifecycle_state_change_facet(ds.lifecycle, ds.previous)
    return facets


def input_dataset_json(
    ds: CapturedDataset,
    enabled: Enabled,
    catalog: Mapping[str, Any] | None = None,
    statistics: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """An ``InputDataset`` object; ``statistics`` (``input_rows``, ``input_bytes``) are
    what the action read of it (``inputStatistics``)."""
    input_facets: dict[str, Any] = {}
    if statistics and "input_rows" in statistics and enabled("inputStatistics"):
        input_facets["inputStatistics"] = F.input_statistics_facet(
            statistics["input_rows"], statistics.get("input_bytes")
        )
    if ds.declared_value is not None and enabled(DECLARED_SCHEMA):
        input_facets[DECLARED_SCHEMA] = {
            **F.schema_facet([("value", "struct", ds.declared_value)]),
            "_schemaURL": INPUT_FACET_SCHEMA,
        }
    return {
        "namespace": ds.namespace,
        "name": ds.name,
        "facets": _common(ds, enabled, catalog),
        "inputFacets": input_facets,
    }


def output_dataset_json(
    ds: CapturedDataset,
    enabled: Enabled,
    catalog: Mapping[str, Any] | None = None,
    lineage: tuple[Mapping[str, Sequence[Mapping[str, Any]]], Sequence[Mapping[str, Any]]]
    | None = None,
    statistics: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """An ``OutputDataset`` object; ``lineage`` is ``(fields, dataset)`` of columnLineage."""
    facets = _common(ds, enabled, catalog)
    if lineage is not None and (lineage[0] or lineage[1]) and enabled("columnLineage"):
        facets["columnLineage"] = F.column_lineage_facet(lineage[0], lineage[1])
    out: dict[str, Any] = {
        "namespace": ds.namespace,
        "name": ds.name,
        "facets": facets,
        "outputFacets": {},
    }
    if statistics and "numOutputRows" in statistics and enabled("outputStatistics"):
        out["outputFacets"] = {
            "outputStatistics": F.output_statistics_facet(
                statistics.get("numOutputRows"),
                statistics.get("numOutputBytes"),
                statistics.get("numFiles"),
            )
        }
    return out
