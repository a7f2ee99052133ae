"""Marquez's deprecated write bodies, and the OpenLineage events headwater turns them into.

Marquez still serves the writes it had before OpenLineage (``PUT`` a dataset or a
job, create a run, move it to started/completed/failed/aborted). headwater accepts
them and records each as the OpenLineage event that says the same thing, through
the store's own write path — so these objects merge with event-borne ones under the
same order-independent rules and nothing is stored twice over.

The bodies are Marquez's (``spec/openapi.yml``: ``DbTable``/``Stream``,
``CreatedJob``, ``CreatedRun``, ``CreatedNamespace``, ``CreatedSource``); unknown
keys are ignored, a missing required key is a 400 naming it (``body.fields``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from headwater import __version__
from headwater.graph.model import NodeId
from headwater.server.routes.reading import holds_nul

__all__ = [
    "DatasetBody",
    "DatasetIdBody",
    "FieldBody",
    "JobBody",
    "NamespaceBody",
    "PRODUCER",
    "RunBody",
    "SourceBody",
    "dataset_event",
    "dataset_facets",
    "job_event",
    "job_facets",
    "now",
    "run_event",
]

#: ``producer`` of every event made from a Marquez API call.
PRODUCER = f"https://github.com/headwater-lineage/headwater/tree/{__version__}/marquez-api"
_RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_DATASET_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
_JOB_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
_FACETS = "https://openlineage.io/spec/facets"


def _without_nul(value: Any) -> Any:
    if holds_nul(value):
        raise ValueError("must not contain a NUL character")
    return value


def _in_utc(value: datetime) -> datetime:
    """``value`` as an aware UTC time (naive is UTC); refused if UTC has no such time."""
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        return aware.astimezone(UTC)
    except OverflowError:
        raise ValueError("time is outside the years 1 to 9999 once in UTC") from None


# Body values as they are stored: each refusal is a 400 naming its key.
_Text = Annotated[str, AfterValidator(_without_nul)]
_Name = Annotated[str, Field(min_length=1), AfterValidator(_without_nul)]
_Json = Annotated[dict[str, Any], AfterValidator(_without_nul)]
_UtcTime = Annotated[datetime, AfterValidator(_in_utc)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NamespaceBody(_Body):
    ownerName: _Name
    description: _Text | None = None


class SourceBody(_Body):
    type: _Name
    connectionUrl: _Name
    description: _Text | None = None


class FieldBody(_Body):
    name: _Name
    type: _Text | None = None
    tags: list[_Text] = Field(default_factory=list)
    description: _Text | None = None


class DatasetBody(_Body):
    type: Literal["DB_TABLE", "STREAM"]
    physicalName: _Name
    sourceName: _Name
    # Marquez's spec lists fields as required, but its server and its Python client
    # treat them as optional (the client leaves them out when there are none).
    fields: list[FieldBody] = Field(default_factory=list)
    tags: list[_Text] = Field(default_factory=list)
    description: _Text | None = None
    runId: UUID | None = None
    schemaLocation: _Text | None = None


class DatasetIdBody(_Body):
    namespace: _Name
    name: _Name


class JobBody(_Body):
    type: Literal["BATCH", "STREAM", "SERVICE"]
    inputs: list[DatasetIdBody]
    outputs: list[DatasetIdBody]
    location: _Text | None = None
    description: _Text | None = None
    context: _Json | None = None
    runId: UUID | None = None


class RunBody(_Body):
    id: UUID | None = None
    nominalStartTime: _UtcTime | None = None
    nominalEndTime: _UtcTime | None = None
    args: dict[str, Any] = Field(default_factory=dict)


def _facet(facet_type: str, **body: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": f"{_FACETS}/1-0-1/{facet_type}.json", **body}


def _iso(value: datetime) -> str:
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat().replace("+00:00", "Z")


def now() -> datetime:
    """The time an event made from an API call carries (this server's clock, UTC)."""
    return datetime.now(UTC)


def _tags(names: list[str]) -> dict[str, Any]:
    return _facet("TagsDatasetFacet", tags=[{"key": n, "value": n, "source": "api"} for n in names])


def dataset_facets(body: DatasetBody, source_url: str | None) -> dict[str, Any]:
    """The dataset facets saying what a ``PUT`` dataset body says."""
    fields = []
    for f in body.fields:
        item: dict[str, Any] = {"name": f.name}
        if f.type is not None:
            item["type"] = f.type
        if f.description is not None:
            item["description"] = f.description
        if f.tags:
            item["tags"] = [{"key": t, "value": t, "source": "api"} for t in f.tags]
        fields.append(item)
    facets: dict[str, Any] = {
        "schema": _facet("SchemaDatasetFacet", fields=fields),
        "dataSource": _facet("DatasourceDatasetFacet", name=body.sourceName,
                             uri=source_url or body.sourceName),
    }
    if body.description is not None:
        facets["documentation"] = _facet("DocumentationDatasetFacet", description=body.description)
    if body.tags:
        facets["tags"] = _tags(body.tags)
    return facets


def dataset_event(
    namespace: str,
    name: str,
    body: DatasetBody,
    source_url: str | None,
    at: datetime,
    run: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """A DatasetEvent for ``PUT`` dataset; with ``run`` (run id, job namespace, job
    name) a RunEvent listing the dataset as that run's output, which makes the version
    Marquez associates with the run."""
    dataset = {"namespace": namespace, "name": name,
               "facets": dataset_facets(body, source_url)}
    if run is None:
        return {"eventTime": _iso(at), "producer": PRODUCER, "schemaURL": _DATASET_EVENT,
                "dataset": dataset}
    run_id, job_namespace, job_name = run
    return {
        "eventType": "OTHER", "eventTime": _iso(at), "producer": PRODUCER,
        "schemaURL": _RUN_EVENT, "run": {"runId": run_id, "facets": {}},
        "job": {"namespace": job_namespace, "name": job_name, "facets": {}},
        "inputs": [], "outputs": [dataset],
    }


def job_facets(body: JobBody) -> dict[str, Any]:
    """The job facets saying what a ``PUT`` job body says."""
    facets: dict[str, Any] = {
        "jobType": _facet(
            "JobTypeJobFacet",
            processingType="STREAMING" if body.type == "STREAM" else "BATCH",
            integration="MARQUEZ_API",
            jobType=body.type,
        )
    }
    if body.location:
        facets["sourceCodeLocation"] = _facet("SourceCodeLocationJobFacet", type="url",
                                              url=body.location)
    if body.description is not None:
        facets["documentation"] = _facet("DocumentationJobFacet", description=body.description)
    sql = (body.context or {}).get("sql")
    if isinstance(sql, str):
        facets["sql"] = _facet("SQLJobFacet", query=sql)
    return facets


def job_event(
    namespace: str, name: str, body: JobBody, at: datetime, run_id: str | None = None
) -> dict[str, Any]:
    """A JobEvent for ``PUT`` job; with ``run_id`` a RunEvent of that run naming the
    inputs and outputs, which makes the job version Marquez associates with the run."""
    event: dict[str, Any] = {
        "eventTime": _iso(at), "producer": PRODUCER,
        "job": {"namespace": namespace, "name": name, "facets": job_facets(body)},
        "inputs": [{"namespace": d.namespace, "name": d.name} for d in body.inputs],
        "outputs": [{"namespace": d.namespace, "name": d.name} for d in body.outputs],
    }
    if run_id is None:
        return {**event, "schemaURL": _JOB_EVENT}
    return {**event, "schemaURL": _RUN_EVENT, "eventType": "OTHER",
            "run": {"runId": run_id, "facets": {}}}


def run_event(
    run_id: str,
    job: tuple[str, str],
    event_type: Literal["OTHER", "START", "COMPLETE", "FAIL", "ABORT"],
    at: datetime,
    *,
    nominal: tuple[datetime | None, datetime | None] = (None, None),
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    location: str | None = None,
) -> dict[str, Any]:
    """A RunEvent for a run created or moved through the API.

    ``inputs``/``outputs`` are dataset node ids (``dataset:ns:name``) and ``location``
    the source location: a created run is a run of the job's current version.
    """
    run_facets: dict[str, Any] = {}
    start, end = nominal
    if start is not None:
        times = {"nominalStartTime": _iso(start)}
        if end is not None:
            times["nominalEndTime"] = _iso(end)
        run_facets["nominalTime"] = _facet("NominalTimeRunFacet", **times)
    job_facets_: dict[str, Any] = {}
    if location:
        job_facets_["sourceCodeLocation"] = _facet("SourceCodeLocationJobFacet", type="url",
                                                   url=location)

    def datasets(ids: Sequence[str]) -> list[dict[str, Any]]:
        parsed = [NodeId.parse(i) for i in ids]
        return [{"namespace": p.namespace, "name": p.name} for p in parsed]

    return {
        "eventType": event_type, "eventTime": _iso(at), "producer": PRODUCER,
        "schemaURL": _RUN_EVENT, "run": {"runId": run_id, "facets": run_facets},
        "job": {"namespace": job[0], "name": job[1], "facets": job_facets_},
        "inputs": datasets(inputs), "outputs": datasets(outputs),
    }
