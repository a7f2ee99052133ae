"""Structured Streaming: one OpenLineage run per run of a streaming query.

A py4j ``StreamingQueryListener`` (:class:`StreamingListener`, registered with
the session's ``StreamingQueryManager`` as PySpark's own listeners are: through
``PythonStreamingQueryListenerWrapper``) hears each query start, make progress
and end. Spark calls ``onQueryStarted`` on the query's own thread before
``start()`` returns, and the others on its listener bus, which every listener
shares, so the callbacks only note what happened and hand a :class:`StreamStep`
to the agent's capture worker, which captures and emits in the order they came.

The run model:

* a query run (``query.id`` + ``query.runId``; a restart from the same
  checkpoint is a new run) is one OpenLineage run whose id is derived from the
  two, so each of its events carries the same id; its parent is the application
  run, as an action's is;
* START when the query starts, with the datasets it reads and writes;
* RUNNING at most once per ``spark.headwater.streaming.progressInterval``
  seconds (60 by default), at the first micro-batch's progress after the
  interval has passed — never one per micro-batch — with the progress so far;
* COMPLETE when the query stops (a ``Trigger.AvailableNow`` or ``once`` query
  that has read everything, a ``stop()``), FAIL with the error when it fails,
  and at application exit the same for a query still running then;
* on RUNNING and at the end, a sink into a Delta or Iceberg table carries the
  ``version`` its latest micro-batch committed, read then (two py4j calls an event).

A ``foreachBatch`` function's writes belong to the query's run, not to runs of
their own: each micro-batch runs in the query's own clone of the session, so
an action whose session is a running query's is that query's. Its datasets
join the run's inputs and outputs (a RUNNING event at once when one is new;
their statistics are left to the progress facet), and the query's end is
emitted only after the writes of its last micro-batches.

A query that runs for hours thus sends ``2 + hours * 3600 / interval`` events
at most, plus one per dataset its ``foreachBatch`` writes first reach. Nothing raises out of the callbacks: each kind of failure is logged once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from headwater.agent.actions import column_sources, plan_datasets
from headwater.agent.capture import RelationCache
from headwater.agent.run_model import RunModel
from headwater.agent.sources.common import MicroBatch
from headwater.agent.sources.local_sinks import LOCAL_SINKS
from headwater.agent.stream_events import (
    StreamRun,
    capture_stream,
    merge_datasets,
    stream_event,
    visit_context,
    with_version,
)

__all__ = ["StreamStep", "StreamingLineage", "StreamingListener", "streaming_run_id"]

logger = logging.getLogger(__name__)

#: How long a query's END waits for Spark's listener bus to hand over its last writes.
_BUS_WAIT_MS = 2000

#: The namespace of the run ids derived from a query's id and run id.
_RUN_NAMESPACE = uuid.UUID("6f0d3f4e-9a51-4b8e-8d55-0d6b2c1e7a10")


def streaming_run_id(query_id: str, spark_run_id: str) -> str:
    """The OpenLineage run id of one run of a streaming query: the same for every
    event of that run, whichever agent or process computes it."""
    return str(uuid.uuid5(_RUN_NAMESPACE, f"{query_id}/{spark_run_id}"))


@dataclass
class StreamStep:
    """A streaming query's START, RUNNING or END, for the capture worker."""

    run: StreamRun
    kind: str
    when: float
    error: tuple[str, str | None] | None = None
    #: Named in the worker's warning when its queue is full.
    func_name: str = "a streaming query"
    #: A RUNNING's Kafka offsets read since the previous one (taken on the listener thread).
    offsets: dict[str, dict[str, list[int | None]]] | None = None
    #: An END put back behind the writes its last micro-batches made (see
    #: :meth:`StreamingLineage.handle`).
    settled: bool = False


def _error(text: str) -> tuple[str, str | None]:
    """``(message, stack trace)`` from the text Spark gives a failed query's exception."""
    message = text.split("\n\tat ", 1)[0].strip() or text
    return message, text


