"""The live access tokens in memory, so that checking a request's token costs no query.

:class:`TokenCache` holds the digests of the live tokens (and of ``--api-key``), reloads
them when older than :data:`TOKEN_TTL_SECONDS`, at once after a change through this
process's API, and on an unknown secret at most every :data:`MISS_RELOAD_SECONDS`.
:class:`headwater.server.access.AccessGate` asks it who a bearer secret names.
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from headwater.errors import StoreError
from headwater.server.principal import Principal
from headwater.store import access as tokens

__all__ = ["ALL_SCOPES", "MISS_RELOAD_SECONDS", "TOKEN_TTL_SECONDS", "TokenCache"]

logger = logging.getLogger(__name__)

#: How long a revocation made elsewhere (the CLI, another server process) may go unseen.
TOKEN_TTL_SECONDS = 5.0
#: The least time between reloads that an unknown secret may cause.
MISS_RELOAD_SECONDS = 1.0

#: Every scope a token may hold; ``--api-key`` holds them all.
ALL_SCOPES = frozenset(tokens.SCOPES)


class TokenCache:
    """Live token digests in memory, reloaded when older than ``ttl`` seconds."""

    def __init__(
        self,
        engine: Any,
        api_key: str | None,
        *,
        ttl: float = TOKEN_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        self._api_key_digest = tokens.digest(api_key) if api_key else None
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._by_digest: dict[str, tuple[str, Principal]] | None = None
        self._loaded_at = 0.0

    def invalidate(self) -> None:
        """Reload on the next lookup (after a change made through this process)."""
        self._loaded_at = float("-inf")

    def stale(self) -> bool:
        """Whether the next check would query the database (nothing loaded, or too old)."""
        return self._by_digest is None or self._clock() - self._loaded_at >= self._ttl

    def refresh(self) -> None:
        """Reload the live tokens if :meth:`stale`; on failure keep the ones loaded before."""
        if not self.stale():
            return
        with self._lock:
            if not self.stale():
                return
            try:
                live = tokens.list_tokens(self._engine, include_revoked=False)
            except StoreError:
                if self._by_digest is None:
                    raise  # nothing to judge by: refuse (503) rather than open up
                logger.warning("token reload failed; keeping the tokens loaded before")
                self._loaded_at = self._clock()
                return
            self._by_digest = {
                t.digest: (t.digest, Principal(t.name, t.scopes, t.namespaces, authenticated=True))
                for t in live
            }
            self._loaded_at = self._clock()

    def miss_reload_due(self) -> bool:
        """Whether an unknown secret may reload the tokens now.

        A token made a moment ago (by the CLI, another process) then works at
        once, and unknown secrets cost at most one query per MISS_RELOAD_SECONDS.
        """
        return self._clock() - self._loaded_at >= MISS_RELOAD_SECONDS

    def reload(self) -> None:
        self.invalidate()
        self.refresh()

    def protected(self) -> bool:
        """Whether requests need a token: ``--api-key`` is set or a live token exists.

        Judged by the tokens loaded (never queries); with none ever loaded it
        raises StoreError, so the server refuses (503) rather than opens up.
        """
        if self._by_digest is None:
            raise StoreError("the access tokens could not be read")
        return self._api_key_digest is not None or bool(self._by_digest)

    def find(self, secret: str) -> Principal | None:
        """The principal ``secret`` names among the tokens loaded; never queries.

        Digests are compared in constant time. The dict is keyed by the digest
        of what was presented, so how long finding it takes says nothing about
        any stored secret.
        """
        presented = tokens.digest(secret)
        if self._api_key_digest is not None and hmac.compare_digest(
            presented, self._api_key_digest
        ):
            return Principal("api-key", ALL_SCOPES, authenticated=True)
        entry = (self._by_digest or {}).get(presented)
        if entry is None or not hmac.compare_digest(entry[0], presented):
            return None
        return entry[1]

    def lookup(self, secret: str) -> Principal | None:
        """:meth:`find`, reloading first when stale and once more on a miss when due."""
        self.refresh()
        found = self.find(secret)
        if found is None and self.miss_reload_due():
            self.reload()
            found = self.find(secret)
        return found
