"""Tables the session catalog really drops, as its own event bus tells.

``DROP TABLE IF EXISTS t`` of a table that does not exist succeeds and changes
nothing, yet the plan Spark reports afterwards is the same as for a real drop,
and the catalog, read afterwards, lacks the table either way. The session
catalog (``ExternalCatalogWithListener``) posts a ``DropTableEvent`` only when
it drops a table, on the thread running the statement — so before Spark
reports the action to the agent's listener. :class:`DroppedTables` notes those
events; the listener reports an ``IF EXISTS`` drop only if one was noted.

The callback runs on the job's thread once per catalog event (DDL, table
statistics updates): one py4j round trip back into the JVM (the event's text)
and a dictionary update.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from typing import Any

__all__ = ["DroppedTables"]

logger = logging.getLogger(__name__)

#: ``DropTableEvent(<database>,<table>)``, the event's case-class text.
_DROP_EVENT = re.compile(r"DropTableEvent\(([^,]*),(.*)\)")

#: Drops noted and never asked about (another session's) kept at most.
_KEPT = 1000


class DroppedTables:
    """Implements ``org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener``."""

    class Java:
        implements = ["org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener"]

    def __init__(self) -> None:
        self._dropped: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._catalog: Any = None

    # py4j calls this by name on the job's thread; it must never raise.
    def onEvent(self, event: Any) -> None:  # noqa: N802
        try:
            match = _DROP_EVENT.fullmatch(str(event.toString()))
            if match is None:
                return
            key = (match.group(1).lower(), match.group(2).lower())
            with self._lock:
                if len(self._dropped) >= _KEPT:
                    self._dropped.clear()
                self._dropped[key] += 1
        except Exception:
            logger.debug("catalog event not read", exc_info=True)

    def take(self, database: str | None, table: str) -> bool:
        """Whether a drop of ``database.table`` was noted (and forget it); a missing
        ``database`` matches a drop of ``table`` in any database."""
        table = table.lower()
        with self._lock:
            for key in list(self._dropped):
                if key[1] == table and (database is None or key[0] == database.lower()):
                    self._dropped[key] -= 1
                    if self._dropped[key] <= 0:
                        del self._dropped[key]
                    return True
        return False

    def register(self, jsession: Any) -> None:
        """Listen to the session catalog of ``jsession``."""
        catalog = jsession.sharedState().externalCatalog()
        catalog.addListener(self)
        self._catalog = catalog

    def unregister(self) -> None:
        """Stop listening (the Python side of the callback goes away at close)."""
        if self._catalog is not None:
            try:
                self._catalog.removeListener(self)
            except Exception:
                logger.debug("catalog listener already gone", exc_info=True)
            self._catalog = None
