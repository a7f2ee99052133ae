"""Builders for the standard OpenLineage facets headwater emits.

Each builder returns a JSON-ready dict carrying ``_producer`` and the
``_schemaURL`` of the facet's schema version, so every facet validates against
the spec's facet schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from headwater.events.model import PRODUCER

__all__ = [
    "FACET_SCHEMA_URLS",
    "PRODUCER",
    "SchemaField",
    "catalog_facet",
    "column_lineage_facet",
    "data_source_facet",
    "error_message_facet",
    "facet",
    "input_statistics_facet",
    "job_type_facet",
    "lifecycle_state_change_facet",
    "output_statistics_facet",
    "parent_facet",
    "processing_engine_facet",
    "schema_facet",
    "source_code_location_facet",
    "sql_facet",
    "storage_facet",
    "symlinks_facet",
    "tags_facet",
    "version_facet",
]

_BASE = "https://openlineage.io/spec/facets"

#: facet key -> the schema URL of the facet version we write.
FACET_SCHEMA_URLS: Mapping[str, str] = {
    "catalog": f"{_BASE}/1-1-0/CatalogDatasetFacet.json#/$defs/CatalogDatasetFacet",
    "columnLineage": f"{_BASE}/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
    "dataSource": f"{_BASE}/1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet",
    "errorMessage": f"{_BASE}/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
    "inputStatistics": (
        f"{_BASE}/1-0-0/InputStatisticsInputDatasetFacet.json#/$defs/InputStatisticsInputDatasetFacet"
    ),
    "jobType": f"{_BASE}/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
    "lifecycleStateChange": (
        f"{_BASE}/1-0-1/LifecycleStateChangeDatasetFacet.json#/$defs/LifecycleStateChangeDatasetFacet"
    ),
    "outputStatistics": (
        f"{_BASE}/1-0-2/OutputStatisticsOutputDatasetFacet.json"
        "#/$defs/OutputStatisticsOutputDatasetFacet"
    ),
    "parent": f"{_BASE}/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
    "processing_engine": (
        f"{_BASE}/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet"
    ),
    "schema": f"{_BASE}/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
    "sourceCodeLocation": f"{_BASE}/1-1-0/SourceCodeLocationJobFacet.json#/$defs/SourceCodeLocationJobFacet",
    "sql": f"{_BASE}/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet",
    "storage": f"{_BASE}/1-0-1/StorageDatasetFacet.json#/$defs/StorageDatasetFacet",
    "symlinks": f"{_BASE}/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
    "tags_job": f"{_BASE}/1-0-0/TagsJobFacet.json#/$defs/TagsJobFacet",
    "tags_run": f"{_BASE}/1-0-0/TagsRunFacet.json#/$defs/TagsRunFacet",
    "version": f"{_BASE}/1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet",
}

# A schema field: (name, type, nested fields). Nested fields describe structs,
# the element struct of arrays and the value struct of maps.
SchemaField = tuple[str, str, Sequence["SchemaField"]]


def facet(key: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with the producer and schema URL of facet ``key``."""
    return {"_producer": PRODUCER, "_schemaURL": FACET_SCHEMA_URLS[key], **body}


def schema_facet(fields: Sequence[SchemaField]) -> dict[str, Any]:
    """The ``schema`` facet; nested struct fields become ``fields`` of their parent."""

    def one(item: SchemaField) -> dict[str, Any]:
        name, type_, children = item
        out: dict[str, Any] = {"name": name, "type": type_}
        if children:
            out["fields"] = [one(child) for child in children]
        return out

    return facet("schema", {"fields": [one(f) for f in fields]})


def data_source_facet(namespace: str) -> dict[str, Any]:
    """The ``dataSource`` facet: name and uri are the dataset namespace, as the listener writes."""
    return facet("dataSource", {"name": namespace, "uri": namespace})


