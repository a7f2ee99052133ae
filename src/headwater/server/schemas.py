"""Pydantic models of the ingestion API's request and response bodies.

They document the API (OpenAPI at ``/openapi.json``) and give the response
shapes one definition. Incoming events are *not* parsed through pydantic
models: they are checked by :mod:`headwater.server.validation` and handed to
the store as sent, so free-form facets keep every key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "BatchResponse",
    "BatchSummary",
    "ErrorResponse",
    "FailedEventModel",
    "HealthResponse",
    "IngestResponse",
    "LINEAGE_REQUEST_BODY",
]


class ErrorResponse(BaseModel):
    """Every 4xx/5xx answer."""

    error: str = Field(description="What is wrong, in words.")
    field: str | None = Field(
        None,
        description="Where: a JSON path in the event (run.runId), a parameter (query.limit), "
        "a header, or body.",
    )
    retriable: bool | None = Field(
        None, description="Whether the same request may succeed later (true on a 503)."
    )


class IngestResponse(BaseModel):
    """Answer to ``POST /api/v1/lineage``."""

    status: Literal["success"] = "success"
    eventHash: str = Field(description="Content hash of the stored event (sha256).")
    duplicate: bool = Field(description="True if this exact event had been received before.")


class FailedEventModel(BaseModel):
    index: int = Field(description="Position of the event in the posted array.")
    reason: str
    field: str | None = None
    retriable: bool


class BatchSummary(BaseModel):
    received: int
    successful: int
    failed: int
    retriable: int
    non_retriable: int
    duplicates: int = Field(description="headwater: successful events already stored before.")


class BatchResponse(BaseModel):
    """Answer to ``POST /api/v1/lineage/batch`` (OpenLineage 2-0-2 shape)."""

    status: Literal["success", "partial_success"]
    summary: BatchSummary
    failed_events: list[FailedEventModel]


class HealthResponse(BaseModel):
    status: Literal["ok"] = "ok"
    version: str


# The OpenAPI request body: an OpenLineage RunEvent, DatasetEvent or JobEvent.
# Documented by reference to the spec rather than re-declared field by field.
LINEAGE_REQUEST_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "An OpenLineage 2-0-2 event "
        "(https://openlineage.io/spec/2-0-2/OpenLineage.json); may be gzip-encoded.",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