class StreamingListener:
    """Implements ``org.apache.spark.sql.streaming.PythonStreamingQueryListener`` over py4j."""

    class Java:
        implements = ["org.apache.spark.sql.streaming.PythonStreamingQueryListener"]

    def __init__(
        self,
        jsession: Any,
        submit: Callable[[Any], None],
        log_once: Callable[[str, BaseException], None],
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._jsession = jsession
        self._submit = submit
        self._log_once = log_once
        self._interval = interval
        self._clock = clock
        self._runs: dict[str, StreamRun] = {}
        self._lock = threading.Lock()
        self.active = True

    # py4j calls these by name; they must never raise.
    def onQueryStarted(self, jevent: Any) -> None:  # noqa: N802
        if not self.active:
            return
        try:
            query_id = str(jevent.id().toString())
            spark_run_id = str(jevent.runId().toString())
            name = jevent.name()
            run = StreamRun(
                query_id=query_id,
                spark_run_id=spark_run_id,
                run_id=streaming_run_id(query_id, spark_run_id),
                name=str(name) if name else None,
                start_time=time.time(),
            )
            # The query is registered before it starts, and is gone from the manager
            # once it ends, which may be before the worker gets to it: its
            # StreamExecution is held from here.
            try:
                run.execution = self._jsession.streams().get(query_id).streamingQuery()
            except Exception as exc:
                self._log_once("finding a started streaming query", exc)
            run.last_sent = self._clock()
            with self._lock:
                self._runs[f"{query_id}/{spark_run_id}"] = run
            self._submit(StreamStep(run, "START", run.start_time))
        except Exception as exc:
            self._log_once("noting a streaming query's start", exc)

    def onQueryProgress(self, jevent: Any) -> None:  # noqa: N802
        if not self.active:
            return
        try:
            # One call for everything the progress says; parsed here, where it is small.
            progress = json.loads(str(jevent.progress().json()))
            with self._lock:
                run = self._runs.get(f"{progress.get('id')}/{progress.get('runId')}")
            if run is None:
                return
            run.note_progress(progress)
            now = self._clock()
            if now - run.last_sent >= self._interval:
                run.last_sent = now
                step = StreamStep(run, "RUNNING", time.time(), offsets=run.take_interval_offsets())
                self._submit(step)
        except Exception as exc:
            self._log_once("noting a streaming query's progress", exc)

    def onQueryIdle(self, jevent: Any) -> None:  # noqa: N802
        # An idle query has nothing new to report; its next progress or its end will.
        return

    def onQueryTerminated(self, jevent: Any) -> None:  # noqa: N802
        if not self.active:
            return
        try:
            key = f"{jevent.id().toString()}/{jevent.runId().toString()}"
            with self._lock:
                run = self._runs.pop(key, None)
            if run is None:
                return
            error = None
            exception = jevent.exception()
            if exception is not None and exception.isDefined():
                error = _error(str(exception.get()))
            self._submit(StreamStep(run, "END", time.time(), error))
        except Exception as exc:
            self._log_once("noting a streaming query's end", exc)

    def take_open_runs(self) -> list[StreamRun]:
        """The runs that have not ended, forgotten from here on."""
        with self._lock:
            runs = list(self._runs.values())
            self._runs.clear()
        return runs


class StreamingLineage:
    """The agent's streaming side: registers the listener, builds each run's events on
    the capture worker, and ends the runs still open when the agent closes."""

    def __init__(
        self,
        jsession: Any,
        jvm: Any,
        model: RunModel,
        context: dict[str, Any],
        emit: Callable[[dict[str, Any]], None],
        submit: Callable[[Any], None],
        log_once: Callable[[str, BaseException], None],
        interval: float = 60.0,
        catalog_impl: str = "hive",
        remove_path: Any = None,
        ignored_sinks: tuple[str, ...] = (),
    ) -> None:
        self._jsession = jsession
        #: Namespaces of the driver-local sinks (memory, console) left out of outputs.
        self._ignored_sinks = frozenset(s for s in ignored_sinks if s in LOCAL_SINKS)
        self._model = model
        self._context = context
        self._emit = emit
        self._log_once = log_once
        self._catalog_impl = catalog_impl
        self._remove_path = remove_path
        self._relations = RelationCache(64)
        self._submit = submit
        #: Running queries by their session's UUID, for the writes of ``foreachBatch``.
        self._by_session: dict[str, StreamRun] = {}
        #: Ended runs whose END waits behind their last writes (ended at ``close`` if
        #: the worker stops first).
        self._ending: dict[str, StreamStep] = {}
        self.listener = StreamingListener(jsession, submit, log_once, interval)
        #: The agent's :class:`~headwater.agent.ml_models.ModelLineage`, when it has one:
        #: a query that scores with a model reads it.
        self.models: Any = None
        self._jlistener = jvm.org.apache.spark.sql.streaming.PythonStreamingQueryListenerWrapper(
            self.listener
        )
        jsession.streams().addListener(self._jlistener)

    def unregister(self) -> None:
        self.listener.active = False
        try:
            self._jsession.streams().removeListener(self._jlistener)
        except Exception:
            logger.debug("streaming listener already gone", exc_info=True)

    def handle(self, step: StreamStep) -> None:
        """Emit the events of one step (on the capture worker)."""
        run = step.run
        if step.kind == "START":
            self._start(run)
        elif step.kind == "RUNNING":
            if run.started and not run.ended:
                self._note_sink_version(run)
                self._emit(stream_event(run, self._model, "RUNNING", step.when, offsets=step.offsets))
        elif not step.settled and run.session_id is not None:
            # The writes of the query's last micro-batches may still be on Spark's
            # listener bus (another queue than the query's end) or behind this step
            # in the worker's: the END goes to the back of the queue once they are in.
            self._wait_for_listener_bus()
            step.settled = True
            self._ending[run.run_id] = step
            self._submit(step)
        else:
            self._end(run, step.when, step.error)

    def owner(self, qe: Any) -> StreamRun | None:
        """The running query whose micro-batch ran the action of ``qe`` (a write inside
        its ``foreachBatch`` function), or ``None``."""
        if not self._by_session:
            return None
        try:
            return self._by_session.get(str(qe.sparkSession().sessionUUID()))
        except Exception as exc:
            self._log_once("finding an action's streaming query", exc)
            return None

    def absorb(
        self, run: StreamRun, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]
    ) -> None:
        """Add what one of ``run``'s micro-batches read and wrote to its datasets; a
        RUNNING event at once when a dataset is new to the run."""
        if run.ended:
            return
        # What the query itself reads keeps the facets its START gave it: a batch
        # names those datasets only through the query's column lineage.
        inputs = [d for d in inputs if (d["namespace"], d["name"]) not in run.own_inputs]
        new = merge_datasets(run.inputs, inputs) | merge_datasets(run.outputs, outputs)
        if new:
            self._emit(stream_event(run, self._model, "RUNNING", time.time()))

    def _wait_for_listener_bus(self) -> None:
        try:
            self._jsession.sparkContext().listenerBus().waitUntilEmpty(_BUS_WAIT_MS)
        except Exception:
            logger.debug("could not wait for the listener bus", exc_info=True)

    def _start(self, run: StreamRun) -> None:
        if run.started:
            return
        try:
            if run.execution is not None:
                run.session_id = str(run.execution.sparkSessionForStream().sessionUUID())
                self._by_session[run.session_id] = run
                run.capture = capture_stream(run.execution, self._relations)
                ctx = visit_context(run.capture, self._context, self._remove_path)
                visited, run.inputs, run.outputs = plan_datasets(
                    ctx, self._model, self._catalog_impl
                )
                if self._ignored_sinks:
                    ignored = self._ignored_sinks
                    run.outputs = [o for o in run.outputs if o["namespace"] not in ignored]
                run.own_inputs = {(d["namespace"], d["name"]) for d in run.inputs}
                run.sink_outputs = {(d["namespace"], d["name"]) for d in run.outputs}
                columns = [
                    str(f.get("name"))
                    for f in (run.capture.sink.get("query_schema") or {}).get("fields", [])
                ]
                run.micro_batch = MicroBatch(
                    tuple(columns), column_sources(visited, ctx.tree.children[0], columns)
                )
                if self.models is not None and self.models.columns:
                    scored = {"inputs": run.inputs, "outputs": run.outputs}
                    analyzed = str(run.execution.analyzedPlan().toJSON())
                    self.models.add_models([scored], analyzed, whole_plan=True)
                    run.inputs, run.outputs = scored["inputs"], scored["outputs"]
                node = run.name or "streaming_query"
                run.job = {
                    "namespace": self._model.namespace,
                    "name": self._model.action_job_name(node, visited.job_suffix),
                    "facets": self._model.job_facets("JOB", None, "STREAMING"),
                }
        except Exception as exc:
            self._log_once("capturing a streaming query", exc)
        finally:
            # The query's plan stays in the JVM as long as it runs; no need to hold it.
            run.execution = None
            run.started = True
        self._emit(stream_event(run, self._model, "START", run.start_time))

    def _end(self, run: StreamRun, when: float, error: tuple[str, str | None] | None) -> None:
        if run.ended:
            return
        self._start(run)
        run.ended = True
        self._ending.pop(run.run_id, None)
        if run.session_id is not None:
            self._by_session.pop(run.session_id, None)
        event_type = "FAIL" if error is not None else "COMPLETE"
        self._note_sink_version(run)
        self._emit(stream_event(run, self._model, event_type, when, error))

    def _note_sink_version(self, run: StreamRun) -> None:
        """Give the sink's table its version after the run's latest micro-batch commit
        (a Delta or Iceberg table's), read once per RUNNING and at the end, not per micro-batch;
        before the run's first micro-batch the table holds no commit of this run."""
        reader = run.capture.sink_version if run.capture is not None else None
        if reader is None or run.batches == 0 or not self._model.enabled("version"):
            return
        try:
            version = reader()
        except Exception as exc:
            self._log_once("reading a streaming sink's table version", exc)
            return
        run.outputs = [
            with_version(d, version) if (d["namespace"], d["name"]) in run.sink_outputs else d
            for d in run.outputs
        ]

    def close(self, error: BaseException | None = None) -> None:
        """End every run still open, as the application ends: COMPLETE, or FAIL with
        the error the application ends on (after the capture worker has stopped)."""
        failure = (repr(error), None) if error is not None else None
        for step in list(self._ending.values()):
            try:
                self._end(step.run, step.when, step.error)
            except Exception as exc:
                self._log_once("ending a streaming query's run", exc)
        for run in self.listener.take_open_runs():
            try:
                self._end(run, time.time(), failure)
            except Exception as exc:
                self._log_once("ending a streaming query's run", exc)
