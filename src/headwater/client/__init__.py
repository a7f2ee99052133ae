"""``headwater.client``: a typed Python client for the headwater HTTP API.

:class:`Client` (blocking) and :class:`AsyncClient` (asyncio) cover every
operation of the Marquez-compatible ``/api/v1`` and headwater's ``/api/v2``;
answers come back as frozen dataclasses (:mod:`headwater.client.models`),
failures as :class:`ClientError` subclasses (:mod:`headwater.client.errors`).
It needs only httpx: no server dependency is imported. See docs/python-api.md.
"""

from headwater.client import models
from headwater.client.call import Call
from headwater.client.client import AsyncClient, Client
from headwater.client.errors import (
    APIError,
    BadRequest,
    ClientError,
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RequestTimeout,
    ServerError,
    ServerUnreachable,
    Unauthorized,
    UnexpectedAnswer,
    Unprocessable,
)
from headwater.client.retry import Retry
from headwater.client.session import DEFAULT_URL

__all__ = [
    "DEFAULT_URL",
    "APIError",
    "AsyncClient",
    "BadRequest",
    "Call",
    "Client",
    "ClientError",
    "Conflict",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RequestTimeout",
    "Retry",
    "ServerError",
    "ServerUnreachable",
    "Unauthorized",
    "UnexpectedAnswer",
    "Unprocessable",
    "models",
]
