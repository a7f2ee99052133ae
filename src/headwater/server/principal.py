"""Who made a request: the one value the access gate and the token checks behind it
(stored tokens, OIDC bearer JWTs) hand each other."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Principal"]


@dataclass(frozen=True)
class Principal:
    """Who made a request: a token's name and grants, or nobody (``name`` None)."""

    name: str | None
    scopes: frozenset[str]
    namespaces: frozenset[str] | None = None
    authenticated: bool = False

    def may_see(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces
