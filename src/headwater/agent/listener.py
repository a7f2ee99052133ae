"""The py4j ``QueryExecutionListener`` callback: the agent's catch-all boundary.

Spark calls :meth:`ActionListener.onSuccess` / ``onFailure`` on its
listener-bus thread, which every other listener shares (issue 4, item 5). So
that thread does only what needs the live ``QueryExecution`` — one ``toJSON``
of the optimized plan, the few JVM look-ups JSON lacks, the catalog facts of
the tables a command names, the executed plan's node name and write metrics —
and hands the plain result to :class:`CaptureWorker`, which builds and emits
the events on its own thread.

Nothing raises out of here: each kind of failure is logged once, then at
debug level, and the job goes on.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from headwater.agent.actions import ActionCapture, is_read_only
from headwater.agent.jvm import CatalogLookup, capture_plan, executed_plan_facts
from headwater.agent.plan import short_class
from headwater.agent.visitors.commands import table_idents

__all__ = ["ActionListener", "CaptureWorker", "LogOnce"]

logger = logging.getLogger(__name__)


class LogOnce:
    """Log each kind of failure once as a warning, later ones at debug level."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, where: str, exc: BaseException) -> None:
        key = f"{where}:{type(exc).__name__}"
        with self._lock:
            first = key not in self._seen
            self._seen.add(key)
        if first:
            logger.warning("headwater agent: %s failed (the job goes on): %r", where, exc, exc_info=exc)
        else:
            logger.debug("headwater agent: %s failed again: %r", where, exc)


class CaptureWorker:
    """A daemon thread that turns captures into events off the listener thread."""

    def __init__(self, handle: Callable[[ActionCapture], None], log_once: LogOnce, size: int = 1000):
        self._handle = handle
        self._log_once = log_once
        self._queue: queue.Queue[ActionCapture | None] = queue.Queue(maxsize=size)
        self._thread = threading.Thread(target=self._run, name="headwater-capture", daemon=True)
        self._thread.start()

    def submit(self, capture: ActionCapture) -> None:
        try:
            self._queue.put_nowait(capture)
        except queue.Full:
            logger.warning("headwater agent: capture queue full, lineage of %s dropped", capture.func_name)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._handle(item)
            except Exception as exc:
                self._log_once("building events", exc)
            finally:
                self._queue.task_done()

    def drain(self, timeout: float) -> bool:
        """Wait until queued captures are handled; ``False`` on timeout."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._queue.unfinished_tasks

    def stop(self, timeout: float) -> None:
        self.drain(timeout)
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass
        self._thread.join(0.5)


class ActionListener:
    """Implements ``org.apache.spark.sql.util.QueryExecutionListener`` over py4j."""

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]

    def __init__(
        self,
        jsession: Any,
        jvm: Any,
        submit: Callable[[ActionCapture], None],
        log_once: LogOnce,
        capture_read_only: bool = False,
        record_seconds: Callable[[float], None] | None = None,
    ) -> None:
        self._jsession = jsession
        self._jvm = jvm
        self._submit = submit
        self._log_once = log_once
        self._capture_read_only = capture_read_only
        self._record_seconds = record_seconds
        self._catalog: CatalogLookup | None = None
        self.active = True

    # py4j calls these two by name; they must never raise.
    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:  # noqa: N802,N803
        self._on_action(funcName, qe, durationNs, None)

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:  # noqa: N802,N803
        self._on_action(funcName, qe, None, exception)

    def _on_action(self, func_name: str, qe: Any, duration_ns: int | None, exception: Any) -> None:
        if not self.active:
            return
        began = time.perf_counter()
        try:
            capture = self.capture(func_name, qe, duration_ns, exception)
            if capture is not None:
                self._submit(capture)
        except Exception as exc:
            self._log_once(f"capturing {func_name}", exc)
        finally:
            if self._record_seconds is not None:
                try:
                    self._record_seconds(time.perf_counter() - began)
                except Exception:
                    pass

    def capture(
        self, func_name: str, qe: Any, duration_ns: int | None, exception: Any
    ) -> ActionCapture | None:
        """The plain-data capture of one action, or ``None`` when it is skipped."""
        end = time.time()
        jplan = qe.optimizedPlan()
        root_class = short_class(str(jplan.getClass().getName()))
        if is_read_only(root_class) and not self._capture_read_only:
            return None
        plan = capture_plan(jplan, optimize=self._optimize)
        tables: dict[str, dict[str, Any]] = {}
        resolved = None
        if plan.tree.cls == "DropTable" and plan.tree.children:
            resolved = plan.facts_for(plan.tree.children[0])
        for database, table in table_idents(plan.tree, resolved):
            try:
                facts = self._catalog_lookup().table(database, table)
                tables[f"{database or 'default'}.{table}"] = facts
            except Exception as exc:
                self._log_once("catalog look-up", exc)
        executed: dict[str, Any] = {}
        try:
            executed = executed_plan_facts(qe)
        except Exception as exc:
            self._log_once("executed plan", exc)
        error = None
        if exception is not None:
            error = self._error(exception)
        duration = (duration_ns or 0) / 1e9
        return ActionCapture(
            func_name=func_name,
            plan=plan,
            tables=tables,
            executed=executed,
            start_time=end - duration,
            end_time=end,
            sql=self._sql_text(qe),
            error=error,
        )

    def _optimize(self, jquery: Any) -> Any:
        return self._jsession.sessionState().optimizer().execute(jquery)

    def _catalog_lookup(self) -> CatalogLookup:
        if self._catalog is None:
            self._catalog = CatalogLookup(self._jsession)
        return self._catalog

    def _sql_text(self, qe: Any) -> str | None:
        # spark.sql() records the statement text as the logical plan's origin.
        try:
            origin = qe.logical().origin().sqlText()
            if origin.isDefined():
                return str(origin.get())
        except Exception:
            logger.debug("no SQL text", exc_info=True)
        return None

    def _error(self, exception: Any) -> tuple[str, str | None]:
        message = str(exception.getMessage() or exception.toString())
        try:
            trace = str(self._jvm.org.apache.spark.util.Utils.exceptionString(exception))
        except Exception:
            trace = None
        return message, trace
