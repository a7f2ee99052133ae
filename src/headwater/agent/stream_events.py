"""One Structured Streaming query run as OpenLineage events: its datasets and its progress.

A query's inputs and outputs are read once, when it starts, from what
``StreamExecution`` holds from then on: ``analyzedPlan()`` (the query as
written: ``StreamingRelation`` leaves for stream reads by path,
``StreamingRelationV2`` for v2 tables such as Kafka topics) and ``sink()``. The
plan goes through :func:`~headwater.agent.capture.capture_plan` like a batch
action's, and the source families name its leaves; the sink is named by its
family's ``stream_sinks`` look-up as a batch save there would be (a
:data:`~headwater.agent.sources.registry.STREAM_WRITE` root above the plan), so
a topic or a directory is one dataset whether a batch job or a stream writes it.

The query's write options (a Kafka sink's ``topic`` and servers) are a private
field of ``MicroBatchExecution`` (``extraOptions``), read by reflection; should
it be missing, the capture logs it and a sink that needs them names no dataset.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from headwater.agent.capture import PlanCapture, RelationCache, capture_plan
from headwater.agent.facets import INPUT_FACET_SCHEMA
from headwater.agent.plan import PlanNode
from headwater.agent.run_model import RUN_FACET_SCHEMA, RunModel, iso_time
from headwater.agent.sources import VisitContext
from headwater.agent.sources.common import MicroBatch
from headwater.agent.sources.registry import STREAM_WRITE, stream_sink_facts, stream_sink_version
from headwater.events import facets as F
from headwater.events.model import PRODUCER, SCHEMA_URL

__all__ = [
    "KAFKA_OFFSETS",
    "StreamCapture",
    "StreamRun",
    "capture_stream",
    "merge_datasets",
    "progress_summary",
    "stream_event",
    "with_version",
]

logger = logging.getLogger(__name__)

#: The input facet of the Kafka offsets a streaming run read.
KAFKA_OFFSETS = "kafkaOffsets"

#: Option keys whose values are secrets (a Kafka JAAS config, a password): never kept.
_SECRET = (
    "password", "secret", "token", "credential", "jaas", "privatekey", "private.key", "accesskey"
)

#: The path a synthetic root's facts are kept under: no JVM node has it.
_ROOT_PATH = (("stream", "write"),)


@dataclass
class StreamCapture:
    """What one streaming query reads and writes, as plain data."""

    plan: PlanCapture
    #: The sink's facts, as a save's (``options``, ``data_source``, ``query_schema``).
    sink: dict[str, Any]
    trigger: str | None = None
    #: Reads the version the sink's table is at after its latest commit (py4j), for a
    #: sink into a versioned table format (Delta, Iceberg); ``None`` for any other sink.
    sink_version: Callable[[], str] | None = None


@dataclass
class StreamRun:
    """One run of a streaming query: its ids, what it read and wrote, its progress so far.

    The listener thread fills the progress fields; the capture worker builds the
    events. ``run_id`` is the same for every event of the run.
    """

    query_id: str
    spark_run_id: str
    run_id: str
    name: str | None
    start_time: float
    #: The query's ``StreamExecution`` (a py4j handle), until the run is captured.
    execution: Any = None
    capture: StreamCapture | None = None
    started: bool = False
    ended: bool = False
    #: Job name, inputs and outputs, fixed by the START for every later event.
    job: dict[str, Any] | None = None
    inputs: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    first_batch_id: int | None = None
    batches: int = 0
    input_rows: int = 0
    last_progress: dict[str, Any] | None = None
    #: Monotonic time of the last START/RUNNING handed to the worker.
    last_sent: float = 0.0
    #: The UUID of the session the query's micro-batches run in.
    session_id: str | None = None
    #: The rows its ``foreachBatch`` function gets, for the writes made there.
    micro_batch: MicroBatch | None = None
    #: ``(namespace, name)`` of the datasets the query itself reads.
    own_inputs: set[tuple[str, str]] = field(default_factory=set)
    #: ``(namespace, name)`` of the datasets its sink writes (not its ``foreachBatch``'s).
    sink_outputs: set[tuple[str, str]] = field(default_factory=set)
    #: Kafka offsets read, topic -> partition -> [from, until): since the run
    #: started, and since the last RUNNING was handed over.
    #: A partition's first micro-batch that reported no start (it began at the
    #: query's starting offsets) leaves ``from`` as ``None``.
    run_offsets: dict[str, dict[str, list[int | None]]] = field(default_factory=dict)
    interval_offsets: dict[str, dict[str, list[int | None]]] = field(default_factory=dict)
    def note_progress(self, progress: dict[str, Any]) -> None:
        """Count one micro-batch's progress (called on Spark's listener thread)."""
        batch = progress.get("batchId")
        if isinstance(batch, int) and self.first_batch_id is None:
            self.first_batch_id = batch
        self.batches += 1
        rows = progress.get("numInputRows")
        if isinstance(rows, int) and rows > 0:
            self.input_rows += rows
        self.last_progress = progress
        for source in progress.get("sources") or []:
            if isinstance(source, dict):
                for topic, partition, start, end in _offset_ranges(source):
                    for held in (self.run_offsets, self.interval_offsets):
                        _widen(held, topic, partition, start, end)

    def take_interval_offsets(self) -> dict[str, dict[str, list[int | None]]]:
        """The offsets read since the last call (on Spark's listener thread)."""
        taken, self.interval_offsets = self.interval_offsets, {}
        return taken


def _offset_ranges(source: dict[str, Any]) -> list[tuple[str, str, int | None, int]]:
    """``(topic, partition, from, until)`` of one micro-batch's Kafka source: Spark
    reports its offsets as ``{topic: {partition: offset}}`` objects, and no start for
    a query's first micro-batch (``from`` is then ``None``)."""
    start, end = source.get("startOffset"), source.get("endOffset")
    if not isinstance(end, dict):
        return []
    start = start if isinstance(start, dict) else {}
    ranges: list[tuple[str, str, int | None, int]] = []
    for topic, partitions in end.items():
        if not isinstance(partitions, dict):
            return []  # not a Kafka source's offsets
        begun = start.get(topic) if isinstance(start.get(topic), dict) else {}
        for partition, until in partitions.items():
            since = begun.get(partition)
            if isinstance(until, int):
                ranges.append((str(topic), str(partition), since if isinstance(since, int) else None, until))
    return ranges


def _widen(
    held: dict[str, dict[str, list[int | None]]], topic: str, partition: str, start: int | None, end: int
) -> None:
    span = held.setdefault(topic, {}).get(partition)
    if span is None:
        held[topic][partition] = [start, end]
        return
    # An unknown start is the query's starting offsets: before every known one.
    span[0] = None if span[0] is None or start is None else min(span[0], start)
    span[1] = max(span[1] if span[1] is not None else end, end)


def _offsets_facet(
    dataset: dict[str, Any], offsets: dict[str, dict[str, list[int | None]]]
) -> dict[str, Any] | None:
    """The ``kafkaOffsets`` input facet of a topic input (a pattern input covers
    the topics it matches): each partition's ``[fromOffset, untilOffset)``, with no
    ``fromOffset`` where the range began at the query's starting offsets."""
    if not str(dataset.get("namespace", "")).startswith("kafka://"):
        return None
    name = str(dataset.get("name"))
    rows = []
    for topic in sorted(offsets):
        if topic != name and not _matches(name, topic):
            continue
        for partition in sorted(offsets[topic], key=lambda p: (len(p), p)):
            since, until = offsets[topic][partition]
            row: dict[str, Any] = {"topic": topic, "partition": int(partition)}
            if since is not None:
                row["fromOffset"] = since
            rows.append({**row, "untilOffset": until})
    if not rows:
        return None
    return {"_producer": PRODUCER, "_schemaURL": INPUT_FACET_SCHEMA, "partitions": rows}


def _matches(pattern: str, topic: str) -> bool:
    try:
        return re.fullmatch(pattern, topic) is not None
    except re.error:
        return False


def _private_field(obj: Any, name: str) -> Any:
    """The value of ``obj``'s field ``name``, declared by its class or a superclass
    (``AsyncProgressTrackingMicroBatchExecution`` inherits ``MicroBatchExecution``'s)."""
    cls = obj.getClass()
    while cls is not None:
        try:
            found = cls.getDeclaredField(name)
        except Exception:
            cls = cls.getSuperclass()
            continue
        found.setAccessible(True)
        return found.get(obj)
    raise LookupError(f"{obj.getClass().getName()} has no field {name}")


def _write_options(execution: Any) -> dict[str, str]:
    """The query's write options (``writeStream.option(...)``), secrets left out."""
    options = _private_field(execution, "extraOptions")
    seq = options.keys().toSeq()
    keys = [str(seq.apply(i)) for i in range(seq.size())]
    kept = {}
    for key in keys:
        squashed = key.lower().replace("_", "").replace("-", "")
        if not any(word in squashed for word in _SECRET):
            kept[key] = str(options.apply(key))
    return kept


def capture_stream(execution: Any, relations: RelationCache | None = None) -> StreamCapture:
    """Capture the query a ``StreamExecution`` runs: its analyzed plan with the families'
    JVM facts, and its sink's facts under a :data:`STREAM_WRITE` root."""
    analyzed = execution.analyzedPlan()
    plan = capture_plan(analyzed, relations=relations)
    options: dict[str, str] = {}
    try:
        options = _write_options(execution)
    except Exception:
        logger.debug("no write options on %s", execution, exc_info=True)
    jsink = execution.sink()
    sink = stream_sink_facts(jsink, options)
    sink_version = None
    try:
        sink_version = stream_sink_version(jsink)
    except Exception:
        logger.debug("no table version reader for %s", jsink, exc_info=True)
    try:
        # A memory sink's table is named by the query (its queryName).
        name = execution.name()
        if name:
            sink["query_name"] = str(name)
    except Exception:
        logger.debug("no query name", exc_info=True)
    try:
        sink["query_schema"] = json.loads(str(analyzed.schema().json()))
    except Exception:
        logger.debug("no query schema", exc_info=True)
    trigger = None
    try:
        trigger = str(execution.trigger().toString())
    except Exception:
        logger.debug("no trigger", exc_info=True)
    return StreamCapture(plan, sink, trigger, sink_version)


def visit_context(
    capture: StreamCapture, session: dict[str, Any], remove_path: Any
) -> VisitContext:
    """The visit context of a captured query: its plan below a :data:`STREAM_WRITE` root."""
    root = PlanNode(STREAM_WRITE, {}, children=[capture.plan.tree], path=_ROOT_PATH)
    return VisitContext(
        tree=root,
        node_facts={**capture.plan.facts, root.key: capture.sink},
        warehouse_uri=session.get("warehouse_uri"),
        table_namespace=session.get("table_namespace"),
        remove_path=remove_path,
    )


#: Dataset facets of one write's statistics, which a run of many micro-batches
#: reports in its progress facet instead.
_STATISTICS = ("outputStatistics", "inputStatistics", "dataQualityMetrics")
_FACET_KEYS = ("facets", "inputFacets", "outputFacets")


def merge_datasets(held: list[dict[str, Any]], found: list[dict[str, Any]]) -> bool:
    """Merge the datasets one micro-batch's write ``found`` into a run's ``held`` (in
    place): a dataset already held takes the newer facets, a new one is added.
    Whether any was new."""
    index = {(d["namespace"], d["name"]): i for i, d in enumerate(held)}
    added = False
    for dataset in found:
        kept = {
            key: {k: v for k, v in value.items() if k not in _STATISTICS}
            if key in _FACET_KEYS and isinstance(value, dict)
            else value
            for key, value in dataset.items()
        }
        key = (dataset["namespace"], dataset["name"])
        if key in index:
            old = held[index[key]]
            merged = {**old, **kept}
            for facets in _FACET_KEYS:
                if facets in old or facets in kept:
                    merged[facets] = {**(old.get(facets) or {}), **(kept.get(facets) or {})}
            held[index[key]] = merged
        else:
            index[key] = len(held)
            held.append(kept)
            added = True
    return added


def with_version(dataset: dict[str, Any], version: str) -> dict[str, Any]:
    """A copy of ``dataset`` with the ``version`` facet ``version`` (events already
    handed to the emitter keep the dataset they were given)."""
    facets = {**(dataset.get("facets") or {}), "version": F.version_facet(version)}
    return {**dataset, "facets": facets}


def _source(source: dict[str, Any]) -> dict[str, Any]:
    return {
        key: source.get(key)
        for key in ("description", "startOffset", "endOffset", "latestOffset", "numInputRows")
        if source.get(key) is not None
    }


def progress_summary(run: StreamRun) -> dict[str, Any] | None:
    """The run's progress so far: the last micro-batch's figures and offsets, and counts
    since the run started; ``None`` before its first micro-batch."""
    last = run.last_progress
    if last is None:
        return None
    summary: dict[str, Any] = {
        "batchId": last.get("batchId"),
        "firstBatchId": run.first_batch_id,
        "batches": run.batches,
        "numInputRows": run.input_rows,
        "lastBatchInputRows": last.get("numInputRows"),
        "inputRowsPerSecond": last.get("inputRowsPerSecond"),
        "processedRowsPerSecond": last.get("processedRowsPerSecond"),
        "timestamp": last.get("timestamp"),
        "sources": [_source(s) for s in last.get("sources") or [] if isinstance(s, dict)],
    }
    sink = last.get("sink")
    if isinstance(sink, dict):
        summary["sink"] = {k: sink[k] for k in ("description", "numOutputRows") if k in sink}
    return {k: v for k, v in summary.items() if v is not None}


def _streaming_facet(run: StreamRun, with_progress: bool) -> dict[str, Any]:
    facet: dict[str, Any] = {
        "_producer": PRODUCER,
        "_schemaURL": RUN_FACET_SCHEMA,
        "queryId": run.query_id,
        "runId": run.spark_run_id,
    }
    if run.name:
        facet["name"] = run.name
    if run.capture is not None and run.capture.trigger:
        facet["trigger"] = run.capture.trigger
    progress = progress_summary(run) if with_progress else None
    if progress is not None:
        facet["progress"] = progress
    return facet


def stream_event(
    run: StreamRun,
    model: RunModel,
    event_type: str,
    when: float,
    error: tuple[str, str | None] | None = None,
    offsets: dict[str, dict[str, list[int | None]]] | None = None,
) -> dict[str, Any]:
    """One event of ``run``: START, RUNNING, COMPLETE or FAIL. A topic input carries
    the offsets read: ``offsets`` (a RUNNING's interval) or, on COMPLETE and FAIL,
    the whole run's."""
    facets = model.action_run_facets()
    if event_type == "START":
        facets.update(model.start_run_facets())
    if model.enabled("spark_streaming"):
        facets["spark_streaming"] = _streaming_facet(run, with_progress=event_type != "START")
    if error is not None and model.enabled("errorMessage"):
        facets["errorMessage"] = F.error_message_facet(error[0], error[1])
    job = run.job or {
        "namespace": model.namespace,
        "name": model.action_job_name(run.name or "streaming_query", None),
        "facets": model.job_facets("JOB", None, "STREAMING"),
    }
    inputs = run.inputs
    read = run.run_offsets if event_type in ("COMPLETE", "FAIL") else offsets
    if read and model.enabled(KAFKA_OFFSETS):
        inputs = []
        for dataset in run.inputs:
            facet = _offsets_facet(dataset, read)
            if facet is not None:
                dataset = {**dataset, "inputFacets": {**dataset.get("inputFacets", {}), KAFKA_OFFSETS: facet}}
            inputs.append(dataset)
    return {
        "eventType": event_type,
        "eventTime": iso_time(when),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run.run_id, "facets": facets},
        "job": job,
        "inputs": inputs,
        "outputs": run.outputs,
    }
