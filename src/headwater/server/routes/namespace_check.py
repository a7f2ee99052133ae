"""``GET /api/v2/namespaces/check``: datasets that look like one thing under two names.

The answer of :func:`headwater.store.namespace_check.check`: each group of
datasets (a topic under two bootstrap spellings, an S3 key under two schemes,
a path with and without a trailing slash, a catalog table and its location),
why it looks like one dataset, and the namespace rule that would merge it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from headwater.server.deps import StoreDep
from headwater.server.routes.reading import ScopeDep, connection, read_router
from headwater.store import namespace_check
from headwater.store.aliases import rules_applied, rules_differ, rules_in_force
from headwater.store.namespace_rules import NamespaceRules

__all__ = ["UNKNOWN", "NamespaceCheck", "check_answer", "router"]

router = read_router()


class SuspectDataset(BaseModel):
    namespace: str
    name: str
    nodeId: str


class Suspect(BaseModel):
    kind: str = Field(description="kafka, s3, trailing-slash or symlink.")
    certain: bool = Field(
        description="False when the names only possibly denote one dataset "
        "(one topic on broker lists with no broker in common)."
    )
    reason: str
    rule: str = Field(description="The namespace rule (TOML) that would merge them.")
    datasets: list[SuspectDataset]


class NamespaceCheck(BaseModel):
    suspects: list[Suspect]
    rulesInForce: str | None = Field(
        description="The fingerprint of the namespace rules the store follows (null: none)."
    )
    rulesConfigured: str | None = Field(
        default=None,
        description="The fingerprint of the rules the server (or --namespace-rules) "
        "is configured with (null: none, or not known).",
    )
    rulesChanged: str | None = Field(
        default=None,
        description="Set when the configured rules are not the ones the store was derived "
        "with: what that means and the rebuild that applies them.",
    )


#: ``configured`` of :func:`check_answer` when the configured rules are not known.
UNKNOWN: Any = object()


def check_answer(
    conn: Any,
    rules_fingerprint: str | None,
    sees: Any = None,
    rules: NamespaceRules | None = None,
    configured: NamespaceRules | None = UNKNOWN,
) -> dict[str, Any]:
    """The route's answer on ``conn``; ``sees(namespace)`` limits it to visible datasets;
    ``configured`` are the rules in force for new events, compared with the store's."""
    suspects = [
        s.as_json()
        for s in namespace_check.check(conn, rules)
        if sees is None or all(sees(ns) for ns, _ in s.datasets)
    ]
    answer: dict[str, Any] = {"suspects": suspects, "rulesInForce": rules_fingerprint}
    if configured is not UNKNOWN:
        fingerprint = configured.fingerprint if configured is not None else None
        answer["rulesConfigured"] = fingerprint
        answer["rulesChanged"] = rules_differ(rules_fingerprint, fingerprint)
    return answer


@router.get("/api/v2/namespaces/check", response_model=NamespaceCheck, tags=["namespaces"])
def check(store: StoreDep, scope: ScopeDep) -> dict[str, Any]:
    """Datasets that look like one dataset under two names, each group with the
    namespace rule that would merge it (docs/namespaces.md)."""
    with connection(store) as conn:
        return check_answer(
            conn, rules_in_force(conn), scope.sees, rules_applied(conn), store.namespace_rules
        )
