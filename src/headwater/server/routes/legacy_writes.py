"""Marquez's create/update PUTs: namespace, source, dataset, job (all but the first
deprecated in Marquez, kept so Marquez-era clients keep working).

Namespace and source metadata no event carries goes to :mod:`headwater.store.admin`;
a dataset or job PUT becomes the OpenLineage event that says the same thing
(:mod:`~headwater.server.routes.legacy_events`), recorded through the store's own
write path in one transaction — so a bad body writes nothing, and a good one merges
with event-borne facts by the usual rules.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from headwater.errors import NotFoundError
from headwater.server.deps import StoreDep, WriteAccess
from headwater.server.handlers import RequestError
from headwater.server.ingest import ingest_one
from headwater.server.openapi import error_responses
from headwater.server.responses import (
    DatasetResponse,
    JobResponse,
    NamespaceResponse,
    SourceResponse,
)
from headwater.server.routes import legacy_events as legacy
from headwater.server.routes.reading import connection, read_router
from headwater.store import admin
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads
from headwater.store.reads import runs as run_reads

__all__ = ["record", "router"]

router = read_router()
# Writes need the API key (401); the database may refuse what they write (422).
_WRITE: dict[str, Any] = {"dependencies": [WriteAccess], "responses": error_responses(401, 422)}
# Writes naming objects that must exist already (namespace, source, run, datasets).
_WRITE_NAMING: dict[str, Any] = {**_WRITE, "responses": error_responses(401, 404, 422)}


def record(store: Any, event: dict[str, Any]) -> None:
    """Check and store one event made from an API call (one transaction)."""
    ingest_one(store, event)


@router.put(
    "/api/v1/namespaces/{namespace}", response_model=NamespaceResponse, tags=["namespaces"],
    **_WRITE,
)
def put_namespace(namespace: str, body: legacy.NamespaceBody, store: StoreDep) -> dict[str, Any]:
    """Create the namespace, or set its owner and description (shows a deleted one again)."""
    admin.put_namespace(store.engine, namespace, body.ownerName, body.description)
    with connection(store) as conn:
        return dataset_reads.get_namespace(conn, namespace)


@router.put("/api/v1/sources/{source}", response_model=SourceResponse, tags=["sources"], **_WRITE)
def put_source(source: str, body: legacy.SourceBody, store: StoreDep) -> dict[str, Any]:
    """Create the source, or change its type, connection URL and description."""
    admin.put_source(store.engine, source, body.type, body.connectionUrl, body.description)
    with connection(store) as conn:
        return dataset_reads.get_source(conn, source)


def _run_job(conn: sa.Connection, run_id: str) -> tuple[str, str]:
    """(job namespace, job name) of a stored run; 404 naming ``body.runId`` otherwise."""
    rows = run_reads.run_rows(conn, [run_id])
    if not rows:
        raise RequestError(f"run '{run_id}' not found", status_code=404, field="body.runId")
    return rows[0].namespace, rows[0].job_name


@router.put(
    "/api/v1/namespaces/{namespace}/datasets/{dataset}",
    response_model=DatasetResponse,
    tags=["datasets"],
    **_WRITE_NAMING,
)
def put_dataset(
    namespace: str, dataset: str, body: legacy.DatasetBody, store: StoreDep
) -> dict[str, Any]:
    """Create or update a dataset from Marquez's ``DbTable``/``Stream`` body.

    The source must exist (``PUT /api/v1/sources/{source}``). With ``runId`` the
    dataset is recorded as an output of that run: a new version made by the run.
    """
    with connection(store) as conn:
        dataset_reads.namespace_id(conn, namespace)
        try:
            source = dataset_reads.get_source(conn, body.sourceName)
        except NotFoundError as exc:
            raise RequestError(str(exc), status_code=404, field="body.sourceName") from exc
        run = None
        if body.runId is not None:
            run = (str(body.runId), *_run_job(conn, str(body.runId)))
    event = legacy.dataset_event(
        namespace, dataset, body, source["connectionUrl"], legacy.now(), run
    )
    record(store, event)
    with connection(store) as conn:
        return dataset_reads.get_dataset(conn, namespace, dataset)


@router.put(
    "/api/v1/namespaces/{namespace}/jobs/{job}", response_model=JobResponse, tags=["jobs"],
    **_WRITE_NAMING,
)
def put_job(namespace: str, job: str, body: legacy.JobBody, store: StoreDep) -> dict[str, Any]:
    """Create or update a job from Marquez's ``CreatedJob`` body.

    Its input and output datasets must exist. headwater's job versions come from
    runs: with ``runId`` (a run of this job) the inputs and outputs become that run's,
    and so the job's current version; without it they are recorded on a JobEvent and
    the job's facets (type, location, description, SQL) are updated.
    """
    with connection(store) as conn:
        dataset_reads.namespace_id(conn, namespace)
        for side, items in (("inputs", body.inputs), ("outputs", body.outputs)):
            found = dataset_reads.dataset_rows_by_keys(conn, [(d.namespace, d.name) for d in items])
            known = {(row.namespace, row.name) for row in found}
            for index, item in enumerate(items):
                if (item.namespace, item.name) not in known:
                    raise RequestError(
                        f"dataset '{item.name}' not found in namespace '{item.namespace}'",
                        status_code=404,
                        field=f"body.{side}[{index}]",
                    )
        run_id = str(body.runId) if body.runId is not None else None
        if run_id is not None and _run_job(conn, run_id) != (namespace, job):
            raise RequestError(
                f"run '{run_id}' is not a run of job '{namespace}:{job}'", field="body.runId"
            )
    record(store, legacy.job_event(namespace, job, body, legacy.now(), run_id))
    with connection(store) as conn:
        return job_reads.get_job(conn, namespace, job)
