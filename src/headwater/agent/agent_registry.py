"""The agents attached in this process, one per SparkSession.

:func:`headwater.agent.attach` and :func:`headwater.agent.stats` look agents up
in :data:`registry` by their session; the wrappers Spark ML and RDD saves get
process-wide (:mod:`.ml_hooks`, :mod:`.rdds`) find the open agent watching a
``SparkContext`` through :func:`model_lineage_for`, :func:`rdd_save_begins` and
:func:`rdd_save_ends`. At interpreter exit every agent still open ends its
application run: COMPLETE, or FAIL on an uncaught exception.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import time
from typing import Any

__all__ = [
    "agent_for",
    "last_attached",
    "model_lineage_for",
    "rdd_save_begins",
    "rdd_save_ends",
    "register_exit_hook",
    "registry",
    "registry_lock",
]

logger = logging.getLogger(__name__)

#: The open agents, by their Java SparkSession's hash code.
registry: dict[int, Any] = {}
registry_lock = threading.Lock()
#: The agent attached last, open or closed: what stats() reports by default.
last_attached: list[Any] = []


def agent_for(spark_context: Any) -> Any:
    """The open agent attached to a session of ``spark_context``, if any."""
    with registry_lock:
        agents = list(registry.values())
    for agent in agents:
        if agent.enabled and not agent._closed and agent._spark_context is spark_context:
            return agent
    return None


def model_lineage_for(spark_context: Any) -> Any:
    """The model lineage of the open agent watching ``spark_context`` (see .ml_hooks)."""
    agent = agent_for(spark_context)
    return agent._ml if agent is not None else None


def rdd_save_begins(
    rdd: Any,
    path: str,
    method: str = "saveAsTextFile",
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
) -> Any:
    """Called by a wrapped RDD save (``saveAsTextFile``, ...) before it runs (see .rdds)."""
    agent = agent_for(rdd.ctx)
    if agent is None:
        return None
    from headwater.agent.rdds import RddSavePhase, new_save

    save = new_save(rdd, path, method, args, kwargs)
    agent._worker.submit(RddSavePhase(save, "START"))
    return agent, save


def rdd_save_ends(token: Any, error: BaseException | None) -> None:
    """Called by a wrapped RDD save after it ran, with its exception if any."""
    try:
        from headwater.agent.rdds import RddSavePhase

        agent, save = token
        save.end_time = time.time()
        if error is not None:
            # A py4j error's text carries the Java stack trace after the message.
            text = str(error) or repr(error)
            save.error = (text.split("\n\tat ", 1)[0].strip(), text)
        agent._worker.submit(RddSavePhase(save, "END"))
    except Exception:
        logger.debug("headwater agent: could not note the end of an RDD save", exc_info=True)


_exit_error: list[BaseException] = []
_previous_excepthook = sys.excepthook


def _record_exit_error(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    # An uncaught exception ends the interpreter: the application run FAILs.
    _exit_error.append(value)
    _previous_excepthook(kind, value, tb)


sys.excepthook = _record_exit_error


def _close_all_at_exit() -> None:
    error = _exit_error[0] if _exit_error else None
    for agent in list(registry.values()):
        agent.close(5.0, error=error)


_exit_hook_registered = False


def register_exit_hook() -> None:
    # Registered at the first attach, after the emitter module registered its own
    # exit hook: atexit runs last-in first-out, so the application COMPLETE is
    # emitted before the emitters close.
    global _exit_hook_registered
    with registry_lock:
        if not _exit_hook_registered:
            atexit.register(_close_all_at_exit)
            _exit_hook_registered = True
