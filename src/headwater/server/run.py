"""Run the app under uvicorn: what ``headwater serve``, ``headwater sample`` and ``headwater demo`` call."""

from __future__ import annotations

import dataclasses
import errno
import gc
import logging
import socket
from typing import TYPE_CHECKING, Any

from headwater.config import ENV_PREFIX, Settings
from headwater.errors import ConfigError

if TYPE_CHECKING:
    from headwater.store import Store

__all__ = [
    "GC_YOUNG_THRESHOLD", "app_from_environment", "port_is_free", "redact_url", "run_server",
    "serving_app", "tune_gc",
]

logger = logging.getLogger(__name__)

# Container allocations between young-generation collections while the app
# runs (the interpreter's default is 700). Decoding and storing a 500-event
# batch creates tens of thousands of containers that live until the batch is
# stored; at 700 the collector ran dozens of times per batch, walking and
# promoting them, and the promoted ones made full collections of the whole
# server heap frequent (measured: docs/server.md). Objects are still freed
# by reference counting at once; only reference cycles wait for a collection.
GC_YOUNG_THRESHOLD = 50_000


def tune_gc() -> None:
    """Set the collector up for a long-running ingesting server (once per process).

    Freezes what exists at start-up (modules, routes, compiled statements:
    never garbage) so full collections skip it, and raises the young
    generation's threshold to :data:`GC_YOUNG_THRESHOLD`.
    """
    young, middle, old = gc.get_threshold()
    if young >= GC_YOUNG_THRESHOLD:
        return  # done already (or the embedding program chose a larger one)
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def run_server(settings: Settings, store: Store | None = None) -> None:
    """Serve until interrupted (Ctrl+C / SIGTERM); a store we open here we also close.

    uvicorn picks uvloop and httptools when they are installed (the
    ``server`` extra installs both).
    """
    import uvicorn

    from headwater.server.app import create_app, open_store

    if settings.workers > 1:
        if store is not None:
            raise ConfigError("several workers each open the store themselves; "
                              "run one worker to serve a store opened by the caller")
        _run_workers(settings)
        return
    own_store = store is None
    active_store = open_store(settings) if store is None else store
    app = serving_app(create_app(settings, active_store), settings)
    tune_gc()
    config = uvicorn.Config(app, **_uvicorn_options(settings))
    server = uvicorn.Server(config)
    try:
        server.run()
    except KeyboardInterrupt:
        # uvicorn shuts down cleanly on Ctrl+C, then re-raises the signal;
        # stopping on request is a normal exit, not an error.
        logger.info("stopped by interrupt")
    finally:
        if own_store:
            active_store.close()
    if not server.started:
        raise ConfigError(f"could not listen on {settings.host}:{settings.port}")


def _run_workers(settings: Settings) -> None:
    """Serve with ``settings.workers`` processes sharing one listening socket.

    uvicorn starts each worker fresh, so the settings travel as ``HEADWATER_*``
    variables and each worker builds its app with :func:`app_from_environment`.
    The schema is migrated here, once, before any worker opens the store.
    """
    import os
    import shutil
    import tempfile

    import uvicorn

    from headwater.server.app import open_store
    from headwater.server.connections import ENVIRONMENT_PROTOCOL

    open_store(settings).close()
    for name, value in dataclasses.asdict(settings).items():
        if value is not None:
            if isinstance(value, bool):
                value = str(value).lower()
            elif isinstance(value, tuple):
                value = ",".join(value)
            else:
                value = str(value)
            os.environ[ENV_PREFIX + name.upper()] = value
    if not port_is_free(settings.host, settings.port):
        raise ConfigError(f"could not listen on {settings.host}:{settings.port}")
    # The workers count into one folder, so /metrics adds up all of them
    # whichever worker a scrape reaches (prometheus-client's multiprocess mode).
    metrics_dir = None
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        metrics_dir = tempfile.mkdtemp(prefix="headwater-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    try:
        options = _uvicorn_options(settings)
        if not isinstance(options["http"], str):
            options["http"] = ENVIRONMENT_PROTOCOL
        uvicorn.run("headwater.server.run:app_from_environment", factory=True,
                    workers=settings.workers, **options)
    finally:
        if metrics_dir is not None:
            del os.environ["PROMETHEUS_MULTIPROC_DIR"]
            shutil.rmtree(metrics_dir, ignore_errors=True)


def serving_app(app: Any, settings: Settings) -> Any:
    """``app`` as a socket serves it: behind the Host check (see server/hosts.py)."""
    from headwater.server.hosts import AllowedHosts, default_allowed_hosts

    hosts = settings.allowed_hosts or default_allowed_hosts(settings.host)
    return AllowedHosts(app, hosts)


def _uvicorn_options(settings: Settings) -> dict[str, Any]:
    from headwater.server.connections import guarded_protocol

    protocol = guarded_protocol(settings.header_timeout, settings.body_timeout,
                                settings.max_client_connections)
    if protocol is None:
        logger.warning("httptools is not installed: no header or body deadline and no "
                       "per-client connection cap (install headwater[server])")
    return {
        "host": settings.host,
        "http": protocol or "auto",
        "port": settings.port,
        "loop": "auto",
        "log_level": settings.log_level.lower(),
        "access_log": settings.access_log,
        "server_header": False,
        # The default 5 s keep-alive drops idle producer connections too eagerly.
        "timeout_keep_alive": 30,
    }


def app_from_environment() -> Any:
    """One worker's app, from the ``HEADWATER_*`` variables :func:`_run_workers` set."""
    from headwater.server.app import create_app

    settings = Settings.from_env()
    app = serving_app(create_app(settings), settings)
    tune_gc()
    return app


def port_is_free(host: str, port: int) -> bool:
    """True if ``host:port`` can be bound right now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def redact_url(url: str) -> str:
    """A database URL safe to print: the password replaced by ``***``."""
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - printing must never fail on an odd URL
        return url
