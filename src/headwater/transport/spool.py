"""The spool: events that could not be delivered wait in local JSONL files.

Each process appends to its own ``spool-<pid>-<id>.jsonl`` in the spool directory
(one OpenLineage event per line, so ``headwater ingest <file>`` can post it). At
the next start the emitter *claims* the spool files left behind (renames them to
``*.replaying``), delivers them and deletes each file once all of it got through.
Events a server refused as invalid go to ``rejected-<pid>-<id>.jsonl`` instead:
retrying cannot help them, but they are kept for a human to look at.

Writers and the replayer coordinate with ``flock`` and an inode check, so a
file renamed away while a writer waited for the lock is never written to after
it was read.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Spool"]

logger = logging.getLogger(__name__)

_CLAIMED_SUFFIX = ".replaying"


class Spool:
    """Append-only JSONL spool files under one directory."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(os.path.expanduser(os.fspath(directory)))
        token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.path = self.directory / f"spool-{token}.jsonl"
        self.rejected_path = self.directory / f"rejected-{token}.jsonl"
        self._lock = threading.Lock()

    def rotate(self) -> None:
        """Start a new file for this process, so the current one can be replayed now."""
        with self._lock:
            self.path = self.directory / f"spool-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"

    def append(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Append events to this process's spool file (raises OSError if the disk refuses)."""
        self._append(self.path, events)

    def reject(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Keep events a destination refused as invalid; they are never replayed."""
        self._append(self.rejected_path, events)

    def _append(self, path: Path, events: Sequence[Mapping[str, Any]]) -> None:
        if not events:
            return
        text = "".join(json.dumps(event, separators=(",", ":")) + "\n" for event in events)
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            while True:
                with open(path, "a", encoding="utf-8") as handle:
                    fcntl.flock(handle, fcntl.LOCK_EX)
                    # A replayer may have renamed the file while we waited for the lock;
                    # then this handle points at a claimed file: open the path again.
                    try:
                        same = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
                    except FileNotFoundError:
                        same = False
                    if same:
                        handle.write(text)
                        handle.flush()
                        return

    def pending_files(self) -> list[Path]:
        """Spool files (not ours, not claimed) waiting for delivery, oldest first."""
        if not self.directory.is_dir():
            return []
        files = [path for path in self.directory.glob("spool-*.jsonl") if path != self.path]
        # A file claimed by a process that died mid-replay is pending again.
        files += [
            path
            for path in self.directory.glob(f"spool-*.jsonl.*{_CLAIMED_SUFFIX}")
            if not _alive(path.name.rsplit(".", 2)[-2])
        ]
        return sorted(files, key=_mtime)

    def claim(self) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
        """Yield ``(claimed_path, events)`` for each pending file; the caller deletes it.

        A claimed file is renamed to ``*.replaying`` first, so two processes never
        replay the same file. Lines that are not JSON objects are logged and skipped.
        """
        for path in self.pending_files():
            original = path.name.split(".jsonl", 1)[0] + ".jsonl"
            claimed = path.with_name(original + f".{os.getpid()}{_CLAIMED_SUFFIX}")
            try:
                os.rename(path, claimed)
            except OSError:
                continue  # another process claimed it first
            events: list[dict[str, Any]] = []
            with open(claimed, encoding="utf-8") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)  # wait for a writer mid-append
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        event = json.loads(line)
                    except ValueError:
                        logger.warning("%s line %d is not JSON; skipped", path, number)
                        continue
                    if isinstance(event, dict):
                        events.append(event)
            yield claimed, events


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _alive(pid_text: str) -> bool:
    """Whether process ``pid_text`` exists (unknown or malformed counts as alive: leave it be)."""
    try:
        pid = int(pid_text)
    except ValueError:
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
