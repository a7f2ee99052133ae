"""The agent's own py4j connection: large replies without a 40 ms stall.

py4j's Java side answers each call on a plain socket with Nagle's algorithm on.
A large reply — the ~150 KB ``toJSON()`` of a 136-node plan — leaves the JVM
in several segments; the last, short one waits until the Python side ACKs the
previous ones, and Linux delays that ACK on an interactive connection by up to
40 ms. Measured on the overhead benchmark's plan (docs/agent-configuration.md,
"What runs where, and what it costs the job"): ``toJSON()`` took 7-8 ms of JVM
CPU but 45-55 ms of wall time on most calls, bimodal at +40 ms; with
``TCP_NODELAY`` on the Java end of the connection, 10-16 ms.

In py4j's pinned-thread mode (PySpark's default) every Python thread has its own
connection, served by its own JVM thread. :class:`ConnectionTuner` finds the
Java end of the *calling thread's* connection — the socket whose remote port is
this thread's local port — and sets ``TCP_NODELAY`` on it, so only the agent's
worker thread is affected; the job's own py4j traffic is left as it is. It
reads py4j's private ``GatewayServer.connections`` list by reflection, so
everything here is best effort: on any failure (another py4j version, the
older shared-connection mode) the agent works the same, only slower.
"""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["ConnectionTuner", "set_no_delay_for_this_thread"]

logger = logging.getLogger(__name__)

#: Seconds to wait before reading py4j's connection list again (see below).
_LIST_PAUSES = (0.002, 0.01, 0.05, 0.0)


def _java_end(connections: Any, port: int) -> Any:
    """The Java socket among py4j's ``connections`` whose remote port is ``port``."""
    for index in range(len(connections)):
        java_socket = connections[index].getSocket()
        if java_socket is not None and int(java_socket.getPort()) == port:
            return java_socket
    return None


def _thread_socket(client: Any) -> Any:
    """The Python socket of the calling thread's own py4j connection, or ``None``."""
    get = getattr(client, "get_thread_connection", None)
    if get is None:  # not pinned-thread mode: connections are shared by all threads
        return None
    connection = get()
    return getattr(connection, "socket", None) if connection is not None else None


def set_no_delay_for_this_thread(gateway: Any) -> int | None:
    """Set ``TCP_NODELAY`` on the JVM's end of the calling thread's py4j connection.

    Returns the id of the JVM thread that serves this connection when it was set
    (for CPU accounting), else ``None``. Never raises.
    """
    try:
        from py4j.java_gateway import JavaObject
        from py4j.protocol import GATEWAY_SERVER_OBJECT_ID

        client = gateway._gateway_client
        if _thread_socket(client) is None:
            gateway.jvm.java.lang.System.nanoTime()  # the first call opens the connection
        sock = _thread_socket(client)
        if sock is None:
            return None
        port = int(sock.getsockname()[1])
        server = JavaObject(GATEWAY_SERVER_OBJECT_ID, client)
        field = gateway.jvm.java.lang.Class.forName("py4j.GatewayServer").getDeclaredField("connections")
        field.setAccessible(True)
        # py4j starts a connection's JVM thread before it adds the connection to
        # the list (and a connection's socket is set after it is listed), so a
        # connection that has already answered calls can be missing for a moment.
        for pause in _LIST_PAUSES:
            java_socket = _java_end(field.get(server).toArray(), port)
            if java_socket is not None:
                java_socket.setTcpNoDelay(True)
                # This call runs on the JVM thread that serves the connection.
                return int(gateway.jvm.java.lang.Thread.currentThread().getId())
            time.sleep(pause)
    except Exception:
        logger.debug("could not set TCP_NODELAY on the agent's py4j connection", exc_info=True)
    return None


class ConnectionTuner:
    """Keeps ``TCP_NODELAY`` on the calling thread's py4j connection.

    :meth:`ensure` is cheap when nothing changed (no py4j call): it re-tunes only
    when the thread's connection is new (py4j replaces a connection that broke).
    """

    def __init__(self, gateway: Any) -> None:
        self._gateway = gateway
        self._tuned: Any = None
        # Shared connections (py4j's older mode): nothing of the agent's own to tune.
        self._possible = hasattr(getattr(gateway, "_gateway_client", None), "get_thread_connection")
        self.tuned_count = 0
        #: The JVM thread serving the tuned connection (Java thread id), once known.
        self.jvm_thread_id: int | None = None

    def ensure(self) -> bool:
        """Tune this thread's connection unless it was tuned (or tried) already.

        Returns whether it was tuned just now.
        """
        if not self._possible:
            return False
        try:
            sock = _thread_socket(self._gateway._gateway_client)
            if sock is not None and sock is self._tuned:
                return False
            thread_id = set_no_delay_for_this_thread(self._gateway)
            # Tuned or not, remember this connection: a failure is not retried on
            # every action, only when py4j opens a new connection.
            self._tuned = _thread_socket(self._gateway._gateway_client)
            if thread_id is not None:
                self.tuned_count += 1
                self.jvm_thread_id = thread_id
                return True
        except Exception:
            logger.debug("could not check the agent's py4j connection", exc_info=True)
        return False
