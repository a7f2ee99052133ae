"""Run the app under uvicorn: what ``headwater serve``, ``headwater sample`` and ``headwater demo`` call."""

from __future__ import annotations

import errno
import logging
import socket
from typing import TYPE_CHECKING

from headwater.config import Settings
from headwater.errors import ConfigError

if TYPE_CHECKING:
    from headwater.store import Store

__all__ = ["port_is_free", "redact_url", "run_server"]

logger = logging.getLogger(__name__)


def run_server(settings: Settings, store: Store | None = None) -> None:
    """Serve until interrupted (Ctrl+C / SIGTERM); a store we open here we also close.

    uvicorn picks uvloop and httptools when they are installed (the
    ``server`` extra installs both).
    """
    import uvicorn

    from headwater.server.app import create_app, open_store

    own_store = store is None
    active_store = open_store(settings) if store is None else store
    app = create_app(settings, active_store)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        loop="auto",
        http="auto",
        log_level=settings.log_level.lower(),
        access_log=settings.access_log,
        server_header=False,
        # The default 5 s keep-alive drops idle producer connections too eagerly.
        timeout_keep_alive=30,
    )
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
