"""``GET /api/v1/health``: liveness and the server's version."""

from __future__ import annotations

from fastapi import APIRouter

from headwater import __version__
from headwater.server.schemas import HealthResponse

__all__ = ["router"]

router = APIRouter(prefix="/api/v1", tags=["health"])


@router.get("/health", response_model=HealthResponse, summary="Is the server up")
async def health() -> HealthResponse:
    return HealthResponse(version=__version__)
