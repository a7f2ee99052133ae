"""A real OpenID Connect issuer on 127.0.0.1 for the JWT tests: a discovery document and a
JWKS of RSA keys made here, served by ``http.server`` in a thread, and tokens it signs."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

__all__ = ["AUDIENCE", "Issuer", "running_issuer"]

AUDIENCE = "headwater-tests"


def _new_key() -> tuple[str, rsa.RSAPrivateKey]:
    return uuid.uuid4().hex, rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Issuer:
    """The keys the issuer publishes, the tokens it signs, and how often its JWKS was read."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.keys: list[tuple[str, rsa.RSAPrivateKey]] = [_new_key()]
        self.jwks_reads = 0
        self.discovery_reads = 0

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, private in self.keys:
            jwk = jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def rotate(self) -> None:
        """Publish a new key in place of the old one."""
        self.keys = [_new_key()]

    def token(
        self,
        subject: str = "svc-ci",
        *,
        scope: Any = "read",
        key: int = 0,
        kid: str | None = None,
        private: rsa.RSAPrivateKey | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": self.url,
            "aud": AUDIENCE,
            "sub": subject,
            "iat": now,
            "exp": now + 300,
            "scope": scope,
        }
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        own_kid, own_private = self.keys[key]
        return jwt.encode(
            payload, private or own_private, algorithm="RS256", headers={"kid": kid or own_kid}
        )


@contextmanager
def running_issuer() -> Iterator[Issuer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    issuer = Issuer(f"http://127.0.0.1:{server.server_address[1]}")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path == "/.well-known/openid-configuration":
                issuer.discovery_reads += 1
                body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks"}
            elif self.path == "/jwks":
                issuer.jwks_reads += 1
                body = issuer.jwks()
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
