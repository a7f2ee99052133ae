"""The statement text of an action run through ``spark.sql`` (the ``sql`` job facet).

``spark.sql`` parses a statement with its text as every parsed node's origin, and
the agent reads it from the logical plan of the ``QueryExecution`` the listener
receives (:func:`statement_text`). Spark 4.3's analyzer builds the command of a
``CREATE TABLE`` or a CTAS anew, without that origin, and the listener's
``QueryExecution`` runs that built command: its plan carries no text. The
DataFrame ``spark.sql`` returned still does (its parsed plan), and its
``CommandResult`` holds the very command object the listener's
``QueryExecution`` ran.

:class:`SqlCalls` therefore remembers the DataFrames the session's last few
``spark.sql`` calls returned (Python references only, on the calling thread),
and the capture worker asks it for the text of an action whose plan has none:
the call whose command is the action's plan gives its text. The JVM is asked
only then, on the worker, and each remembered call at most once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from headwater.agent.plan import short_class
from headwater.agent.py4j.chains import JvmChain, chained, class_name

__all__ = ["SqlCalls", "statement_text"]

logger = logging.getLogger(__name__)

#: ``spark.sql`` calls remembered: the listener hears of a command shortly after
#: its call returns, so only the latest few can be the one asked about.
_KEPT = 16

#: Seconds a call is remembered after it returned.
_MAX_AGE = 120.0

#: Seconds the worker waits for a ``spark.sql`` call still running (the listener
#: may report its command before the call has returned its DataFrame).
_WAIT = 0.5

#: The SQL text of a ``QueryExecution``'s logical plan, as the text of a Scala ``Option``.
_SQL_TEXT = JvmChain(
    ("org.apache.spark.sql.execution.QueryExecution", "logical", ()),
    ("org.apache.spark.sql.catalyst.trees.TreeNode", "origin", ()),
    ("org.apache.spark.sql.catalyst.trees.Origin", "sqlText", ()),
    ("java.lang.Object", "toString", ()),
)

#: The command a ``spark.sql`` DataFrame ran eagerly (its ``CommandResult``'s).
_COMMAND_RESULT = "org.apache.spark.sql.catalyst.plans.logical.CommandResult"


def statement_text(qe: Any) -> str | None:
    """The SQL text a ``QueryExecution``'s logical plan was parsed from, if it kept it.

    Read as the text of that Scala ``Option`` in one call ("None" or
    "Some(<text>)"), else step by step.
    """
    try:
        option = str(chained(_SQL_TEXT, lambda q: q.logical().origin().sqlText().toString(), qe))
        if option.startswith("Some(") and option.endswith(")"):
            return option[5:-1]
        if option != "None":
            origin = qe.logical().origin().sqlText()
            if origin.isDefined():
                return str(origin.get())
    except Exception:
        logger.debug("no SQL text", exc_info=True)
    return None


@dataclass
class _Call:
    """One ``spark.sql`` call: when it began, and the DataFrame's JVM side once returned."""

    began: float
    ended: float | None = None
    jdf: Any = None
    #: Short class name of the command the call ran; "" when it ran none.
    command_class: str | None = None
    command: Any = None


class SqlCalls:
    """The last few ``spark.sql`` calls of one session, for :meth:`text_for`."""

    def __init__(self) -> None:
        self._calls: deque[_Call] = deque(maxlen=_KEPT)
        self._lock = threading.Lock()
        self._spark: Any = None
        self._wrapper: Any = None

    def wrap(self, spark: Any) -> None:
        """Record ``spark.sql`` calls on this session object; the call itself runs
        exactly as PySpark's, with the caller's arguments, and raises what it raises."""
        original = spark.sql
        calls = self

        def sql(*args: Any, **kwargs: Any) -> Any:
            call = calls._begin()
            try:
                result = original(*args, **kwargs)
            except BaseException:
                call.ended = time.time()
                raise
            call.jdf = getattr(result, "_jdf", None)
            call.ended = time.time()
            return result

        sql.__doc__ = original.__doc__
        sql.__wrapped__ = original  # type: ignore[attr-defined]
        spark.sql = sql
        self._spark, self._wrapper = spark, sql

    def unwrap(self) -> None:
        """Give the session back its own ``spark.sql`` and forget every call."""
        spark, self._spark = self._spark, None
        if spark is not None and vars(spark).get("sql") is self._wrapper:
            del spark.sql
        with self._lock:
            self._calls.clear()

    def _begin(self) -> _Call:
        call = _Call(time.time())
        with self._lock:
            while self._calls and (self._calls[0].ended or call.began) < call.began - _MAX_AGE:
                self._calls.popleft()
            self._calls.append(call)
        return call

    def text_for(self, qe: Any, root_class: str, reported: float) -> str | None:
        """The text of the ``spark.sql`` call that ran ``qe``'s command (its logical
        plan, of class ``root_class``), begun before ``reported``; ``None`` if none did."""
        with self._lock:
            calls = [c for c in self._calls if c.began <= reported]
        if not calls:
            return None
        deadline = time.monotonic() + _WAIT
        command = None
        for call in reversed(calls):
            while call.ended is None and time.monotonic() < deadline:
                time.sleep(0.005)
            if not self._resolve(call) or call.command_class != root_class:
                continue
            if command is None:
                command = qe.logical()
            if not call.command.equals(command):
                continue
            text = statement_text(call.jdf.queryExecution())
            self._forget(call)
            return text
        return None

    def _resolve(self, call: _Call) -> bool:
        """Whether ``call`` ran a command; asks the JVM the first time only."""
        if call.command_class is None:
            if call.jdf is None:
                if call.ended is not None:  # the call raised: it ran nothing to report
                    self._forget(call)
                return False
            result = call.jdf.queryExecution().commandExecuted()
            if class_name(result) == _COMMAND_RESULT:
                call.command = result.commandLogicalPlan()
                call.command_class = short_class(class_name(call.command))
            else:
                call.command_class = ""
        if not call.command_class:
            self._forget(call)
            return False
        return True

    def _forget(self, call: _Call) -> None:
        with self._lock:
            try:
                self._calls.remove(call)
            except ValueError:
                pass
        call.jdf = call.command = None
