"""A local JVM service's life: start it, wait until it answers, read its log, stop it.

The broker and the Connect worker are each a JVM whose output goes to a log file in
a temporary directory; they differ only in the command and in how they show they
are ready, which :func:`start_and_wait` takes as a ``probe``.
"""

from __future__ import annotations

import ctypes
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Self

from headwater.local_kafka.maven import LocalKafkaError, tail

__all__ = ["JvmService", "Probe", "die_with_parent", "log_tail", "start_and_wait", "stop_jvm"]

#: Given what was last wrong, None when the service is ready, else what is wrong now
#: (named in the error when time runs out).
Probe = Callable[[str], str | None]

# Between readiness checks: short, as a test or the demo waits on the start.
_POLL_SECONDS = 0.25


@dataclass
class JvmService:
    """A JVM run from its own temporary directory ``root``, its output going to
    ``<log_name>.log`` there; stopping it removes the directory."""

    #: The log file's name without ``.log``; also how a missing log is reported.
    log_name: ClassVar[str] = "jvm"

    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False, kw_only=True)

    @property
    def log_file(self) -> Path:
        return self.root / f"{self.log_name}.log"

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_file, lines, f"(no {self.log_name} log)")

    def stop(self, timeout: float = 15) -> None:
        """Terminate the JVM (kill it if it lingers) and remove its files."""
        stop_jvm(self.process, self.root, timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_and_wait(
    service: JvmService,
    name: str,
    address: str,
    command: Sequence[str],
    probe: Probe,
    not_yet: str,
    timeout: float,
) -> None:
    """Start ``command`` as ``service.process`` (output to ``service.log_file``) and
    poll ``probe`` until it finds the service ready.

    The process dying, or ``timeout`` seconds passing, raises
    :class:`~headwater.local_kafka.maven.LocalKafkaError` naming ``name`` (at
    ``address``) with the log's tail; ``not_yet`` is the problem reported when the
    probe never said what was wrong. The caller stops the service on an error.
    """
    with service.log_file.open("wb") as log:
        service.process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
    deadline = time.monotonic() + timeout
    problem = not_yet
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise LocalKafkaError(
                f"{name} exited with code {service.process.returncode}:\n{service.log_tail()}"
            )
        found = probe(problem)
        if found is None:
            return
        problem = found
        time.sleep(_POLL_SECONDS)
    raise LocalKafkaError(
        f"{name} on {address} was not ready in time ({problem}); log tail:\n{service.log_tail()}"
    )


def log_tail(log_file: Path, lines: int, missing: str) -> str:
    """The last ``lines`` of a process's log, or ``missing`` when it cannot be read."""
    try:
        return tail(log_file.read_text(errors="replace"), lines)
    except OSError:
        return missing


def stop_jvm(process: subprocess.Popen[bytes] | None, root: Path, timeout: float) -> None:
    """Terminate ``process`` (kill it if it lingers) and remove its directory ``root``."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    shutil.rmtree(root, ignore_errors=True)


def die_with_parent() -> Callable[[], None] | None:
    """Linux: a pre-exec hook that has the JVM terminated when its starter dies.

    A killed demo or test run then leaves no JVM behind. The signal follows the
    starting thread, so processes start from a thread that outlives them. libc
    is looked up here, before the fork, as loading libraries in the child can hang.
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM)  # 1 is PR_SET_PDEATHSIG
