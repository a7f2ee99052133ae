"""The py4j ``QueryExecutionListener`` callback: the agent's catch-all boundary.

Spark calls :meth:`ActionListener.onSuccess` / ``onFailure`` on its
listener-bus thread, which every other listener shares, so
that thread does as little as it can: it reads the optimized plan's class
(three py4j calls), skips read-only actions, and hands the ``QueryExecution``
itself to :class:`CaptureWorker` as a :class:`PendingAction`. The worker then
serialises the plan, fetches the few JVM facts JSON lacks and builds and emits
the events on its own thread. That is safe because a finished action's plans,
relations and metrics are immutable; the py4j reference keeps them alive until
the worker is done.

The exception is session-catalog DDL (:data:`CAPTURE_AT_ONCE`): its events
depend on catalog state (a table's location and schema) that the job's next
statement may change (ALTER then RENAME, CREATE then DROP), so DDL — small
plans — is captured on the listener thread as soon as Spark reports it (a drop
is not: see ``ddl.DROP_COMMANDS``). A write into a v2 table, a v2 create or a
v2 ALTER depends on such state too (the snapshot it committed, the schema it
left): the listener thread only pins the table's state
(:func:`~.sources.dsv2.pin_table`, a few py4j calls) and the worker captures
the rest.

Nothing raises out of here: each kind of failure is logged once, then at
debug level, and the job goes on.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from headwater.agent.actions import ActionCapture, is_skipped
from headwater.agent.capture import RelationCache, capture_plan
from headwater.agent.jvm import (
    CatalogLookup,
    RelationHashes,
    executed_plan_facts,
    execution_ids,
    execution_input_metrics,
)
from headwater.agent.plan import short_class
from headwater.agent.py4j.proxies import proxy_scope
from headwater.agent.sources.ddl import DDL_COMMANDS, DROP_COMMANDS, table_idents
from headwater.agent.sources.dsv2 import NESTED_WRITE, PINNED, V2_DROP, pin_table, pinned_root_facts
from headwater.agent.sources.dsv2_pins import StagedTables
from headwater.agent.sql_calls import statement_text

__all__ = ["ActionListener", "CAPTURE_AT_ONCE", "CaptureWorker", "LogOnce", "PendingAction"]

#: Plan roots captured on the listener thread: their events read the catalog.
CAPTURE_AT_ONCE = frozenset(DDL_COMMANDS) - DROP_COMMANDS

#: Commands Spark runs as an outer execution around a nested insert of their own;
#: the outer one is the action reported, with the nested insert's write metrics.
OUTER_WRITES = frozenset(
    {
        "CreateDataSourceTableAsSelectCommand",
        "CreateHiveTableAsSelectCommand",
        "OptimizedCreateHiveTableAsSelectCommand",
        "InsertIntoDataSourceDirCommand",
        "InsertIntoHiveDirCommand",
    }
)

#: ``funcName`` of the executions a table format runs inside a command of its own,
#: which is the action reported: Delta writes its files (under a MERGE, an UPDATE, a
#: save, a CTAS) as one of these, whose plan is only the rows written.
NESTED_FUNCTIONS = frozenset({"deltaTransactionalWrite"})

#: Nested inserts' write metrics kept for their outer command at most.
_NESTED_KEPT = 16

#: Look-ups of a write's execution in the status store, 50 ms apart.
_LOOKUP_TRIES = 10

logger = logging.getLogger(__name__)


#: Leaf classes that read a dataset (for input statistics, which Spark keeps per stage).
_READ_LEAVES = frozenset(
    {"LogicalRelation", "LogicalRDD", "HiveTableRelation", "DataSourceV2Relation", "DataSourceV2ScanRelation"}
)


def _read_leaves(tree: Any) -> int:
    return sum(1 for node in tree.walk() if node.cls in _READ_LEAVES)


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


@dataclass
class PendingAction:
    """An action Spark reported, not captured yet: what the worker needs to capture it."""

    func_name: str
    qe: Any
    duration_ns: int | None
    exception: Any
    end_time: float
    #: The optimized plan (already fetched to decide whether to capture at all).
    jplan: Any = None
    #: The state of the v2 table the action wrote, held when Spark reported it.
    pinned: Any = None
    #: Run by a streaming query's micro-batch (a ``foreachBatch`` write): its own
    #: action, though it runs nested in the micro-batch's execution.
    in_stream: bool = False


class CaptureWorker:
    """A daemon thread that turns actions into events off the listener thread.

    The queue is bounded: a pending action holds its ``QueryExecution`` alive in
    the JVM until it is captured.
    """

    def __init__(self, handle: Callable[[Any], None], log_once: LogOnce, size: int = 500):
        self._handle = handle
        self._log_once = log_once
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=size)
        self._thread = threading.Thread(target=self._run, name="headwater-capture", daemon=True)
        self._thread.start()
        #: The worker thread's native id (benchmarks read its CPU time).
        self.native_id: int | None = self._thread.native_id

    def submit(self, capture: ActionCapture | PendingAction) -> None:
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
        submit: Callable[[Any], None],
        log_once: LogOnce,
        capture_read_only: bool = False,
        record_seconds: Callable[[float, float], None] | None = None,
        defer: bool = True,
        dropped: Any = None,
        status_store: Any = None,
    ) -> None:
        """``submit`` receives a :class:`PendingAction` (captured later with
        :meth:`capture_pending`) or, for DDL and when ``defer`` is false, a finished
        :class:`ActionCapture`. ``record_seconds`` gets the time each callback held
        Spark's listener thread: wall seconds and that thread's CPU seconds.
        ``dropped`` (a :class:`~headwater.agent.catalog_events.DroppedTables`) tells
        whether a ``DROP TABLE IF EXISTS`` dropped anything; ``status_store`` (the
        session's ``SQLAppStatusStore``) which inserts run nested in a command."""
        self._jsession = jsession
        self._jvm = jvm
        self._submit = submit
        self._log_once = log_once
        self._capture_read_only = capture_read_only
        self._record_seconds = record_seconds
        self._defer = defer
        self._dropped = dropped
        self._catalog: CatalogLookup | None = None
        self._relations = RelationCache()
        self._relation_hashes = RelationHashes(jvm)
        self._staged = StagedTables()
        # root execution id -> write metrics of the insert nested in it
        self._nested: dict[int, dict[str, Any]] = {}
        self._nested_lock = threading.Lock()
        self._status_store = status_store
        self._app_store: Any = None
        self._store_misses = 0
        self.active = True

    # py4j calls these two by name; they must never raise.
    def onSuccess(self, funcName: str, qe: Any, durationNs: int) -> None:  # noqa: N802,N803
        self._on_action(funcName, qe, durationNs, None)

    def onFailure(self, funcName: str, qe: Any, exception: Any) -> None:  # noqa: N802,N803
        self._on_action(funcName, qe, None, exception)

    def _on_action(self, func_name: str, qe: Any, duration_ns: int | None, exception: Any) -> None:
        if not self.active or func_name in NESTED_FUNCTIONS:
            return
        # Proxies made here and not handed to the worker (a skipped action's plan,
        # class names) are released at once (see .proxies).
        with proxy_scope():
            self._on_action_scoped(func_name, qe, duration_ns, exception)

    def _on_action_scoped(
        self, func_name: str, qe: Any, duration_ns: int | None, exception: Any
    ) -> None:
        began, began_cpu = time.perf_counter(), time.thread_time()
        try:
            jplan = qe.optimizedPlan()
            root_class = short_class(str(jplan.getClass().getName()))
            if is_skipped(root_class, self._capture_read_only):
                return
            pending = PendingAction(func_name, qe, duration_ns, exception, time.time(), jplan)
            if self._defer and root_class in PINNED:
                pending.pinned = self._pin(jplan, root_class, func_name)
                self._submit(pending)
            elif self._defer and root_class not in CAPTURE_AT_ONCE:
                self._submit(pending)
            else:
                capture = self.capture_pending(pending)
                if capture is not None:
                    self._submit(capture)
        except Exception as exc:
            self._log_once(f"capturing {func_name}", exc)
        finally:
            if self._record_seconds is not None:
                try:
                    self._record_seconds(time.perf_counter() - began, time.thread_time() - began_cpu)
                except Exception:
                    pass

    def _pin(self, jplan: Any, root_class: str, func_name: str) -> Any:
        """The written table's state (see :func:`~.sources.dsv2.pin_table`); ``None``
        if it cannot be held, when the worker reads the table as it is then."""
        try:
            return pin_table(jplan, root_class, self._staged)
        except Exception as exc:
            self._log_once(f"pinning the table {func_name} wrote", exc)
            return None

    def capture(
        self, func_name: str, qe: Any, duration_ns: int | None, exception: Any
    ) -> ActionCapture | None:
        """The plain-data capture of one action, or ``None`` when it is skipped."""
        jplan = qe.optimizedPlan()
        root_class = short_class(str(jplan.getClass().getName()))
        if is_skipped(root_class, self._capture_read_only):
            return None
        return self.capture_pending(PendingAction(func_name, qe, duration_ns, exception, time.time(), jplan))

    def capture_pending(self, pending: PendingAction) -> ActionCapture | None:
        """Capture an action Spark reported: plan JSON, JVM facts, catalog facts, metrics.

        ``None`` for an insert nested in another execution (a CTAS's, a
        ``saveAsTable``'s): its outer command is the action, and gets its metrics.
        """
        qe, func_name, exception, end = pending.qe, pending.func_name, pending.exception, pending.end_time
        duration_ns = pending.duration_ns
        jplan = pending.jplan if pending.jplan is not None else qe.optimizedPlan()
        executed: dict[str, Any] = {}
        try:
            executed = executed_plan_facts(qe)
        except Exception as exc:
            self._log_once("executed plan", exc)
        if pending.in_stream:
            executed.pop("write_metric_id", None)
        elif self._nested_insert(executed):
            return None
        root_class = short_class(str(jplan.getClass().getName()))
        if root_class in OUTER_WRITES and "numOutputRows" not in executed:
            executed.update(self._nested_metrics())
        pinned = pending.pinned
        plan = capture_plan(
            jplan,
            optimize=self._optimize,
            relations=self._relations,
            relation_hashes=self._relation_hashes,
            root_lookup=(lambda jroot: pinned_root_facts(pinned, jroot)) if pinned is not None else None,
        )
        if plan.facts_for(plan.tree).get(NESTED_WRITE):
            return None  # the write of a CTAS/RTAS, reported as that command
        if "numOutputRows" in executed and _read_leaves(plan.tree) == 1:
            executed.update(self._input_metrics(executed.pop("execution_id", None)))
        executed.pop("execution_id", None)
        tables: dict[str, dict[str, Any]] = {}
        resolved = None
        if plan.tree.cls == "DropTable" and plan.tree.children:
            resolved = plan.facts_for(plan.tree.children[0])
        # The session catalog tells whether a DROP TABLE IF EXISTS dropped anything;
        # a v2 catalog does not, so its drops are reported.
        if not plan.facts_for(plan.tree).get(V2_DROP) and self._dropped_nothing(plan.tree, resolved):
            return None
        for database, table in table_idents(plan.tree, resolved):
            try:
                facts = self._catalog_lookup().table(database, table)
                tables[f"{database or 'default'}.{table}"] = facts
            except Exception as exc:
                self._log_once("catalog look-up", exc)
        error = None
        if exception is not None:
            error = self._error(exception)
        duration = (duration_ns or 0) / 1e9
        sql = statement_text(qe)
        return ActionCapture(
            func_name=func_name,
            plan=plan,
            tables=tables,
            executed=executed,
            start_time=end - duration,
            end_time=end,
            sql=sql,
            error=error,
            # Kept for the worker to find the text through the spark.sql call (.sql_calls).
            query_execution=qe if sql is None else None,
        )

    def _dropped_nothing(self, root: Any, resolved: dict[str, Any] | None) -> bool:
        """Whether ``root`` is a ``DROP TABLE IF EXISTS`` of a session-catalog table
        that did not exist (see :mod:`.catalog_events`)."""
        if self._dropped is None or root.cls not in ("DropTable", "DropTableCommand"):
            return False
        if not root.fields.get("ifExists") or (resolved or {}).get("catalog") not in (None, "spark_catalog"):
            return False
        idents = table_idents(root, resolved)
        return bool(idents) and not self._dropped.take(*idents[-1])

    def _nested_insert(self, executed: dict[str, Any]) -> bool:
        """Whether the write ``executed`` describes runs nested in another execution;
        its metrics are then kept for the outer command."""
        metric_id = executed.pop("write_metric_id", None)
        if metric_id is None or self._status_store is None:
            return False
        root = None
        for _ in range(_LOOKUP_TRIES if self._store_misses < _LOOKUP_TRIES else 1):
            try:
                own, found_root = execution_ids(self._status_store, metric_id)
                executed["execution_id"] = own
                root = found_root if found_root != own else None
                self._store_misses = 0
                break
            except LookupError:
                # The store hears of an execution on a listener queue of its own,
                # which a busy driver may not have caught up on yet; a store that
                # keeps missing (retains nothing) is asked once from then on.
                time.sleep(0.05)
            except Exception as exc:
                self._log_once("execution look-up", exc)
                return False
        else:
            self._store_misses += 1
        if root is None:
            return False
        with self._nested_lock:
            self._nested[root] = {k: v for k, v in executed.items() if k != "node_name"}
            while len(self._nested) > _NESTED_KEPT:
                del self._nested[min(self._nested)]
        return True

    def _nested_metrics(self) -> dict[str, Any]:
        # The outer command's own execution id is not known to this listener; its
        # nested insert ended just before it, so it is the newest one kept.
        with self._nested_lock:
            return self._nested.pop(max(self._nested)) if self._nested else {}

    def _input_metrics(self, execution_id: int | None) -> dict[str, Any]:
        """What an execution read (rows, bytes), from Spark's status stores."""
        if self._status_store is None or execution_id is None:
            return {}
        try:
            if self._app_store is None:
                self._app_store = self._jsession.sparkContext().statusStore()
            return execution_input_metrics(self._app_store, self._status_store, execution_id)
        except Exception as exc:
            self._log_once("reading input metrics", exc)
            return {}

    def _optimize(self, jquery: Any) -> Any:
        return self._jsession.sessionState().optimizer().execute(jquery)

    def _catalog_lookup(self) -> CatalogLookup:
        if self._catalog is None:
            self._catalog = CatalogLookup(self._jsession)
        return self._catalog

    def _error(self, exception: Any) -> tuple[str, str | None]:
        message = str(exception.getMessage() or exception.toString())
        try:
            trace = str(self._jvm.org.apache.spark.util.Utils.exceptionString(exception))
        except Exception:
            trace = None
        return message, trace
