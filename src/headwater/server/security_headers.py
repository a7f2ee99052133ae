"""Headers every answer carries, so a browser treats the UI and the API safely.

- ``X-Content-Type-Options: nosniff``: a JSON answer holding producer-sent
  text (job names, SQL, facets) is never sniffed into HTML or script;
- ``Content-Security-Policy`` (:data:`CONTENT_SECURITY_POLICY`): the page
  runs only the scripts and styles the server ships (no inline script or
  style, no ``eval``), talks only to its own server, submits no form anywhere
  (the token prompt must never put a token in a URL), and no other site frames
  it (``frame-ancestors 'none'``, with ``X-Frame-Options: DENY`` for older
  browsers) to trick a user into clicks on it. The built UI satisfies it
  (``tests/ui``: Chromium fails a test on any violation); the API
  documentation pages set their own, looser on styles (``headwater.ui.api_docs``);
- ``Referrer-Policy: no-referrer``: a link out of the UI does not tell the
  other site which dataset or job the user was looking at.

A header the answer sets itself is left as it is.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "SecurityHeaders"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
