"""The lazy SparkSession hook: patch ``pyspark.sql.session`` when, and only when, it is imported.

A meta-path finder sits in front of the others; for the one module
``pyspark.sql.session`` it wraps the real loader so that, right after the module
has run, ``SparkSession.__init__`` and ``SparkSession.Builder.getOrCreate`` are
wrapped to call :func:`headwater.agent.attach` on the session. ``attach`` is
idempotent, so a session seen twice (constructor, then getOrCreate) is
instrumented once. Any failure is logged once and the user's program goes on.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import logging
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["install", "installed"]

logger = logging.getLogger(__name__)

_TARGET = "pyspark.sql.session"
_MARK = "__headwater_instrumented__"
_lock = threading.Lock()
_reentry = threading.local()
_failures_logged: set[str] = set()


def _log_once(where: str, exc: BaseException) -> None:
    key = f"{where}:{type(exc).__name__}"
    if key not in _failures_logged:
        _failures_logged.add(key)
        logger.warning("headwater instrument: %s failed (the job goes on): %r", where, exc)


def _attach(session: Any) -> None:
    if getattr(_reentry, "active", False):
        return  # attach itself may touch SparkSession; do not recurse
    _reentry.active = True
    try:
        from headwater.agent import attach  # imported late: it imports the capture code

        attach(session)
    except Exception as exc:
        _log_once("attach", exc)
    finally:
        _reentry.active = False


def _patch(module: ModuleType) -> None:
    session_class = getattr(module, "SparkSession", None)
    if session_class is None or getattr(session_class, _MARK, False):
        return
    original_init = session_class.__init__

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        _attach(self)

    session_class.__init__ = __init__
    builder_class = getattr(session_class, "Builder", None)
    original_get_or_create = getattr(builder_class, "getOrCreate", None)
    if builder_class is not None and original_get_or_create is not None:

        @functools.wraps(original_get_or_create)
        def getOrCreate(self: Any) -> Any:  # noqa: N802 - PySpark's name
            session = original_get_or_create(self)
            _attach(session)
            return session

        builder_class.getOrCreate = getOrCreate
    setattr(session_class, _MARK, True)
    logger.debug("headwater instrument: SparkSession hooked")


class _PatchingLoader(importlib.abc.Loader):
    """Runs the real loader, then patches the module it produced."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        try:
            _patch(module)
        except Exception as exc:
            _log_once("patching pyspark.sql.session", exc)

    def __getattr__(self, name: str) -> Any:
        # get_code, get_source, get_resource_reader … behave as the real loader's.
        return getattr(self._inner, name)


class _SessionFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader)
        return spec


def installed() -> bool:
    """Whether the hook is in place (imported module patched, or finder waiting)."""
    module = sys.modules.get(_TARGET)
    if module is not None and getattr(getattr(module, "SparkSession", None), _MARK, False):
        return True
    return any(isinstance(finder, _SessionFinder) for finder in sys.meta_path)


def install() -> None:
    """Hook SparkSession creation in this process; idempotent, never imports PySpark."""
    with _lock:
        module = sys.modules.get(_TARGET)
        if module is not None:
            _patch(module)
            return
        if not any(isinstance(finder, _SessionFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _SessionFinder())
