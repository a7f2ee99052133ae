"""``POST /api/v1/lineage`` and ``POST /api/v1/lineage/batch``: OpenLineage ingestion.

As the OpenLineage 2-0-2 HTTP spec (``OpenLineage.yml``) defines them: one
RunEvent, DatasetEvent or JobEvent per POST, or a JSON array of them per batch.
:class:`~headwater.server.ingest_endpoint.IngestEndpoint` serves both, in front
of the app's routing; ``router`` declares them for the OpenAPI document only.
Both run :mod:`headwater.server.ingest` in a worker thread, where concurrent
requests share the store's group commit. The batch answer reports each refused
event (``failed_events[{index, reason, field, retriable}]``) and stores every
good one. Both accept ``Content-Encoding: gzip``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from headwater.errors import EventError, WriteRefused
from headwater.server.body import read_json_body
from headwater.server.deps import WriteAccess
from headwater.server.handlers import RequestError, error_body
from headwater.server.ingest import INVALID, REFUSED, ingest_batch, ingest_one
from headwater.server.schemas import (
    LINEAGE_REQUEST_BODY,
    BatchResponse,
    ErrorResponse,
    IngestResponse,
)

__all__ = ["router"]

router = APIRouter(prefix="/api/v1", tags=["lineage"])


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorResponse} for code in codes}


@router.post(
    "/lineage",
    dependencies=[WriteAccess],
    response_model=IngestResponse,
    responses=_errors(400, 401, 413, 415, 422, 503),
    openapi_extra=LINEAGE_REQUEST_BODY,
    summary="Record one OpenLineage event",
)
async def post_lineage(request: Request) -> JSONResponse:
    """400: not valid OpenLineage; 422: the database refused it; 503: database unavailable."""
    payload = await read_json_body(request, request.app.state.settings.max_body_bytes)
    if isinstance(payload, list):
        raise RequestError(
            "expected one event (a JSON object); POST arrays to /api/v1/lineage/batch",
            field="body",
        )
    metrics = request.app.state.metrics
    try:
        result = await run_in_threadpool(ingest_one, request.app.state.store, payload)
    except WriteRefused as exc:
        metrics.ingested_one(refused=REFUSED, field=exc.field)
        raise
    except EventError:
        metrics.ingested_one(refused=INVALID)
        raise
    metrics.ingested_one(duplicate=result.duplicate)
    return JSONResponse(
        {"status": "success", "eventHash": result.event_hash, "duplicate": result.duplicate}
    )


@router.post(
    "/lineage/batch",
    dependencies=[WriteAccess],
    response_model=BatchResponse,
    responses=_errors(400, 401, 413, 415, 503),
    summary="Record a batch of OpenLineage events",
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A JSON array of OpenLineage 2-0-2 events; may be gzip-encoded.",
            "content": {"application/json": {"schema": {"type": "array"}}},
        }
    },
)
async def post_lineage_batch(request: Request) -> JSONResponse:
    """200 with each refused event's index and reason; 400 when no event is usable."""
    payload = await read_json_body(request, request.app.state.settings.max_body_bytes)
    if not isinstance(payload, list):
        raise RequestError("expected a JSON array of events", field="body")
    outcome = await run_in_threadpool(ingest_batch, request.app.state.store, payload)
    request.app.state.metrics.ingested(outcome)
    body = outcome.as_json()
    if outcome.failed and not outcome.successful:
        # Nothing usable at all: a client error, with the same per-event detail.
        first = outcome.failed[0]
        field = f"[{first.index}].{first.field}" if first.field else f"[{first.index}]"
        return JSONResponse(
            error_body(f"no valid event in the batch; first: {first.reason}", field,
                       retriable=False, **body),
            status_code=400,
        )
    return JSONResponse(body)
