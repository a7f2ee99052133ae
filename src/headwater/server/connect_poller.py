"""``serve --connect-url``: the Kafka Connect watcher inside the server.

The same :class:`~headwater.connect.ConnectWatcher` as ``headwater connect
watch``, on a daemon thread started and stopped with the app; its events go
through the server's own write path (:func:`~headwater.server.ingest.ingest_batch`:
the one parse, the store's group commit, the quarantine for refused events)
instead of a transport. An unavailable store raises, so the events stay
pending in the state file and go first at the next poll.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from headwater.config import Settings
from headwater.server.ingest import ingest_batch

if TYPE_CHECKING:
    from headwater.connect import ConnectWatcher
    from headwater.store import Store

__all__ = ["ConnectPoller"]

logger = logging.getLogger(__name__)


class ConnectPoller:
    """Polls ``settings.connect_url`` every ``settings.connect_interval`` seconds."""

    def __init__(self, settings: Settings, store: Store) -> None:
        from headwater.connect import ConnectClient, ConnectWatcher

        assert settings.connect_url
        self.settings = settings
        self.store = store
        self.watcher: ConnectWatcher = ConnectWatcher(
            ConnectClient(settings.connect_url),
            self._ingest,
            namespace=settings.connect_namespace,
            bootstrap_servers=settings.connect_bootstrap_servers,
            state_path=settings.connect_state_path,
            heartbeat=settings.connect_heartbeat,
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _ingest(self, events: list[dict[str, Any]]) -> None:
        outcome = ingest_batch(self.store, events)
        for failed in outcome.failed:
            logger.warning("Kafka Connect event %d refused: %s", failed.index, failed.reason)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.watcher.run,
            args=(self.settings.connect_interval, self._stop),
            name="headwater-connect-poller",
            daemon=True,
        )
        self._thread.start()
        logger.info(
            "polling Kafka Connect at %s every %gs",
            self.settings.connect_url,
            self.settings.connect_interval,
        )

    def close(self, timeout: float = 15.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.watcher.client.close()
