"""File transport: append each event as one JSON line (JSONL).

The file is plain OpenLineage JSONL, so ``headwater ingest`` (or any tool that
reads one event per line) can load it later.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headwater.errors import ConfigError
from headwater.transport.base import DeliveryError, Event, TransportBase

__all__ = ["FileConfig", "FileTransport"]


@dataclass(frozen=True)
class FileConfig:
    """``location`` (the OpenLineage jar's key) or ``log_file_path`` (the Python client's)."""

    location: str

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> FileConfig:
        location = config.get("location") or config.get("log_file_path")
        if not location:
            raise ConfigError("transport.location is required for the file transport")
        return cls(location=os.path.expanduser(str(location)))


class FileTransport(TransportBase):
    """Append events to a JSONL file; safe to share between threads."""

    def __init__(self, config: FileConfig) -> None:
        self.config = config
        self._lock = threading.Lock()

    def emit(self, event: Event) -> None:
        line = json.dumps(event, separators=(",", ":")) + "\n"
        try:
            with self._lock:
                directory = os.path.dirname(self.config.location)
                if directory:
                    os.makedirs(directory, exist_ok=True)
                with open(self.config.location, "a", encoding="utf-8") as handle:
                    handle.write(line)
        except OSError as exc:
            raise DeliveryError(f"cannot append to {self.config.location}: {exc}",
                                retriable=True) from exc
