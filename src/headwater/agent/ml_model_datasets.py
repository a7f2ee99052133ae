"""A Spark ML model as an OpenLineage dataset, and the events of the runs that make it.

:class:`ModelRecord` is what the agent knows of one model (by its ``uid``): its
description, the columns it reads with their lineage, the metrics computed on
its predictions and the dataset it is named as. :func:`model_dataset` turns a
record into a dataset of type ``MODEL`` carrying the ``model`` facet;
:func:`model_run_event` builds the START / COMPLETE / FAIL events of the runs
that train and save models (see :mod:`headwater.agent.ml_models`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from headwater.agent.facets import DATASET_TYPE_SCHEMA
from headwater.agent.run_model import RunModel, iso_time
from headwater.events import facets as F
from headwater.events.model import PRODUCER, SCHEMA_URL

__all__ = ["MODEL_FACET", "ModelRecord", "model_dataset", "model_run_event", "spark_type_name"]

#: The name of the model dataset facet.
MODEL_FACET = "model"
_DATASET_FACET_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetFacet"


@dataclass
class ModelRecord:
    """One model as the agent knows it, by its ``uid``."""

    uid: str
    description: dict[str, Any]
    #: The columns the model reads (features and label) and their types.
    fields: list[tuple[str, str]] = field(default_factory=list)
    #: Column lineage of those columns from the training data.
    field_lineage: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    #: (namespace, name) of the dataset the model is named as, once it has a name.
    dataset: tuple[str, str] | None = None
    #: The training run whose COMPLETE waits for the model's name.
    fit_run: dict[str, Any] | None = None


def model_dataset(
    run_model: RunModel, record: ModelRecord, name: tuple[str, str], with_schema: bool = True
) -> dict[str, Any]:
    """The model as dataset ``name``; ``with_schema`` adds its schema and column lineage."""
    enabled = run_model.enabled
    facets: dict[str, Any] = {}
    if enabled("datasetType"):
        facets["datasetType"] = {
            "_producer": PRODUCER,
            "_schemaURL": DATASET_TYPE_SCHEMA,
            "datasetType": "MODEL",
        }
    if with_schema and record.fields and enabled("schema"):
        facets["schema"] = F.schema_facet([(n, t, []) for n, t in record.fields])
    if with_schema and record.field_lineage and enabled("columnLineage"):
        facets["columnLineage"] = F.column_lineage_facet(record.field_lineage, [])
    if enabled(MODEL_FACET):
        facets[MODEL_FACET] = {
            "_producer": PRODUCER,
            "_schemaURL": _DATASET_FACET_SCHEMA,
            "uid": record.uid,
            **record.description,
            **({"metrics": dict(record.metrics)} if record.metrics else {}),
        }
    return {"namespace": name[0], "name": name[1], "facets": facets}


def model_run_event(
    run_model: RunModel,
    event_type: str,
    run_id: str,
    job: dict[str, Any],
    when: float,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    error: tuple[str, str | None] | None = None,
) -> dict[str, Any]:
    """One event of a training or save run; ``error`` is (message, stack trace) on FAIL."""
    facets = run_model.action_run_facets()
    if event_type == "START":
        facets.update(run_model.start_run_facets())
    if error is not None and run_model.enabled("errorMessage"):
        facets["errorMessage"] = F.error_message_facet(error[0], error[1])
    return {
        "eventType": event_type,
        "eventTime": iso_time(when),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id, "facets": facets},
        "job": job,
        "inputs": inputs,
        "outputs": outputs,
    }


def spark_type_name(spark_type: Any) -> str:
    """A column type of a DataFrame's JSON schema as a schema facet names it."""
    if isinstance(spark_type, str):
        return spark_type
    if isinstance(spark_type, dict):
        if spark_type.get("type") == "udt":
            udt = spark_type.get("pyClass") or spark_type.get("class") or "udt"
            return str(udt).rsplit(".", 1)[-1]
        return str(spark_type.get("type", "unknown"))
    return "unknown"
