"""Serve only the Host names this server is meant to be reached by.

A page on another site can make a browser send requests to
``http://127.0.0.1:5000`` by pointing its own DNS name at 127.0.0.1 (DNS
rebinding); those requests then count as same-origin for the page, so it could
read and write a key-less laptop server. They still carry the attacker's name
in their ``Host`` header, so :class:`AllowedHosts` answers 400 to any request
whose Host is not allowed, before the access gate or a route sees it.

By default the allowed names are the bind address and the loopback names
(``localhost``, ``127.0.0.1``, ``::1``); a server bound to every interface
(``0.0.0.0``, ``::``) also allows the machine's host name, its fully qualified
name and their addresses, which is what a probe or a client on the network
sends. Behind a load balancer or under a DNS name, list the names with
``--allowed-host`` (``.example.com`` matches the domain and its subdomains,
``*`` matches any host and turns the check off).

The check guards the listening socket: :func:`headwater.server.run.serving_app`
puts it around the app ``headwater serve`` serves. An app built with
``create_app`` and called in-process (tests, an embedding program) is reached
through no DNS name and has no check.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from headwater.server.handlers import error_body
from headwater.server.security_headers import SECURITY_HEADERS

__all__ = ["AllowedHosts", "default_allowed_hosts", "host_of"]

logger = logging.getLogger(__name__)

_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_WILDCARD_BINDS = {"0.0.0.0", "::", ""}


def default_allowed_hosts(bind: str) -> tuple[str, ...]:
    """The names a server bound to ``bind`` is reached by, without configuration."""
    names = {bind.lower().strip("[]"), *_LOOPBACK}
    if bind in _WILDCARD_BINDS:
        names.discard(bind)
        names |= _machine_names()
    return tuple(sorted(names))


def _machine_names() -> set[str]:
    """The host name, its qualified form and their addresses; what a network client names."""
    found: set[str] = set()
    try:
        hostname = socket.gethostname()
        found |= {hostname.lower(), socket.getfqdn().lower()}
        for *_, address in socket.getaddrinfo(hostname, None):
            found.add(str(address[0]).lower())
    except OSError as exc:  # an unresolvable host name: the names found so far will do
        logger.warning("could not list this machine's addresses for the Host check: %s", exc)
    return {name for name in found if name}


def host_of(header: str) -> str | None:
    """The name in a ``Host`` header, lower-cased, without its port; None if malformed."""
    value = header.strip().lower()
    if value.startswith("["):  # an IPv6 literal: [::1]:5000
        end = value.find("]")
        rest = value[end + 1:]
        if end < 0 or rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        name = value[1:end]
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
        return name
    name, _, port = value.partition(":")
    if port and not port.isdigit():
        return None
    if not name or any(c in name for c in "/\\@ \t?#"):
        return None
    return name.rstrip(".")


class AllowedHosts:
    """ASGI middleware answering 400 to a request whose Host header is not allowed."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        patterns = [h.strip().lower() for h in hosts]
        self.any = "*" in patterns
        self.exact = {p.strip("[]") for p in patterns if not p.startswith(".")}
        self.domains = tuple(p for p in patterns if p.startswith("."))

    def allows(self, name: str) -> bool:
        if self.any or name in self.exact:
            return True
        return any(name == d[1:] or name.endswith(d) for d in self.domains)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.any:
            await self.app(scope, receive, send)
            return
        header = None
        for key, value in scope.get("headers", ()):
            if key == b"host":
                header = value.decode("latin-1")
                break
        name = None if header is None else host_of(header)
        if name is not None and self.allows(name):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if header is None:
            message = "the request has no Host header"
        else:
            # repr() keeps control characters a client sent out of the answer's text.
            message = (f"Host {header!r} is not served here; the server's operator can allow it "
                       "with --allowed-host or HEADWATER_ALLOWED_HOSTS")
        response = JSONResponse(error_body(message, "Host"), 400)
        response.raw_headers.extend(SECURITY_HEADERS)
        await response(scope, receive, send)
