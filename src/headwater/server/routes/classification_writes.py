"""What users say about classification: tag definitions, propagation blocks, owners.

``/api/v2/tag-definitions`` — which tags propagate (a definition's
``propagates`` flag; tags without one follow the default list: PII, GDPR,
confidential, sensitive, PHI, PCI). ``/api/v2/propagation-blocks`` — stop a
tag (or every tag) on one column edge of a job, or on every edge of a job;
removing one keeps it for earlier times. ``/api/v2/owners`` — owners beside
those of ``ownership`` facets. Every change needs write access.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, field_validator

from headwater.graph.model import NodeId, NodeType
from headwater.server.classification import definitions_answer
from headwater.server.deps import StoreDep, WriteAccess
from headwater.server.handlers import RequestError
from headwater.server.openapi import error_responses
from headwater.server.routes.reading import (
    ScopeDep,
    connection,
    holds_nul,
    node_id_query,
    parse_node_id,
    parse_time,
    read_router,
    time_query,
)
from headwater.store import classification as writes
from headwater.store.reads import classification as reads
from headwater.store.reads.common import aware
from headwater.store.reads.nodes import require_node
from headwater.store.reads.visibility import HiddenNodes

__all__ = ["BlockBody", "add_block", "router"]

router = read_router()
_WRITE: dict[str, Any] = {"tags": ["classification"], "dependencies": [WriteAccess],
                          "responses": error_responses(400, 401, 404, 422)}
_TEXT_MAX = 1_000


def _text(value: str | None, field: str) -> str | None:
    if value is not None and (holds_nul(value) or not value.strip()):
        raise RequestError(f"{field} must be non-empty text without NUL characters",
                           field=f"body.{field}")
    return value


class DefinitionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    propagates: bool = Field(description="Whether the tag travels along column lineage.")
    description: str | None = Field(None, max_length=_TEXT_MAX)


class BlockBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    job: str = Field(description="The job node id (`job:namespace:name`).", max_length=_TEXT_MAX)
    source: str | None = Field(None, max_length=_TEXT_MAX, description=(
        "The edge's upstream column (`datasetField:...`); with `target`, or neither to "
        "block every edge of the job."))
    target: str | None = Field(None, max_length=_TEXT_MAX,
                               description="The edge's downstream column.")
    tag: str | None = Field(None, max_length=_TEXT_MAX,
                            description="The tag to stop; every tag when left out.")
    reason: str | None = Field(None, max_length=_TEXT_MAX)


class OwnerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    nodeId: str = Field(max_length=_TEXT_MAX, description="A dataset or job node id.")
    name: str = Field(min_length=1, max_length=_TEXT_MAX)
    type: str = Field("", max_length=_TEXT_MAX)

    @field_validator("name", "type", "nodeId")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if holds_nul(value):
            raise ValueError("must not contain a NUL character")
        return value


@router.get("/api/v2/tag-definitions", tags=["classification"])
def get_definitions(store: StoreDep) -> dict[str, Any]:
    """Every tag definition, and the default propagating tags none overrides."""
    with connection(store) as conn:
        return definitions_answer(reads.definitions(conn))


@router.put("/api/v2/tag-definitions/{tag}", **_WRITE)
def put_definition(tag: str, body: DefinitionBody, store: StoreDep) -> dict[str, Any]:
    """Say whether ``tag`` propagates."""
    _text(tag, "tag")
    return writes.put_definition(store.engine, tag, body.propagates,
                                 _text(body.description, "description"))


@router.delete("/api/v2/tag-definitions/{tag}", status_code=204, **_WRITE)
def delete_definition(tag: str, store: StoreDep) -> None:
    """Forget ``tag``'s definition: it follows the default list again."""
    writes.delete_definition(store.engine, tag)


def _block(row: reads.BlockRow) -> dict[str, Any]:
    return {"id": row.id, "job": row.job, "source": row.source, "target": row.target,
            "tag": row.tag, "reason": row.reason, "createdAt": aware(row.created_at),
            "removedAt": aware(row.removed_at)}


@router.get("/api/v2/propagation-blocks", responses=error_responses(400),
            tags=["classification"])
