"""Bearer JWTs from an OpenID Connect issuer, checked against the issuer's published keys.

With ``--oidc-issuer URL --oidc-audience AUD``, :class:`~headwater.server.access.AccessGate`
also admits a bearer token that is a JWT the issuer signed:

- the keys come from the ``jwks_uri`` of ``{issuer}/.well-known/openid-configuration``
  (PyJWT's :class:`jwt.PyJWKClient`), fetched in a worker thread, never in the event
  loop; they are kept in memory, fetched again when a token names a key id not among
  them (at most once per :data:`MIN_REFRESH_SECONDS`, so tokens with made-up key ids
  cannot make the server hammer the issuer) and every :data:`KEYS_TTL_SECONDS` (so a
  key the issuer withdrew stops working);
- the token must be signed with an asymmetric algorithm (:data:`ALGORITHMS`: never
  ``none``, never an HMAC whose secret could be the public key), by a key of the set,
  and carry ``exp``, ``iss`` equal to the issuer and ``aud`` naming the audience;
  ``nbf`` and ``iat`` are honoured with :data:`LEEWAY_SECONDS` of clock skew;
- its scopes claim (``scope`` by default: a space-separated string, or a list) grants
  headwater's ``ingest``, ``read`` and ``admin`` for the values ``ingest``/``read``/
  ``admin`` or ``headwater:ingest``/``headwater:read``/``headwater:admin``; others
  are ignored;
- with ``--oidc-namespaces-claim NAME`` the token sees only the namespaces that claim
  lists (a list or a space-separated string; ``*`` for all); a token without it sees
  none;
- its subject (``sub``, or ``--oidc-name-claim``) is the audit log's token name.

A token refused for any of these is a 401 naming the reason (expired, not yet valid,
wrong issuer, wrong audience, bad signature, algorithm not accepted, unknown key),
audited like every other refused token.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import jwt

from headwater.server.principal import Principal
from headwater.store.access import SCOPES

__all__ = [
    "ALGORITHMS",
    "KEYS_TTL_SECONDS",
    "LEEWAY_SECONDS",
    "MIN_REFRESH_SECONDS",
    "JwtRefused",
    "JwtVerifier",
    "UnknownKey",
    "looks_like_jwt",
]

logger = logging.getLogger(__name__)

#: The signing algorithms accepted: public-key ones only.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
              "ES512", "EdDSA")
#: The least time between two fetches of the issuer's keys that unknown key ids cause.
MIN_REFRESH_SECONDS = 30.0
#: How long fetched keys are used before they are fetched again.
KEYS_TTL_SECONDS = 3600.0
#: Clock skew allowed on ``exp``, ``nbf`` and ``iat``.
LEEWAY_SECONDS = 30
_PREFIX = "headwater:"


class JwtRefused(Exception):  # noqa: N818 - a refusal, reported as a 401
    """The token is not one this server accepts; the message says why."""


class UnknownKey(JwtRefused):  # noqa: N818
    """The token names a key id the keys held do not have."""


def looks_like_jwt(secret: str) -> bool:
    """Whether a bearer secret has a JWT's shape (three dot-separated parts)."""
    return secret.count(".") == 2 and not secret.startswith("hw_")


