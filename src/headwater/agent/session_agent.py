"""One attached agent: what :func:`headwater.agent.attach` returns.

:meth:`Agent._start` registers the listeners (actions through :mod:`.listener`,
dropped tables, streaming queries, Spark ML, RDD saves, ``spark.sql`` calls)
and emits the application run's START; :meth:`Agent._handle`, on the capture
thread, turns each captured item into its events; :meth:`Agent.close` ends the
application run with COMPLETE or FAIL and closes the emitter.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from headwater import __version__
from headwater.agent.agent_registry import (
    model_lineage_for,
    rdd_save_begins,
    rdd_save_ends,
    register_exit_hook,
    registry,
    registry_lock,
)
from headwater.agent.py4j.handles import callback_gateway, java_session

__all__ = ["Agent"]

logger = logging.getLogger(__name__)

#: How long close() lets already-finished actions reach the listener at most.
_BUS_DRAIN_SECONDS = 30.0


class Agent:
    """An attached (or disabled) agent; :meth:`close` ends the application run."""

    def __init__(self) -> None:
        self.enabled = False
        self.config: Any = None
        self.emitter: Any = None
        self.model: Any = None
        self._listener: Any = None
        self._worker: Any = None
        self._jsession: Any = None
        self._key: int | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._context: dict[str, Any] = {}
        self._log_once: Any = None
        self._spark_context: Any = None
        self._tuner: Any = None
        self._dropped: Any = None
        self._streams: Any = None
        self._ml: Any = None
        self._sql_calls: Any = None

    # -- lifecycle ------------------------------------------------------------------------

    def _start(self, spark: Any, config: Any, emitter: Any) -> None:
        from headwater.agent.catalog_events import DroppedTables
        from headwater.agent.listener import ActionListener, CaptureWorker, LogOnce
        from headwater.agent.py4j.connection import ConnectionTuner
        from headwater.agent.run_model import RunModel
        from headwater.agent.session import application_details, session_context, spark_properties
        from headwater.agent.source_code import source_code_location

        self.config = config
        self.emitter = emitter
        self._jsession = java_session(spark)
        self._log_once = LogOnce()
        self._context = session_context(spark)
        captured = spark_properties(spark, getattr(config, "captured_properties", ()) or ())
        self.model = RunModel(
            config,
            spark.sparkContext.appName,
            spark.version,
            __version__,
            captured,
            application_details=application_details(spark),
            source_code=source_code_location(getattr(config, "source_code", None)),
        )
        if self.model.enabled("debug"):
            from headwater.agent.debug_facet import session_debug_facts

            try:
                self.model.debug_session = session_debug_facts(spark, __version__)
            except Exception as exc:  # the debug facet is then left out
                self._log_once("reading the debug facet's session facts", exc)
            snapshot = getattr(getattr(emitter, "metrics", None), "snapshot", None)
            self.model.debug_delivery = snapshot
        self.model.emission_snapshot = getattr(getattr(emitter, "metrics", None), "snapshot", None)
        self._worker = CaptureWorker(self._handle, self._log_once)
        metrics = getattr(emitter, "metrics", None)
        record = getattr(metrics, "record_capture", None)
        gateway = callback_gateway(spark.sparkContext)
        self._tuner = ConnectionTuner(gateway)
        threads = getattr(metrics, "threads", None)
        if isinstance(threads, dict) and self._worker.native_id is not None:
            threads["capture"] = self._worker.native_id
        try:
            dropped = DroppedTables()
            dropped.register(self._jsession)
            self._dropped = dropped
        except Exception as exc:  # every IF EXISTS drop is then reported
            self._log_once("listening to the session catalog", exc)
        status_store = None
        try:
            status_store = self._jsession.sharedState().statusStore()
        except Exception as exc:  # a CTAS's nested insert is then reported too
            self._log_once("reading the SQL status store", exc)
        self._listener = ActionListener(
            self._jsession,
            gateway.jvm,
            self._worker.submit,
            self._log_once,
            capture_read_only=bool(getattr(config, "capture_read_only_actions", False)),
            record_seconds=record,
            dropped=self._dropped,
            status_store=status_store,
        )
        self._jsession.listenerManager().register(self._listener)
        try:
            from headwater.agent.streaming import StreamingLineage

            self._streams = StreamingLineage(
                self._jsession,
                gateway.jvm,
                self.model,
                self._context,
                self._emit,
                self._worker.submit,
                self._log_once,
                interval=float(getattr(config, "streaming_progress_interval", 60.0)),
                ignored_sinks=tuple(getattr(config, "streaming_ignored_sinks", ())),
                catalog_impl=self._context.get("catalog_impl", "hive"),
                remove_path=getattr(config, "remove_path_pattern", None),
            )
        except Exception as exc:  # streaming queries go unseen; batch lineage is unaffected
            self._log_once("listening to streaming queries", exc)
        self._spark_context = spark.sparkContext
        try:
            from headwater.agent.ml_hooks import install_ml_hooks
            from headwater.agent.ml_models import ModelLineage

            self._ml = ModelLineage(
                self.model,
                self._context,
                self._emit,
                self._worker.submit,
                self._log_once,
                catalog_impl=self._context.get("catalog_impl", "hive"),
                remove_path=getattr(config, "remove_path_pattern", None),
            )
            install_ml_hooks(model_lineage_for)
            if self._streams is not None:
                self._streams.models = self._ml
        except ImportError:  # pyspark.ml needs numpy: no models without it
            logger.debug("pyspark.ml is not importable; models go unseen", exc_info=True)
            self._ml = None
        except Exception as exc:  # models go unseen; the rest of the lineage is unaffected
            self._log_once("wrapping Spark ML", exc)
            self._ml = None
        try:
            from headwater.agent.rdds import install_rdd_hooks

            install_rdd_hooks(rdd_save_begins, rdd_save_ends)
        except Exception as exc:  # RDD saves go unseen; SQL lineage is unaffected
            self._log_once("wrapping RDD saves", exc)
        register_exit_hook()
        self._wrap_stop(spark)
        try:
            from headwater.agent.sql_calls import SqlCalls

            sql_calls = SqlCalls()
            sql_calls.wrap(spark)
            self._sql_calls = sql_calls
        except Exception as exc:  # a command whose plan lost its SQL text has no sql facet
            self._log_once("recording spark.sql calls", exc)
        self.enabled = True
        self._emit(self.model.application_event("START"))

    def _wrap_stop(self, spark: Any) -> None:
        """End the application run when the session stops, as the listener does at
        application end (``spark.stop()`` and ``with SparkSession...`` both call it)."""
        original = spark.stop
        agent = self

        def stop(*args: Any, **kwargs: Any) -> Any:
            try:
                agent.close(getattr(getattr(agent.config, "delivery", None), "flush_timeout", 5.0))
            except Exception as exc:  # never keep the session from stopping
                logger.debug("closing the agent at stop failed: %r", exc)
            return original(*args, **kwargs)

        stop.__doc__ = original.__doc__
        spark.stop = stop

    def _emit(self, event: dict[str, Any]) -> None:
        # The emitter promises not to raise; a custom one might, and the job goes on.
        try:
            self.emitter.emit(event)
        except Exception as exc:
            self._log_once("emitting", exc)

    def _handle(self, item: Any) -> None:
        from headwater.agent.actions import action_events, plan_datasets, rdd_save_events
        from headwater.agent.listener import PendingAction
        from headwater.agent.ml_models import ModelStep
        from headwater.agent.py4j.proxies import proxy_scope
        from headwater.agent.rdds import RddSavePhase
        from headwater.agent.sources import VisitContext
        from headwater.agent.streaming import StreamStep

        if isinstance(item, StreamStep):
            self._streams.handle(item)
            return
        if isinstance(item, ModelStep):
            self._ml.handle(item)
            return
        if isinstance(item, RddSavePhase):
            remove_path = getattr(self.config, "remove_path_pattern", None)
            saved = rdd_save_events(item, self.model, remove_path)
            if self._ml is None or not self._ml.is_internal(saved):
                for event in saved:
                    self._emit(event)
            return
        began, began_cpu = time.perf_counter(), time.thread_time()
        metrics = getattr(self.emitter, "metrics", None)
        stream_run = None
        analyzed = None
        if isinstance(item, PendingAction):
            if self._streams is not None:
                stream_run = self._streams.owner(item.qe)
                item.in_stream = stream_run is not None
            # The worker's py4j connection gets TCP_NODELAY once: a plan's JSON then
            # arrives without a 40 ms delayed-ACK stall (see .py4j.connection).
            if self._tuner.ensure() and metrics is not None:
                self._note_worker_jvm_thread(metrics)
            # The capture is the last use of the action's JVM objects: released
            # at once rather than at Python's next full collection (see .py4j.proxies).
            with proxy_scope(item.qe, item.jplan, item.exception):
                if self._ml is not None and self._ml.columns:
                    analyzed = self._analyzed_json(item.qe)
                capture = self._listener.capture_pending(item)
                item.qe = item.jplan = item.exception = None
            if capture is None:  # an insert nested in a command reported on its own
                return
        else:
            capture = item

        ctx = VisitContext(
            tree=capture.plan.tree,
            node_facts=capture.plan.facts,
            tables=capture.tables,
            warehouse_uri=self._context.get("warehouse_uri"),
            table_namespace=self._context.get("table_namespace"),
            remove_path=getattr(self.config, "remove_path_pattern", None),
            micro_batch=stream_run.micro_batch if stream_run is not None else None,
        )
        catalog_impl = self._context.get("catalog_impl", "hive")
        if capture.query_execution is not None:
            capture.sql = self._statement_text(capture, look_up=stream_run is None)
        if stream_run is not None:
            _, inputs, outputs = plan_datasets(ctx, self.model, catalog_impl, capture.executed)
            self._streams.absorb(stream_run, inputs, outputs)
            return
        events = action_events(capture, self.model, ctx, catalog_impl)
        if self._ml is not None:
            if self._ml.is_internal(events):
                return
            if analyzed is not None:
                self._ml.add_models(events, analyzed)
        record = getattr(metrics, "record_build", None)
        if record is not None:
            record(time.perf_counter() - began, time.thread_time() - began_cpu)
        for event in events:
            self._emit(event)

    def _statement_text(self, capture: Any, look_up: bool) -> str | None:
        """The SQL text of an action whose plan lost it, from the ``spark.sql`` call
        that ran it (:mod:`.sql_calls`); ``None`` if no such call did. The action's
        ``QueryExecution`` is released either way."""
        from headwater.agent.py4j.proxies import proxy_scope

        qe, capture.query_execution = capture.query_execution, None
        with proxy_scope(qe):
            try:
                if look_up and self._sql_calls is not None:
                    return self._sql_calls.text_for(qe, capture.plan.tree.cls, capture.end_time)
            except Exception as exc:
                self._log_once("finding the SQL text of a spark.sql command", exc)
            finally:
                del qe
        return None

    def _analyzed_json(self, qe: Any) -> str | None:
        """The action's analyzed plan as JSON, where the columns a model added keep
        the ids ``transform`` saw (the optimizer may fold them into others)."""
        try:
            return str(qe.analyzed().toJSON())
        except Exception as exc:
            self._log_once("reading an action's analyzed plan", exc)
            return None

    def _note_worker_jvm_thread(self, metrics: Any) -> None:
        """Name the JVM thread serving the worker's py4j calls in the metrics (for benchmarks)."""
        try:
            threads = getattr(metrics, "jvm_threads", None)
            if isinstance(threads, dict) and self._tuner.jvm_thread_id is not None:
                threads["capture"] = self._tuner.jvm_thread_id
        except Exception:
            logger.debug("could not note the worker's threads", exc_info=True)

    def _wait_for_listener_bus(self, timeout: float) -> bool:
        # Actions reach the listener through Spark's asynchronous listener bus.
        try:
            self._jsession.sparkContext().listenerBus().waitUntilEmpty(int(timeout * 1000))
            return True
        except Exception:
            logger.debug("could not wait for the listener bus", exc_info=True)
            return False

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every captured action's events reached the emitter and were sent."""
        if not self.enabled:
            return True
        self._wait_for_listener_bus(timeout)
        drained = self._worker.drain(timeout)
        flush = getattr(self.emitter, "flush", None)
        return bool(drained and (flush(timeout) if flush is not None else True))

    def close(self, timeout: float = 5.0, error: BaseException | None = None) -> None:
        """Unregister, finish queued captures, emit the application COMPLETE/FAIL and
        close the emitter."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with registry_lock:
            if self._key is not None and registry.get(self._key) is self:
                del registry[self._key]
        if not self.enabled:
            return
        try:
            # Let actions already on Spark's listener bus reach the agent first. An
            # action still on the bus when the listener is unregistered is lost for
            # good (nothing to spool), so a starved machine gets a longer, bounded wait
            # here than delivery does — and a warning if even that runs out.
            if not self._wait_for_listener_bus(timeout) and not self._wait_for_listener_bus(
                max(_BUS_DRAIN_SECONDS - timeout, 0.0)
            ):
                logger.warning(
                    "headwater agent: Spark's listener bus did not drain within %.0f s at stop;"
                    " lineage of the last actions may be missing",
                    max(timeout, _BUS_DRAIN_SECONDS),
                )
            self._listener.active = False
            try:
                self._jsession.listenerManager().unregister(self._listener)
            except Exception:
                logger.debug("listener already gone", exc_info=True)
            if self._dropped is not None:
                self._dropped.unregister()
            if self._streams is not None:
                self._streams.unregister()
            self._worker.stop(timeout)
            if self._sql_calls is not None:
                self._sql_calls.unwrap()
            if self._streams is not None:
                self._streams.close(error)
            if self._ml is not None:
                self._ml.close()
            if error is None:
                self._emit(self.model.application_event("COMPLETE"))
            else:
                self._emit(self.model.application_event("FAIL", (repr(error), None)))
            self.emitter.close(timeout)
            self._log_summary()
        except Exception as exc:
            logger.warning("headwater agent: close failed: %r", exc)

    def stats(self) -> dict[str, Any]:
        """This agent's emission figures (see :mod:`headwater.agent.emission`)."""
        from headwater.agent.emission import emission_figures

        snapshot = getattr(getattr(self.emitter, "metrics", None), "snapshot", None)
        return emission_figures(snapshot() if snapshot is not None else {})

    def _log_summary(self) -> None:
        from headwater.agent.emission import log_summary

        snapshot = getattr(getattr(self.emitter, "metrics", None), "snapshot", None)
        if snapshot is not None:
            log_summary(self.model.app_name, snapshot())
