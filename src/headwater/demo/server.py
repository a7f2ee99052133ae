"""The headwater server inside the demo process: uvicorn on a background thread."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import TYPE_CHECKING

from headwater.errors import ConfigError

if TYPE_CHECKING:
    from headwater.config import Settings
    from headwater.store import Store

__all__ = ["EmbeddedServer", "free_port"]

logger = logging.getLogger(__name__)

_START_TIMEOUT_SECONDS = 30.0


def free_port(host: str) -> int:
    """A port on ``host`` nobody listens on right now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class EmbeddedServer:
    """Serve ``store`` with the full headwater app on ``settings.host:settings.port``.

    A thread, not a subprocess: the pipeline's Spark jobs post events to it
    while the main thread runs them, and the demo summarises the same store.
    """

    def __init__(self, settings: Settings, store: Store) -> None:
        import uvicorn

        from headwater.server.app import create_app

        self.settings = settings
        config = uvicorn.Config(
            create_app(settings, store), host=settings.host, port=settings.port,
            log_level="warning", access_log=False, server_header=False, timeout_keep_alive=30,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="headwater-demo-server",
                                        daemon=True)

    @property
    def url(self) -> str:
        return self.settings.base_url

    def start(self) -> None:
        """Start serving; ConfigError if the port cannot be bound."""
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ConfigError(f"could not listen on {self.settings.host}:{self.settings.port}")
            time.sleep(0.05)
        logger.info("demo server listening at %s", self.url)

    def wait(self) -> None:
        """Block until the server stops; Ctrl+C stops it."""
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            logger.info("stopped by interrupt")
        finally:
            self.stop()

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(_START_TIMEOUT_SECONDS)
