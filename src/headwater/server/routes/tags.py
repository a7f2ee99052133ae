"""Tags: list and create (``/api/v1/tags``), tag and untag datasets, fields and jobs."""

from __future__ import annotations

from typing import Any

from fastapi import Body

from headwater.errors import NotFoundError
from headwater.server.deps import StoreDep, WriteAccess
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.responses import DatasetResponse, JobResponse, TagList, TagResponse
from headwater.server.routes.reading import (
    Limit,
    Offset,
    ScopeDep,
    connection,
    holds_nul,
    page,
    read_router,
)
from headwater.store import tags as tag_writes
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads
from headwater.store.reads.search import list_tags

__all__ = ["router"]

router = read_router()
_DATASET = "/api/v1/namespaces/{namespace}/datasets/{dataset}"
_JOB = "/api/v1/namespaces/{namespace}/jobs/{job}"
# Every tag change is a write: it needs the API key when one is configured (401), and
# the database may refuse what it writes (422).
_WRITE: dict[str, Any] = {
    "tags": ["tags"], "dependencies": [WriteAccess], "responses": error_responses(401, 422)
}
# Assigning names a tag and a dataset, field or job, each of which may not exist.
_ASSIGN: dict[str, Any] = {**_WRITE, "responses": error_responses(401, 404, 422)}


@router.get("/api/v1/tags", response_model=TagList, tags=["tags"])
def get_tags(
    store: StoreDep, scope: ScopeDep, limit: Limit = 100, offset: Offset = 0
) -> dict[str, Any]:
    with connection(store) as conn:
        return {"tags": list_tags(conn, page(limit, offset), scope)}


@router.put("/api/v1/tags/{tag}", response_model=TagResponse, **_WRITE)
def put_tag(
    tag: str, store: StoreDep, body: dict[str, Any] | None = Body(None)
) -> dict[str, Any]:
    """Create the tag (or change its description)."""
    description = (body or {}).get("description")
    text = description if isinstance(description, str) else None
    if holds_nul(text):
        raise RequestError("description must not contain a NUL character", field="body.description")
    return tag_writes.create_tag(store.engine, tag, text)


def _dataset_after(store: Any, namespace: str, dataset: str) -> dict[str, Any]:
    with connection(store) as conn:
        return dataset_reads.get_dataset(conn, namespace, dataset)


def _require_dataset(store: Any, namespace: str, dataset: str) -> None:
    _dataset_after(store, namespace, dataset)


@router.post(_DATASET + "/tags/{tag}", response_model=DatasetResponse, **_ASSIGN)
def tag_dataset(namespace: str, dataset: str, tag: str, store: StoreDep) -> dict[str, Any]:
    _require_dataset(store, namespace, dataset)
    tag_writes.assign_tag(store.engine, tag, f"dataset:{namespace}:{dataset}")
    return _dataset_after(store, namespace, dataset)


@router.delete(_DATASET + "/tags/{tag}", response_model=DatasetResponse, **_ASSIGN)
def untag_dataset(namespace: str, dataset: str, tag: str, store: StoreDep) -> dict[str, Any]:
    _require_dataset(store, namespace, dataset)
    tag_writes.unassign_tag(store.engine, tag, f"dataset:{namespace}:{dataset}")
    return _dataset_after(store, namespace, dataset)


@router.post(
    _DATASET + "/fields/{field}/tags/{tag}",
    response_model=DatasetResponse,
    **_ASSIGN,
)
def tag_field(
    namespace: str, dataset: str, field: str, tag: str, store: StoreDep
) -> dict[str, Any]:
    _require_field(store, namespace, dataset, field)
    tag_writes.assign_tag(store.engine, tag, f"datasetField:{namespace}:{dataset}:{field}")
    return _dataset_after(store, namespace, dataset)


@router.delete(
    _DATASET + "/fields/{field}/tags/{tag}",
    response_model=DatasetResponse,
    **_ASSIGN,
)
def untag_field(
    namespace: str, dataset: str, field: str, tag: str, store: StoreDep
) -> dict[str, Any]:
    _require_field(store, namespace, dataset, field)
    tag_writes.unassign_tag(store.engine, tag, f"datasetField:{namespace}:{dataset}:{field}")
    return _dataset_after(store, namespace, dataset)


def _require_field(store: Any, namespace: str, dataset: str, field: str) -> None:
    record = _dataset_after(store, namespace, dataset)
    if field not in {f["name"] for f in record["fields"]}:
        raise NotFoundError(f"field '{field}' not found in dataset '{namespace}:{dataset}'")


def _job_after(store: Any, namespace: str, job: str) -> dict[str, Any]:
    with connection(store) as conn:
        return job_reads.get_job(conn, namespace, job)


@router.post(_JOB + "/tags/{tag}", response_model=JobResponse, **_ASSIGN)
def tag_job(namespace: str, job: str, tag: str, store: StoreDep) -> dict[str, Any]:
    _job_after(store, namespace, job)
    tag_writes.assign_tag(store.engine, tag, f"job:{namespace}:{job}")
    return _job_after(store, namespace, job)


@router.delete(_JOB + "/tags/{tag}", response_model=JobResponse, **_ASSIGN)
def untag_job(namespace: str, job: str, tag: str, store: StoreDep) -> dict[str, Any]:
    _job_after(store, namespace, job)
    tag_writes.unassign_tag(store.engine, tag, f"job:{namespace}:{job}")
    return _job_after(store, namespace, job)