def get_blocks(
    store: StoreDep,
    scope: ScopeDep,
    asOf: Annotated[str | None, time_query("The blocks in force at this time.")] = None,  # noqa: N803
    all: Annotated[bool, Query(  # noqa: A002 - the API's name
        description="Every block ever made, removed ones too.")] = False,
) -> dict[str, Any]:
    """The blocks in force (now or at ``asOf``), or all of them."""
    when = parse_time(asOf, "asOf")
    with connection(store) as conn:
        found = reads.blocks(conn, when, include_removed=all, scope=scope)
    return {"blocks": [_block(row) for row in found]}


def _node(conn: Any, value: str, field: str, kinds: tuple[NodeType, ...]) -> NodeId:
    try:
        node = NodeId.parse(value)
    except ValueError as exc:
        raise RequestError(str(exc), field=f"body.{field}") from exc
    if node.type not in kinds or node.version:
        names = " or ".join(kind.prefix for kind in kinds)
        raise RequestError(f"{field} must be a {names} node id", field=f"body.{field}")
    require_node(conn, node)
    return node


@router.post("/api/v2/propagation-blocks", status_code=201, **_WRITE)
def post_block(body: BlockBody, store: StoreDep) -> dict[str, Any]:
    """Block propagation on one edge of a job (``source`` and ``target``) or on all of them."""
    return add_block(store.engine, body)


def add_block(engine: Any, body: BlockBody) -> dict[str, Any]:
    """Check ``body`` against the store and record the block (also the CLI's ``--db``)."""
    if (body.source is None) != (body.target is None):
        missing = "target" if body.target is None else "source"
        raise RequestError("a block names both ends of an edge or neither",
                           field=f"body.{missing}")
    with engine.connect() as conn:
        job = _node(conn, body.job, "job", (NodeType.JOB,))
        ends = [str(_node(conn, value, field, (NodeType.DATASET_FIELD,)))
                if value is not None else None
                for field, value in (("source", body.source), ("target", body.target))]
    block = writes.add_block(engine, str(job), ends[0], ends[1],
                             _text(body.tag, "tag"), _text(body.reason, "reason"))
    return {**block, "createdAt": aware(block["createdAt"])}


@router.delete("/api/v2/propagation-blocks/{block_id}", **_WRITE)
def delete_block(block_id: Annotated[int, Field(ge=1, le=2**31 - 1)],
                 store: StoreDep) -> dict[str, Any]:
    """Remove a block from now on; it stays in force for earlier times."""
    removed: datetime = writes.remove_block(store.engine, block_id)
    return {"id": block_id, "removedAt": aware(removed)}


@router.get("/api/v2/owners", responses=error_responses(400, 404), tags=["classification"])
def get_owners(store: StoreDep, scope: ScopeDep,
               nodeId: Annotated[str, node_id_query(NodeType.DATASET, NodeType.JOB)],  # noqa: N803
               ) -> dict[str, Any]:
    """A dataset's or job's owners: from ``ownership`` facets and the API."""
    node = parse_node_id(nodeId, "nodeId", (NodeType.DATASET, NodeType.JOB))
    with connection(store) as conn:
        require_node(conn, node, HiddenNodes(conn, scope))
        return {"nodeId": str(node), "owners": reads.owners_of(conn, [str(node)])[str(node)]}


@router.put("/api/v2/owners", **_WRITE)
def put_owner(body: OwnerBody, store: StoreDep) -> dict[str, Any]:
    """Add an owner to a dataset or job."""
    with connection(store) as conn:
        node = _node(conn, body.nodeId, "nodeId", (NodeType.DATASET, NodeType.JOB))
    writes.put_owner(store.engine, str(node), body.name, body.type)
    with connection(store) as conn:
        return {"nodeId": str(node), "owners": reads.owners_of(conn, [str(node)])[str(node)]}


@router.delete("/api/v2/owners", status_code=204, **_WRITE)
def delete_owner(
    store: StoreDep,
    nodeId: Annotated[str, node_id_query(NodeType.DATASET, NodeType.JOB)],  # noqa: N803
    name: Annotated[str, Query(min_length=1)],
    type: Annotated[str, Query()] = "",  # noqa: A002 - the API's name
) -> None:
    """Take an owner set through the API off a dataset or job."""
    node = parse_node_id(nodeId, "nodeId", (NodeType.DATASET, NodeType.JOB))
    writes.delete_owner(store.engine, str(node), name, type)
