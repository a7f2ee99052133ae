"""Kafka Connect lineage without a plugin: a watcher of the Connect REST API.

:class:`~headwater.connect.watcher.ConnectWatcher` polls a Connect cluster
(:mod:`.rest`), names each connector's datasets by its family
(:mod:`.connectors`), redacts secrets (:mod:`.redact`), builds OpenLineage
events (:mod:`.events`) and keeps its place in a state file (:mod:`.state`).
It hands events to a callable, so ``headwater connect watch`` sends them
through a transport and ``headwater serve --connect-url`` through the
server's own ingest path; this package imports neither.
"""

from __future__ import annotations

from headwater.connect.rest import ConnectClient, ConnectUnavailable
from headwater.connect.watcher import ConnectWatcher, list_broker_topics

__all__ = ["ConnectClient", "ConnectUnavailable", "ConnectWatcher", "list_broker_topics"]
