"""headwater's own operations: ingestion, health and ``/api/v2`` (directed lineage,
impact, drift, classification, owners, tokens, audit, quarantine), each a
function that builds a :class:`Call`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from headwater.client.call import Call, model, params, segment, text, time_param
from headwater.client.models import (
    AuditList,
    BatchResult,
    CreatedToken,
    DirectedLineage,
    Drift,
    DriftList,
    Health,
    Impact,
    IngestResult,
    NamespaceCheck,
    ProducerList,
    Quality,
    QuarantineList,
    ReaderList,
    TokenList,
)

__all__ = [
    "audit",
    "create_token",
    "downstream",
    "drift",
    "drift_item",
    "health",
    "impact",
    "impact_csv",
    "ingest",
    "ingest_batch",
    "lineage",
    "metrics",
    "namespace_check",
    "producers",
    "quality",
    "readers",
    "quarantine",
    "revoke_token",
    "tokens",
    "upstream",
]

V2 = "/api/v2"
Time = datetime | str | None
Direction = Literal["upstream", "downstream", "both"]


# -- ingestion and the server ----------------------------------------------------------


def ingest(event: Mapping[str, Any], *, gzip: bool = False) -> Call[IngestResult]:
    """Store one OpenLineage event (a dict as the spec spells it); ``gzip`` compresses it."""
    return Call.json("POST", "/api/v1/lineage", model(IngestResult), event, compress=gzip)


def ingest_batch(events: Sequence[Mapping[str, Any]], *, gzip: bool = False) -> Call[BatchResult]:
    """Store a batch of events; refused ones are listed, the others stored.

    A batch whose every event is refused is answered too (the server's 400 lists
    them), with ``summary.successful == 0``.
    """
    call = Call.json(
        "POST", "/api/v1/lineage/batch", model(BatchResult), list(events), compress=gzip
    )
    return replace(call, answered_by=frozenset({400}))


def health() -> Call[Health]:
    """Whether the server is up, and its version."""
    return Call("GET", "/api/v1/health", model(Health))


def quality(node_id: str, *, since: Time = None, until: Time = None) -> Call[Quality]:
    """A dataset's data quality from its producers' quality facets: the latest value of
    each metric and assertion, a series per metric, what each run reported."""
    return Call(
        "GET",
        f"{V2}/datasets/{segment(node_id)}/quality",
        model(Quality),
        params(since=time_param(since), until=time_param(until)),
    )


def readers(
    node_id: str, *, since: Time = None, until: Time = None, limit: int = 100, offset: int = 0
) -> Call[ReaderList]:
    """A page of the runs that read a dataset in a window, newest read first."""
    return Call(
        "GET",
        f"{V2}/datasets/{segment(node_id)}/readers",
        model(ReaderList),
        params(since=time_param(since), until=time_param(until), limit=limit, offset=offset),
    )


def producers() -> Call[ProducerList]:
    """Every producer per job namespace: events stored and refused, last arrival."""
    return Call("GET", f"{V2}/producers", model(ProducerList))


def namespace_check() -> Call[NamespaceCheck]:
    """Datasets that look like one under several names, each with the namespace rule
    that would merge them."""
    return Call("GET", f"{V2}/namespaces/check", model(NamespaceCheck))


def metrics() -> Call[str]:
    """The server's Prometheus metrics, as text."""
    return Call("GET", "/metrics", text)


# -- lineage and impact ----------------------------------------------------------------


def lineage(
    node_id: str,
    *,
    direction: Direction = "both",
    depth: int = 10,
    as_of: Time = None,
    max_nodes: int = 1000,
) -> Call[DirectedLineage]:
    """What ``node_id`` comes from and/or feeds, as it is or as it was at ``as_of``.

    ``node_id`` is ``dataset:NS:NAME``, ``datasetField:NS:NAME:FIELD`` (column
    lineage), ``job:NS:NAME`` or ``run:UUID``.
    """
    return Call(
        "GET",
        f"{V2}/lineage",
        model(DirectedLineage),
        params(
            nodeId=node_id,
            direction=direction,
            depth=depth,
            asOf=time_param(as_of),
            maxNodes=max_nodes,
        ),
    )


def upstream(
    node_id: str, *, depth: int = 10, as_of: Time = None, max_nodes: int = 1000
) -> Call[DirectedLineage]:
    """What ``node_id`` comes from: :meth:`lineage` with ``direction="upstream"``."""
    return lineage(node_id, direction="upstream", depth=depth, as_of=as_of, max_nodes=max_nodes)


def downstream(
    node_id: str, *, depth: int = 10, as_of: Time = None, max_nodes: int = 1000
) -> Call[DirectedLineage]:
    """What ``node_id`` feeds: :meth:`lineage` with ``direction="downstream"``."""
    return lineage(node_id, direction="downstream", depth=depth, as_of=as_of, max_nodes=max_nodes)


