"""FastAPI dependencies: the store and settings of the running app, the write check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request

from headwater.config import Settings
from headwater.server.access import PRINCIPAL_KEY, required_scope
from headwater.server.handlers import AuthError

if TYPE_CHECKING:
    from headwater.server.record_fragments import RecordFragments
    from headwater.store import Store

__all__ = [
    "FragmentsDep",
    "SettingsDep",
    "StoreDep",
    "WriteAccess",
    "get_record_fragments",
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


async def get_record_fragments(request: Request) -> RecordFragments:
    """The app's :class:`~headwater.server.record_fragments.RecordFragments` (records' JSON)."""
    fragments: RecordFragments = request.app.state.record_fragments
    return fragments


async def require_write_access(request: Request) -> None:
    """Refuse a write that :class:`~headwater.server.access.AccessGate` did not admit.

    The gate authenticates every request and checks its scope before anything
    else runs; this repeats the scope check where the writes are served, so a
    write path reached without the gate fails closed instead of open.
    """
    principal = request.scope.get(PRINCIPAL_KEY)
    if principal is None:
        raise AuthError("the request did not pass the access check")
    need = required_scope(request.method, request.url.path)
    if need is not None and need not in principal.scopes:
        raise AuthError(f"this needs a token with the {need} scope")


# The store's class is imported lazily (it pulls SQLAlchemy); FastAPI needs no
# type here because the dependency provides the value.
StoreDep = Annotated[Any, Depends(get_store)]
FragmentsDep = Annotated[Any, Depends(get_record_fragments)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
WriteAccess = Depends(require_write_access)
