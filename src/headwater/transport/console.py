"""Console transport: log each event as JSON at INFO (the OpenLineage listener's default)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from headwater.transport.base import Event, TransportBase

__all__ = ["ConsoleTransport"]

logger = logging.getLogger(__name__)


class ConsoleTransport(TransportBase):
    """Write events to the ``headwater.transport.console`` logger; never fails."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config = dict(config or {})

    def emit(self, event: Event) -> None:
        if logger.isEnabledFor(logging.INFO):
            logger.info("%s", json.dumps(event, separators=(",", ":")))
