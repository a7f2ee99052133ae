"""Connections that cannot hold the server: read deadlines and a cap per client address.

uvicorn closes an idle keep-alive connection, but nothing else: a client that
opens a connection and sends nothing, or sends half its headers, or declares a
10 MB body and sends a byte a minute, keeps a socket, a file descriptor and
(once its headers are in) a waiting request task for as long as it likes. A
thousand such clients exhaust the server's descriptors (a slow-upload or
"slowloris" attack). The ASGI app cannot guard against it: it hears of a
request only when its headers are complete, and of a connection never.

So the guard sits in the HTTP protocol, as a subclass of uvicorn's httptools
protocol (the one ``uvicorn[standard]`` serves with) made by
:func:`guarded_protocol`:

- **headers deadline**: from the moment a connection opens, or a request's
  first byte arrives, its headers must be complete within ``header_timeout``
  seconds;
- **body deadline**: from the end of the headers, the whole body must arrive
  within ``body_timeout`` seconds (a slow drip of bytes does not extend it);
- on either deadline the client gets ``408`` (JSON, ``Connection: close``) when
  no answer has started, and the connection is closed; a request task waiting
  for the body hears the client is gone (``http.disconnect``);
- **per-client cap**: one client address may hold ``max_per_client`` open
  connections; a further one is answered ``503`` with ``Retry-After`` and closed
  at once, before it costs a request task. Other clients, a health probe among
  them, are not affected. The count is per server process (each ``--workers``
  process keeps its own).

The subclass uses these uvicorn internals, all of ``HttpToolsProtocol`` 0.54:
the parser callbacks ``on_message_begin``, ``on_headers_complete`` and
``on_message_complete``; the attributes ``transport``, ``client``, ``cycle``
and ``loop``; and the cycle's ``response_started``, ``disconnected`` and
``message_event``. Without httptools (a server installed without the
``server`` extra's ``uvicorn[standard]``) :func:`guarded_protocol` returns
None, the server runs unguarded and says so in its log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

__all__ = ["ENVIRONMENT_PROTOCOL", "guarded_protocol"]

#: What ``--workers N`` names as uvicorn's protocol: each worker process builds the class
#: from its ``HEADWATER_*`` variables (a class made in the parent cannot be pickled).
ENVIRONMENT_PROTOCOL = "headwater.server.connections:EnvironmentProtocol"

logger = logging.getLogger(__name__)

# A client over its cap is logged at most this often, so an attack does not flood the log.
_LOG_EVERY_SECONDS = 60.0


def _answer(status: int, reason: str, message: str, extra: str = "") -> bytes:
    body = json.dumps({"error": message}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n{extra}"
            "x-content-type-options: nosniff\r\n\r\n")
    return head.encode("latin-1") + body


def guarded_protocol(header_timeout: float, body_timeout: float,
                     max_per_client: int) -> type[asyncio.Protocol] | None:
    """A uvicorn HTTP protocol class enforcing the deadlines and the per-client cap."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None

    open_by_client: dict[str, int] = {}
    last_logged: dict[str, float] = {}
    header_late = _answer(408, "Request Timeout",
                          f"request headers not received within {header_timeout:g} s")
    body_late = _answer(408, "Request Timeout",
                        f"request body not received within {body_timeout:g} s")
    too_many = _answer(503, "Service Unavailable",
                       f"this client address holds {max_per_client} open connections already "
                       "(the server's --max-client-connections)", "retry-after: 1\r\n")

    class GuardedHttpToolsProtocol(HttpToolsProtocol):  # type: ignore[misc]
        _deadline: asyncio.TimerHandle | None = None
        _counted: str | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            address = self.client[0] if self.client else None
            if address is not None:
                held = open_by_client.get(address, 0)
                if held >= max_per_client:
                    self._refuse_over_cap(address)
                    return
                open_by_client[address] = held + 1
                self._counted = address
            self._arm(header_timeout, header_late)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._uncount()
            super().connection_lost(exc)

        def _uncount(self) -> None:
            if self._counted is not None:
                left = open_by_client.get(self._counted, 1) - 1
                if left > 0:
                    open_by_client[self._counted] = left
                else:
                    open_by_client.pop(self._counted, None)
                self._counted = None

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm(header_timeout, header_late)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._arm(body_timeout, body_late)

        def handle_websocket_upgrade(self) -> None:
            # The connection passes to another protocol, which keeps its own time.
            self._disarm()
            self._uncount()
            super().handle_websocket_upgrade()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def _arm(self, seconds: float, answer: bytes) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expire, answer)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self, answer: bytes) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            cycle = self.cycle
            answered = cycle is not None and cycle.response_started and not (
                cycle.response_complete and answer is header_late)
            if cycle is not None and not cycle.response_complete:
                # The request task stops writing, and a read of the body returns at once.
                cycle.disconnected = True
                cycle.message_event.set()
            if not answered:
                self.transport.write(answer)
            self.transport.close()

        def _refuse_over_cap(self, address: str) -> None:
            now = time.monotonic()
            if now - last_logged.get(address, float("-inf")) >= _LOG_EVERY_SECONDS:
                last_logged[address] = now
                logger.warning("client %s holds %d connections (the cap); refusing more "
                               "for now", address, max_per_client)
            self.transport.write(too_many)
            self.transport.close()

    return GuardedHttpToolsProtocol


def __getattr__(name: str) -> Any:
    if name == "EnvironmentProtocol":
        from headwater.config import Settings

        settings = Settings.from_env()
        return guarded_protocol(settings.header_timeout, settings.body_timeout,
                                settings.max_client_connections)
    raise AttributeError(name)
