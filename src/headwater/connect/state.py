"""The watcher's memory: which incarnation of each connector it is on, what it
last reported, and the events it is about to send.

Kept in a JSON file written atomically (a temporary file renamed over it),
so a watcher restarted with the same file continues the same runs and sends
nothing it already sent: each poll first writes the events it is about to
send as ``pending`` with the new per-connector record, then sends them, then
clears ``pending``. A watcher stopped between the two writes sends the
pending events again, byte for byte, on restart; the server stores an event
it already has once (its content hash), so nothing is stored twice.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from headwater.errors import ConfigError

__all__ = ["ConnectorRecord", "WatchState"]

_VERSION = 1


@dataclass
class ConnectorRecord:
    """One connector's current incarnation and what was last reported for it."""

    incarnation: int
    run_id: str
    signature: str
    ended: bool = False
    #: ``source`` or ``sink``: the COMPLETE of a deleted connector still says which.
    type: str = "unknown"
    #: When the last event of this run was sent (ISO 8601), for the heartbeat.
    last_sent: str | None = None


@dataclass
class WatchState:
    connectors: dict[str, ConnectorRecord] = field(default_factory=dict)
    pending: list[dict[str, Any]] = field(default_factory=list)
    path: Path | None = None

    @classmethod
    def load(cls, path: Path | None) -> WatchState:
        """The state in ``path`` (empty when it does not exist; in memory only when None)."""
        if path is None or not path.exists():
            return cls(path=path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            connectors = {
                name: ConnectorRecord(**rec) for name, rec in raw.get("connectors", {}).items()
            }
            pending = list(raw.get("pending", []))
        except (ValueError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"--state {path} is not a headwater connect state file: {exc}"
            ) from exc
        return cls(connectors, pending, path)

    def save(self) -> None:
        if self.path is None:
            return
        body = {
            "version": _VERSION,
            "connectors": {n: asdict(r) for n, r in sorted(self.connectors.items())},
            "pending": self.pending,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".connect-state.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(body, out, indent=1, sort_keys=True)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
