"""headwater's own operations: ingestion, health and ``/api/v2`` (directed lineage,
impact, drift, classification, owners, tokens, audit, quarantine), each a
function that builds a :class:`Call`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from headwater.client.call import Call, model, nothing, params, segment, text, time_param
from headwater.client.models import (
    AuditList,
    BatchResult,
    Block,
    BlockList,
    BlockRemoved,
    Classification,
    Compliance,
    CreatedToken,
    DatasetBadgesList,
    DirectedLineage,
    DriftList,
    Health,
    Impact,
    IngestResult,
    Owners,
    ProducerList,
    QuarantineList,
    TagDefinition,
    TagDefinitionList,
    TokenList,
)

__all__ = [
    "add_block",
    "add_owner",
    "audit",
    "classification",
    "compliance",
    "compliance_csv",
    "create_token",
    "dataset_badges",
    "delete_tag_definition",
    "downstream",
    "drift",
    "health",
    "impact",
    "impact_csv",
    "ingest",
    "ingest_batch",
    "lineage",
    "metrics",
    "owners",
    "producers",
    "put_tag_definition",
    "quarantine",
    "remove_block",
    "remove_owner",
    "revoke_token",
    "tag_definitions",
    "tokens",
    "upstream",
    "blocks",
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


def producers() -> Call[ProducerList]:
    """Every producer per job namespace: events stored and refused, last arrival."""
    return Call("GET", f"{V2}/producers", model(ProducerList))


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
    limit: int = 100,
    offset: int = 0,
) -> Call[DriftList]:
    """A page of schema changes between dataset versions, newest first.

    ``dataset`` is a ``dataset:NS:NAME`` node id; ``breaking`` keeps only breaking
    (True) or only compatible (False) changes.
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
            limit=limit,
            offset=offset,
        ),
    )


# -- classification and ownership ------------------------------------------------------


def classification(
    node_id: str, *, as_of: Time = None, max_nodes: int = 100_000
) -> Call[Classification]:
    """A dataset's or column's tags, those propagated to it and where they stopped."""
    return Call(
        "GET",
        f"{V2}/classification",
        model(Classification),
        params(nodeId=node_id, asOf=time_param(as_of), maxNodes=max_nodes),
    )


def dataset_badges(*, as_of: Time = None, max_nodes: int = 100_000) -> Call[DatasetBadgesList]:
    """Every dataset and column that carries a tag, its own or propagated."""
    return Call(
        "GET",
        f"{V2}/classification/datasets",
        model(DatasetBadgesList),
        params(asOf=time_param(as_of), maxNodes=max_nodes),
    )


def compliance(
    *,
    tag: str | None = None,
    node_id: str | None = None,
    as_of: Time = None,
    max_nodes: int = 100_000,
) -> Call[Compliance]:
    """Where tagged data flows and stops, and who owns the datasets and jobs on the way."""
    return Call(
        "GET",
        f"{V2}/compliance",
        model(Compliance),
        params(tag=tag, nodeId=node_id, asOf=time_param(as_of), maxNodes=max_nodes),
    )


def compliance_csv(
    *,
    tag: str | None = None,
    node_id: str | None = None,
    as_of: Time = None,
    max_nodes: int = 100_000,
) -> Call[str]:
    """:meth:`compliance` as CSV text, one row per flow or stop."""
    return Call(
        "GET",
        f"{V2}/compliance",
        text,
        params(tag=tag, nodeId=node_id, asOf=time_param(as_of), maxNodes=max_nodes, format="csv"),
    )


def tag_definitions() -> Call[TagDefinitionList]:
    """Every tag definition: whether each tag propagates along column lineage."""
    return Call("GET", f"{V2}/tag-definitions", model(TagDefinitionList))


def put_tag_definition(
    tag: str, *, propagates: bool, description: str | None = None
) -> Call[TagDefinition]:
    """Define whether ``tag`` propagates."""
    return Call.json(
        "PUT",
        f"{V2}/tag-definitions/{segment(tag)}",
        model(TagDefinition),
        params(propagates=propagates, description=description),
    )


def delete_tag_definition(tag: str) -> Call[None]:
    """Take a tag's definition away (its default applies again)."""
    return Call("DELETE", f"{V2}/tag-definitions/{segment(tag)}", nothing)


def blocks(*, as_of: Time = None, all: bool = False) -> Call[BlockList]:
    """The propagation blocks in force (``all``: removed ones too)."""
    return Call(
        "GET", f"{V2}/propagation-blocks", model(BlockList), params(asOf=time_param(as_of), all=all)
    )


def add_block(
    job: str,
    *,
    source: str | None = None,
    target: str | None = None,
    tag: str | None = None,
    reason: str | None = None,
) -> Call[Block]:
    """Stop tags at ``job`` (a ``job:NS:NAME`` id), optionally one edge or one tag only."""
    return Call.json(
        "POST",
        f"{V2}/propagation-blocks",
        model(Block),
        params(job=job, source=source, target=target, tag=tag, reason=reason),
        idempotent=False,
    )


def remove_block(block_id: int) -> Call[BlockRemoved]:
    """Lift a propagation block."""
    return Call("DELETE", f"{V2}/propagation-blocks/{block_id}", model(BlockRemoved))


def owners(node_id: str) -> Call[Owners]:
    """A dataset's or job's owners, from ownership facets and the API."""
    return Call("GET", f"{V2}/owners", model(Owners), params(nodeId=node_id))


def add_owner(
    node_id: str,
    name: str,
    *,
    type: str | None = None,
) -> Call[Owners]:
    """Add an owner to a dataset or job; answers all its owners."""
    return Call.json(
        "PUT", f"{V2}/owners", model(Owners), params(nodeId=node_id, name=name, type=type)
    )


def remove_owner(
    node_id: str,
    name: str,
    *,
    type: str | None = None,
) -> Call[None]:
    """Take an owner set through the API off a dataset or job."""
    return Call("DELETE", f"{V2}/owners", nothing, params(nodeId=node_id, name=name, type=type))


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
