"""``serve --retention 90d``: retention (:mod:`headwater.store.retention`) in the background.

One thread per server process runs it a minute after start and then every
hour. Each of its transactions deletes at most a batch of runs, so requests
take turns with it; with several processes or replicas on one store each may
run it, and the later finds nothing left to delete.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import TYPE_CHECKING

from headwater.errors import HeadwaterError

if TYPE_CHECKING:
    from headwater.store import Store

__all__ = ["FIRST_DELAY_SECONDS", "INTERVAL_SECONDS", "RetentionJob"]

logger = logging.getLogger(__name__)

#: Seconds after start before the first run (start-up stays quick).
FIRST_DELAY_SECONDS = 60.0
#: Seconds between runs.
INTERVAL_SECONDS = 3600.0


class RetentionJob:
    """Runs retention on ``store`` now and then until :meth:`close`."""

    def __init__(
        self,
        store: Store,
        keep_seconds: float,
        *,
        first_delay: float = FIRST_DELAY_SECONDS,
        interval: float = INTERVAL_SECONDS,
        settle: float | None = None,
    ) -> None:
        self.store = store
        self.keep = timedelta(seconds=keep_seconds)
        self.first_delay = first_delay
        self.interval = interval
        self.settle = settle
        self.runs = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="headwater-retention", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        from headwater.store.retention import FLOOR_REFRESH_SECONDS, prune

        wait = self.first_delay
        while not self._stop.wait(wait):
            wait = self.interval
            try:
                settle = 2 * FLOOR_REFRESH_SECONDS if self.settle is None else self.settle
                prune(self.store.engine, self.keep, settle=settle)
                self.store.forget_floor()
            except HeadwaterError as exc:
                logger.warning("retention failed (tried again in %.0f s): %s", wait, exc)
            except Exception:  # the server goes on; the next run tries again
                logger.exception("retention failed")
            self.runs += 1
