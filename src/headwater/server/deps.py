"""FastAPI dependencies: the store and settings of the running app, write auth."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request

from headwater.config import Settings
from headwater.server.handlers import AuthError

if TYPE_CHECKING:
    from headwater.store import Store

__all__ = [
    "SettingsDep",
    "StoreDep",
    "WriteAccess",
    "get_settings",
    "get_store",
    "require_write_access",
]


# The dependencies are ``async def`` although they never await: FastAPI runs a
# plain ``def`` dependency in the thread pool, a thread hop per request for
# nothing.


async def get_store(request: Request) -> Store:
    """The :class:`~headwater.store.Store` the app was created with."""
    store: Store = request.app.state.store
    return store


async def get_settings(request: Request) -> Settings:
    """The :class:`~headwater.config.Settings` the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


async def require_write_access(request: Request) -> None:
    """Refuse a write unless it carries ``Authorization: Bearer <api_key>``.

    No-op when no API key is configured. The comparison is constant-time so
    the key cannot be guessed byte by byte from response timings.
    """
    expected: bytes | None = request.app.state.api_key_bytes
    if expected is None:
        return
    header = request.headers.get("authorization")
    if header is None:
        raise AuthError("this server requires Authorization: Bearer <api key> on writes")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        token.strip().encode("utf-8"), expected
    ):
        raise AuthError("invalid API key")


# The store's class is imported lazily (it pulls SQLAlchemy); FastAPI needs no
# type here because the dependency provides the value.
StoreDep = Annotated[Any, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
WriteAccess = Depends(require_write_access)
