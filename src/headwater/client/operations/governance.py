"""headwater's governance operations of ``/api/v2``: classification and where tags
propagate, compliance reports, tag definitions, propagation blocks and owners,
each a function that builds a :class:`Call`."""

from __future__ import annotations

from datetime import datetime

from headwater.client.call import Call, model, nothing, params, segment, text, time_param
from headwater.client.models import (
    Block,
    BlockList,
    BlockRemoved,
    Classification,
    Compliance,
    DatasetBadgesList,
    Owners,
    TagDefinition,
    TagDefinitionList,
)

__all__ = [
    "add_block",
    "add_owner",
    "blocks",
    "classification",
    "compliance",
    "compliance_csv",
    "dataset_badges",
    "delete_tag_definition",
    "owners",
    "put_tag_definition",
    "remove_block",
    "remove_owner",
    "tag_definitions",
]

V2 = "/api/v2"
Time = datetime | str | None


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
