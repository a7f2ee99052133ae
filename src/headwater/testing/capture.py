"""Run PySpark code under the agent, with no server, and return its lineage.

Two ways, for two kinds of code:

* :func:`capture_in_process` calls a function with a SparkSession that is
  already running (a test session's): the agent is attached to it for the
  call, its events kept in memory, and detached after, leaving the session as
  it found it. Cheap -- no new JVM -- but the session's static configuration
  (warehouse, catalog, extensions) is the test session's.
* :func:`capture_command` runs a command (``python job.py``, ``spark-submit
  --conf ... job.py``) in a subprocess instrumented as ``headwater instrument``
  does, with the file transport writing into a temporary directory. The job
  builds its own session, so its own static configs hold; it costs a JVM start.

Nothing here imports PySpark: the session comes from the caller, and the
subprocess imports it itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from headwater.errors import HeadwaterError
from headwater.testing.events import lineage_from_events
from headwater.testing.lineage import Lineage

__all__ = [
    "CaptureError",
    "capture_command",
    "capture_in_process",
    "capture_script",
    "read_events",
]

Root = str | os.PathLike[str] | Mapping[str, Any] | None

#: Seconds a finished job's last actions may take to reach the transport at stop.
_FLUSH_SECONDS = 60.0


class CaptureError(HeadwaterError):
    """The captured code failed, or the agent could not be attached."""


def _memory_transport() -> Any:
    """A transport keeping each event as the JSON a real transport would send, decoded."""
    # Imported here: the transport package brings httpx, which loading the
    # pytest plugin must not pay for.
    from headwater.transport.base import Event, TransportBase

    class MemoryTransport(TransportBase):
        def __init__(self) -> None:
            self.events: list[dict[str, Any]] = []

        def emit(self, event: Event) -> None:
            self.events.append(json.loads(json.dumps(event)))

        def close(self, timeout: float) -> None:
            return None

    return MemoryTransport()


_MISSING = object()


def capture_in_process(
    spark: Any, job: Callable[[Any], Any], *, root: Root = None, **config: Any
) -> Lineage:
    """Call ``job(spark)`` with the agent attached to ``spark``; its lineage.

    ``config`` overrides fields of the agent's configuration (``AgentConfig``),
    e.g. ``namespace="retail"``. The agent is detached afterwards even when
    ``job`` raises (the exception then propagates).
    """
    from headwater.agent import attach
    from headwater.agent.config import AgentConfig, DeliveryConfig
    from headwater.agent.emitter import build_emitter

    conf = dict(spark.sparkContext.getConf().getAll())
    settings = AgentConfig.from_sources(conf, {})
    settings = dataclasses.replace(
        settings,
        disabled=False,
        transport={"type": "console"},
        delivery=DeliveryConfig(spool_enabled=False),
        **config,
    )
    transport = _memory_transport()
    emitter = build_emitter(settings, transport=transport)
    # attach() wraps the session's stop(); put back what was there so repeated
    # captures on one session do not stack wrappers.
    stop = spark.__dict__.get("stop", _MISSING)
    agent = attach(spark, config=settings, emitter=emitter)
    if agent.emitter is not emitter or not agent.enabled:
        emitter.close(1.0)
        raise CaptureError(
            "cannot capture: another headwater agent is attached to this SparkSession"
            if agent.enabled
            else "the headwater agent could not attach (see the log)"
        )
    try:
        job(spark)
    finally:
        agent.close(_FLUSH_SECONDS)
        if stop is _MISSING:
            spark.__dict__.pop("stop", None)
        else:
            spark.stop = stop
    return lineage_from_events(transport.events, root)


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """The events of a JSONL file (the file transport's), skipping blank lines."""
    events = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    events.append(json.loads(line))
                except ValueError as exc:
                    raise CaptureError(f"{path}:{number} is not JSON: {exc}") from exc
    return events


def _capture_env(base: Mapping[str, str], events: Path, workdir: Path) -> dict[str, str]:
    from headwater.agent.instrument import instrumented_env

    env = instrumented_env(base)
    # The job's own transport settings must not divert its events from the file.
    for name in [k for k in env if k.startswith("OPENLINEAGE__TRANSPORT")]:
        del env[name]
    for name in (
        "OPENLINEAGE_URL",
        "OPENLINEAGE_ENDPOINT",
        "OPENLINEAGE_API_KEY",
        "OPENLINEAGE_DISABLED",
        "OPENLINEAGE_CONFIG",
    ):
        env.pop(name, None)
    env.update(
        {
            "OPENLINEAGE__TRANSPORT__TYPE": "file",
            "OPENLINEAGE__TRANSPORT__LOCATION": str(events),
            "HEADWATER_SPOOL_ENABLED": "false",
            "HEADWATER_SPOOL_DIR": str(workdir / "spool"),
            # A busy CI machine can hold the listener bus past the 5 s default at stop.
            "HEADWATER_FLUSH_TIMEOUT_SECONDS": str(int(_FLUSH_SECONDS)),
        }
    )
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # spark-submit starts the driver with this interpreter, which has headwater.
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return env


def capture_command(
    command: Sequence[str | os.PathLike[str]],
    *,
    root: Root = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    timeout: float = 900.0,
) -> Lineage:
    """Run ``command`` instrumented in a subprocess; the lineage of every session it ran.

    ``env`` is added to this process's environment. The command's output goes to
    ``<workdir>/output.log`` (a new temporary directory when ``workdir`` is None);
    a non-zero exit raises :class:`CaptureError` with its last lines.
    """
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="hw-lineage-"))
    work.mkdir(parents=True, exist_ok=True)
    events, log = work / "events.jsonl", work / "output.log"
    events.unlink(missing_ok=True)
    full_env = _capture_env({**os.environ, **(env or {})}, events, work)
    args = [os.fspath(part) for part in command]
    with log.open("w", encoding="utf-8") as output:
        try:
            code = subprocess.call(
                args,
                cwd=cwd,
                env=full_env,
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=timeout,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CaptureError(f"{' '.join(args)} did not run: {exc}") from exc
    if code != 0:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
        raise CaptureError(f"{' '.join(args)} exited with {code}; its last lines:\n{tail}")
    return lineage_from_events(read_events(events) if events.exists() else [], root)


def capture_script(
    script: str | os.PathLike[str],
    *args: str | os.PathLike[str],
    root: Root = None,
    env: Mapping[str, str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    timeout: float = 900.0,
) -> Lineage:
    """Run ``python script *args`` (this interpreter) instrumented; its lineage."""
    return capture_command(
        [sys.executable, script, *args], root=root, env=env, workdir=workdir, timeout=timeout
    )
