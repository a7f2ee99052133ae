"""Poll a Kafka Connect cluster and turn what changed into OpenLineage events.

One job per connector, one run per incarnation (:func:`~headwater.connect.events.run_id_for`:
the job namespace, the connector's name and the incarnation's number, which
the state file keeps). Per poll and connector:

- first seen (or seen again after its run ended): a new incarnation, START;
  when it is already failed, START then FAIL;
- failed (the connector or any task ``FAILED``): FAIL with the trace; the
  run has ended, and the next incarnation starts when the connector runs again
  (a task restarted, or the connector deleted and created anew);
- anything else that changed (state, ``PAUSED``/``STOPPED`` and back, tasks,
  configuration, datasets): RUNNING, with the ``kafkaConnect`` facet saying
  which state — a paused connector is not complete;
- gone from the cluster: COMPLETE;
- with ``heartbeat`` set, a running (or paused) connector whose run has sent
  nothing for that long: RUNNING again, so a reader can tell a live run from
  a silent producer.

Nothing else is sent for a connector that did not change, so a restarted watcher
with the same state file sends nothing again (see :mod:`headwater.connect.state`).
Events go to ``emit`` (a transport on the command line, the store's ingest in
``serve``), which raises when they were not delivered: they stay pending and
go first on the next poll.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from headwater.connect.connectors import lineage_of
from headwater.connect.connectors.base import Connector, Lineage, NamingContext
from headwater.connect.events import connector_event, run_id_for
from headwater.connect.redact import redact_config
from headwater.connect.rest import ClusterInfo, ConnectClient, ConnectorSnapshot, ConnectUnavailable
from headwater.connect.state import ConnectorRecord, WatchState

__all__ = ["ConnectWatcher", "Emit", "list_broker_topics"]

logger = logging.getLogger(__name__)

#: Delivers a list of events or raises.
Emit = Callable[[list[dict[str, Any]]], None]


def list_broker_topics(bootstrap: str) -> list[str]:
    """The topic names of a Kafka cluster (confluent-kafka's AdminClient, imported lazily)."""
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return sorted(name for name in metadata.topics if not name.startswith("__"))


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _failed(snapshot: ConnectorSnapshot) -> bool:
    return snapshot.state == "FAILED" or any(t.state == "FAILED" for t in snapshot.tasks)


def _signature(snapshot: ConnectorSnapshot, lineage: Lineage) -> str:
    seen = {
        "state": snapshot.state,
        "tasks": sorted((t.id, t.state) for t in snapshot.tasks),
        "config": redact_config(snapshot.config),
        "inputs": sorted((d.namespace, d.name) for d in lineage.inputs),
        "outputs": sorted((d.namespace, d.name) for d in lineage.outputs),
    }
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()[:20]


_DELETED = "deleted"


class ConnectWatcher:
    """Turns polls of one Connect cluster into events; :meth:`poll` once, or :meth:`run`."""

    def __init__(
        self,
        client: ConnectClient,
        emit: Emit,
        *,
        namespace: str | None = None,
        bootstrap_servers: str | None = None,
        state_path: Path | None = None,
        list_topics: Callable[[str], Sequence[str]] | None = list_broker_topics,
        heartbeat: float | None = None,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.client = client
        self.emit = emit
        self.bootstrap_servers = bootstrap_servers
        self.list_topics = list_topics
        self.state = WatchState.load(state_path)
        self._namespace = namespace
        self._cluster: ClusterInfo | None = None
        self.heartbeat = heartbeat
        self._clock = clock
        self._poll_time = clock()

    @property
    def namespace(self) -> str:
        """The job namespace: as given, else ``kafka-connect://host:port`` of the REST URL."""
        if self._namespace:
            return self._namespace
        return f"kafka-connect://{ClusterInfo(self.client.url).authority}"

    def poll(self) -> list[dict[str, Any]]:
        """Read the cluster once; send and return the events of what changed.

        Raises :class:`ConnectUnavailable` when the REST API cannot be read and
        whatever ``emit`` raises when the events could not be delivered (they
        stay pending).
        """
        self._flush_pending()
        self._poll_time = self._clock()
        if self._cluster is None or self._cluster.version is None:
            self._cluster = self.client.cluster()
        snapshots = self.client.connectors()
        ctx = NamingContext(self.bootstrap_servers, self.list_topics)
        events: list[dict[str, Any]] = []
        for name in sorted(snapshots):
            events += self._changes(snapshots[name], ctx)
        for name, record in sorted(self.state.connectors.items()):
            if name not in snapshots and record.signature != _DELETED:
                events += self._deleted(name, record)
        if events or self.state.pending:
            self.state.pending = events
            self.state.save()
            self._flush_pending()
        return events

    def run(self, interval: float, stop: threading.Event) -> None:
        """Poll every ``interval`` seconds until ``stop`` is set; failures are logged."""
        while not stop.is_set():
            try:
                sent = self.poll()
                if sent:
                    logger.info("sent %d event(s)", len(sent))
            except ConnectUnavailable as exc:
                logger.warning("Kafka Connect not readable: %s", exc)
            except Exception:  # noqa: BLE001 - a failed delivery is retried at the next poll
                logger.exception("could not send Kafka Connect events; they stay pending")
            stop.wait(interval)

    def _flush_pending(self) -> None:
        if self.state.pending:
            self.emit(list(self.state.pending))
            self.state.pending = []
            self.state.save()

    def _event(
        self, event_type: str, snapshot: ConnectorSnapshot, lineage: Lineage, run_id: str
    ) -> dict[str, Any]:
        return connector_event(
            event_type,
            snapshot=snapshot,
            lineage=lineage,
            namespace=self.namespace,
            run_id=run_id,
            event_time=_iso(self._poll_time),
            connect_version=self._cluster.version if self._cluster else None,
        )

    def _changes(self, snapshot: ConnectorSnapshot, ctx: NamingContext) -> list[dict[str, Any]]:
        events = self._changed(snapshot, ctx)
        record = self.state.connectors.get(snapshot.name)
        if events and record is not None:
            record.last_sent = _iso(self._poll_time)
        return events

    def _due(self, record: ConnectorRecord) -> bool:
        """Whether a running connector's run has been silent for ``heartbeat`` seconds."""
        if not self.heartbeat or not record.last_sent:
            return False
        silent = self._poll_time - datetime.fromisoformat(record.last_sent)
        return silent.total_seconds() >= self.heartbeat

    def _changed(self, snapshot: ConnectorSnapshot, ctx: NamingContext) -> list[dict[str, Any]]:
        connector = Connector(snapshot.name, snapshot.type, snapshot.config, snapshot.active_topics)
        lineage = lineage_of(connector, ctx)
        signature = _signature(snapshot, lineage)
        failed = _failed(snapshot)
        record = self.state.connectors.get(snapshot.name)
        if record is not None and record.ended and failed and record.signature != _DELETED:
            record.signature = signature  # still the failure already reported
            return []
        if record is None or record.ended:
            incarnation = 0 if record is None else record.incarnation + 1
            record = ConnectorRecord(
                incarnation,
                run_id_for(self.namespace, snapshot.name, incarnation),
                signature,
                type=snapshot.type,
            )
            self.state.connectors[snapshot.name] = record
            events = [self._event("START", snapshot, lineage, record.run_id)]
            if failed:
                events.append(self._event("FAIL", snapshot, lineage, record.run_id))
                record.ended = True
            return events
        if failed:
            record.signature, record.ended = signature, True
            return [self._event("FAIL", snapshot, lineage, record.run_id)]
        if signature != record.signature or self._due(record):
            record.signature = signature
            return [self._event("RUNNING", snapshot, lineage, record.run_id)]
        return []

    def _deleted(self, name: str, record: ConnectorRecord) -> list[dict[str, Any]]:
        was_running = not record.ended
        record.signature, record.ended = _DELETED, True
        if not was_running:
            return []
        # The connector's last configuration is gone with it: the COMPLETE names the
        # job and run only; the datasets stay on the run from its earlier events.
        gone = ConnectorSnapshot(name=name, type=record.type, config={}, state="DELETED")
        return [self._event("COMPLETE", gone, Lineage("deleted"), record.run_id)]