def _impact_params(
    node_id: str,
    depth: int,
    as_of: Time,
    edges: str,
    namespaces: Sequence[str],
    jobs: Sequence[str],
    max_nodes: int,
    format: str,
) -> dict[str, Any]:
    return params(
        nodeId=node_id,
        depth=depth,
        asOf=time_param(as_of),
        edges=edges,
        namespace=list(namespaces) or None,
        job=list(jobs) or None,
        maxNodes=max_nodes,
        format=format,
    )


def impact(
    node_id: str,
    *,
    depth: int = 10,
    as_of: Time = None,
    edges: Literal["direct", "indirect", "all"] = "all",
    namespaces: Sequence[str] = (),
    jobs: Sequence[str] = (),
    max_nodes: int = 1000,
) -> Call[Impact]:
    """Everything downstream that a change to ``node_id`` reaches, direct or indirect."""
    return Call(
        "GET",
        f"{V2}/impact",
        model(Impact),
        _impact_params(node_id, depth, as_of, edges, namespaces, jobs, max_nodes, "json"),
    )


def impact_csv(
    node_id: str,
    *,
    depth: int = 10,
    as_of: Time = None,
    edges: Literal["direct", "indirect", "all"] = "all",
    namespaces: Sequence[str] = (),
    jobs: Sequence[str] = (),
    max_nodes: int = 1000,
) -> Call[str]:
    """:meth:`impact` as CSV text, one row per node reached."""
    return Call(
        "GET",
        f"{V2}/impact",
        text,
        _impact_params(node_id, depth, as_of, edges, namespaces, jobs, max_nodes, "csv"),
    )


def drift(
    *,
    since: Time = None,
    until: Time = None,
    dataset: str | None = None,
    breaking: bool | None = None,
    kind: str | None = None,
    limit: int = 100,
    offset: int = 0,
    impact: bool = True,
    impact_depth: int = 10,
    max_nodes: int = 1000,
) -> Call[DriftList]:
    """A page of schema drifts, newest first: changes between dataset versions
    (kind ``version``) and consumers declaring a schema the dataset is not written
    with (kind ``contract``), each with what it reaches downstream.

    ``dataset`` is a ``dataset:NS:NAME`` node id; ``breaking`` keeps only breaking
    (True) or only compatible (False) changes; ``kind`` only one kind; ``impact``
    False leaves each drift's impact out (walked ``impact_depth`` jobs deep, at most
    ``max_nodes`` nodes).
    """
    return Call(
        "GET",
        f"{V2}/drift",
        model(DriftList),
        params(
            since=time_param(since),
            until=time_param(until),
            dataset=dataset,
            breaking=breaking,
            kind=kind,
            limit=limit,
            offset=offset,
            impact="true" if impact else "false",
            impactDepth=impact_depth,
            maxNodes=max_nodes,
        ),
    )


def drift_item(drift_id: str, *, impact_depth: int = 10, max_nodes: int = 1000) -> Call[Drift]:
    """One drift by its ``id``, with its impact."""
    return Call(
        "GET",
        f"{V2}/drift/{segment(drift_id)}",
        model(Drift),
        params(impactDepth=impact_depth, maxNodes=max_nodes),
    )


# -- access ----------------------------------------------------------------------------


def tokens() -> Call[TokenList]:
    """Every access token (names, scopes, namespaces; never secrets)."""
    return Call("GET", f"{V2}/tokens", model(TokenList))


def create_token(
    name: str, *, scopes: Sequence[str], namespaces: Sequence[str] | None = None
) -> Call[CreatedToken]:
    """Create a token; its secret is in the answer, this once."""
    body = params(
        name=name,
        scopes=list(scopes),
        namespaces=list(namespaces) if namespaces is not None else None,
    )
    return Call.json("POST", f"{V2}/tokens", model(CreatedToken), body, idempotent=False)


def revoke_token(name: str) -> Call[TokenList]:
    """Revoke a token; answers every token."""
    return Call("DELETE", f"{V2}/tokens/{segment(name)}", model(TokenList))


def audit(*, since: Time = None, limit: int = 100, offset: int = 0) -> Call[AuditList]:
    """A page of the audit log, newest first."""
    return Call(
        "GET",
        f"{V2}/audit",
        model(AuditList),
        params(since=time_param(since), limit=limit, offset=offset),
    )


def quarantine(*, limit: int = 100, offset: int = 0) -> Call[QuarantineList]:
    """A page of the refused events kept in the quarantine."""
    return Call(
        "GET", f"{V2}/quarantine", model(QuarantineList), params(limit=limit, offset=offset)
    )