def symlinks_facet(identifiers: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """The ``symlinks`` facet from (namespace, name, type) triples."""
    return facet(
        "symlinks",
        {
            "identifiers": [
                {"namespace": ns, "name": name, "type": type_} for ns, name, type_ in identifiers
            ]
        },
    )


def catalog_facet(name: str, framework: str, type_: str, warehouse_uri: str | None) -> dict[str, Any]:
    """The ``catalog`` facet naming the Spark catalog a table came from."""
    body: dict[str, Any] = {"name": name, "framework": framework, "type": type_, "source": "spark"}
    if warehouse_uri:
        body["warehouseUri"] = warehouse_uri
    return facet("catalog", body)


def version_facet(dataset_version: str) -> dict[str, Any]:
    """The ``version`` facet: a table format's version of the dataset (snapshot id, Delta version)."""
    return facet("version", {"datasetVersion": dataset_version})


def storage_facet(storage_layer: str, file_format: str | None) -> dict[str, Any]:
    """The ``storage`` facet: the table format (``iceberg``, ``delta``) and its file format."""
    body: dict[str, Any] = {"storageLayer": storage_layer}
    if file_format:
        body["fileFormat"] = file_format
    return facet("storage", body)


def lifecycle_state_change_facet(
    change: str, previous: tuple[str, str] | None = None
) -> dict[str, Any]:
    """``lifecycleStateChange``: CREATE, DROP, TRUNCATE, ALTER, RENAME or OVERWRITE."""
    body: dict[str, Any] = {"lifecycleStateChange": change}
    if previous is not None:
        body["previousIdentifier"] = {"namespace": previous[0], "name": previous[1]}
    return facet("lifecycleStateChange", body)


def column_lineage_facet(
    fields: Mapping[str, Sequence[Mapping[str, Any]]],
    dataset: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``columnLineage``: output field -> input fields with their transformations."""
    body: dict[str, Any] = {
        "fields": {name: {"inputFields": list(inputs)} for name, inputs in fields.items()}
    }
    if dataset:
        body["dataset"] = list(dataset)
    return facet("columnLineage", body)


def input_statistics_facet(row_count: int, size: int | None) -> dict[str, Any]:
    """The ``inputStatistics`` input facet: rows and bytes an action read of a dataset."""
    body: dict[str, Any] = {"rowCount": row_count}
    if size is not None:
        body["size"] = size
    return facet("inputStatistics", body)


def output_statistics_facet(
    row_count: int | None, size: int | None, file_count: int | None
) -> dict[str, Any]:
    """``outputStatistics`` from Spark's write metrics; unknown figures are left out."""
    body: dict[str, Any] = {}
    if row_count is not None:
        body["rowCount"] = row_count
    if size is not None:
        body["size"] = size
    if file_count is not None:
        body["fileCount"] = file_count
    return facet("outputStatistics", body)


def parent_facet(
    namespace: str,
    name: str,
    run_id: str,
    root: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """``parent`` naming the parent run; ``root`` is (namespace, name, runId) of the root run."""
    body: dict[str, Any] = {
        "job": {"namespace": namespace, "name": name},
        "run": {"runId": run_id},
    }
    if root is not None:
        body["root"] = {
            "job": {"namespace": root[0], "name": root[1]},
            "run": {"runId": root[2]},
        }
    return facet("parent", body)


def processing_engine_facet(spark_version: str, adapter_version: str) -> dict[str, Any]:
    """``processing_engine``: Spark's version and headwater's."""
    return facet(
        "processing_engine",
        {"version": spark_version, "name": "spark", "openlineageAdapterVersion": adapter_version},
    )


def job_type_facet(job_type: str, processing_type: str = "BATCH") -> dict[str, Any]:
    """``jobType`` as the listener writes it: integration SPARK, APPLICATION or JOB."""
    return facet(
        "jobType",
        {"processingType": processing_type, "integration": "SPARK", "jobType": job_type},
    )


def source_code_location_facet(location: Mapping[str, str]) -> dict[str, Any]:
    """The ``sourceCodeLocation`` job facet: ``type`` and ``url``, and where known ``repoUrl``,
    ``path``, ``version`` (a commit), ``branch`` and ``tag``."""
    return facet("sourceCodeLocation", dict(location))


def sql_facet(query: str) -> dict[str, Any]:
    """``sql``: the statement text of a ``spark.sql`` action."""
    return facet("sql", {"query": query, "dialect": "spark"})


def error_message_facet(message: str, stack_trace: str | None) -> dict[str, Any]:
    """``errorMessage`` of a failed action or application."""
    body: dict[str, Any] = {"message": message, "programmingLanguage": "JAVA"}
    if stack_trace:
        body["stackTrace"] = stack_trace
    return facet("errorMessage", body)


def tags_facet(kind: str, tags: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """A ``tags`` facet (``kind`` is ``tags_job`` or ``tags_run``) from (key, value, source)."""
    return facet(kind, {"tags": [{"key": k, "value": v, "source": s} for k, v, s in tags]})