class JwtVerifier:
    """Checks bearer JWTs against one issuer's keys; maps their claims to a Principal."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        scopes_claim: str = "scope",
        namespaces_claim: str | None = None,
        name_claim: str = "sub",
        min_refresh: float = MIN_REFRESH_SECONDS,
        keys_ttl: float = KEYS_TTL_SECONDS,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer  # ``iss`` must equal it exactly, as OpenID Connect says
        self.audience = audience
        self.scopes_claim = scopes_claim
        self.namespaces_claim = namespaces_claim
        self.name_claim = name_claim
        self._min_refresh = min_refresh
        self._keys_ttl = keys_ttl
        self._timeout = timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._jwks_client: jwt.PyJWKClient | None = None
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        #: How many times the keys were fetched (for tests and the benchmark).
        self.fetches = 0

    # -- keys ----------------------------------------------------------------------

    def stale(self) -> bool:
        """Whether the keys held are older than the keys' lifetime (none held: not stale;
        the first token fetches them)."""
        return self._fetched_at is not None and \
            self._clock() - self._fetched_at >= self._keys_ttl

    def refresh_due(self) -> bool:
        """Whether an unknown key id may fetch the keys now."""
        return self._fetched_at is None or self._clock() - self._fetched_at >= self._min_refresh

    def refresh(self) -> None:
        """Fetch the issuer's keys (blocking: call it in a worker thread).

        On failure the keys held are kept and the failure is logged; the next try is
        :data:`MIN_REFRESH_SECONDS` later.
        """
        with self._lock:
            if not (self.stale() or self.refresh_due()):
                return  # another request fetched them while this one waited
            try:
                keys = self._jwks().get_signing_keys(refresh=True)
            except (jwt.PyJWKClientError, httpx.HTTPError, ValueError) as exc:
                logger.warning("fetching the keys of %s failed: %s", self.issuer, exc)
                self._fetched_at = self._clock()
                return
            self._keys = {key.key_id: key for key in keys}
            self._fetched_at = self._clock()
            self.fetches += 1

    def _jwks(self) -> jwt.PyJWKClient:
        if self._jwks_client is None:
            discovery = f"{self.issuer.rstrip('/')}/.well-known/openid-configuration"
            answer = httpx.get(discovery, timeout=self._timeout, follow_redirects=False)
            answer.raise_for_status()
            document = answer.json()
            if document.get("issuer") != self.issuer:
                raise ValueError(f"{discovery} names issuer {document.get('issuer')!r}, "
                                 f"not {self.issuer!r}")
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not jwks_uri.startswith(("https://", "http://")):
                raise ValueError(f"{discovery} has no jwks_uri")
            self._jwks_client = jwt.PyJWKClient(jwks_uri, cache_jwk_set=False,
                                                timeout=int(self._timeout) or 1)
        return self._jwks_client

    # -- tokens --------------------------------------------------------------------

    def principal(self, token: str) -> Principal:
        """The principal ``token`` stands for; :class:`JwtRefused` (:class:`UnknownKey`
        when its key id is not among the keys held) otherwise. Never does I/O."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as exc:
            raise JwtRefused("invalid token: not a JWT") from exc
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise JwtRefused(f"invalid token: algorithm {algorithm!r} is not accepted")
        key = self._keys.get(header.get("kid"))
        if key is None:
            raise UnknownKey("invalid token: signed with a key the issuer does not publish")
        try:
            claims = jwt.decode(
                token, key.key, algorithms=[algorithm], audience=self.audience,
                issuer=self.issuer, leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise JwtRefused("invalid token: expired") from exc
        except jwt.ImmatureSignatureError as exc:
            raise JwtRefused("invalid token: not yet valid") from exc
        except jwt.InvalidIssuerError as exc:
            raise JwtRefused(f"invalid token: its issuer is not {self.issuer}") from exc
        except jwt.InvalidAudienceError as exc:
            raise JwtRefused(f"invalid token: its audience is not {self.audience}") from exc
        except jwt.InvalidSignatureError as exc:
            raise JwtRefused("invalid token: bad signature") from exc
        except jwt.MissingRequiredClaimError as exc:
            raise JwtRefused(f"invalid token: no {exc.claim} claim") from exc
        except (jwt.InvalidTokenError, ValueError) as exc:
            raise JwtRefused("invalid token") from exc
        name = claims.get(self.name_claim)
        if not isinstance(name, str) or not name:
            raise JwtRefused(f"invalid token: no {self.name_claim} claim")
        return Principal(name, self._scopes(claims), self._namespaces(claims),
                         authenticated=True)

    def _scopes(self, claims: dict[str, Any]) -> frozenset[str]:
        granted = set()
        for value in _values(claims.get(self.scopes_claim)):
            scope = value[len(_PREFIX):] if value.startswith(_PREFIX) else value
            if scope in SCOPES:
                granted.add(scope)
        return frozenset(granted)

    def _namespaces(self, claims: dict[str, Any]) -> frozenset[str] | None:
        if self.namespaces_claim is None:
            return None
        values = _values(claims.get(self.namespaces_claim))
        return None if "*" in values else frozenset(values)


def _values(claim: Any) -> list[str]:
    """A claim as strings: a space-separated string, or a list of strings."""
    if isinstance(claim, str):
        return claim.split()
    if isinstance(claim, list):
        return [item for item in claim if isinstance(item, str) and item]
    return []
