"""Reads asked by a dataset name as a producer sent it answer with the dataset it became.

With namespace rules (``serve --namespace-rules``) a dataset keeps one name,
and every other name events gave it is an alias (``dataset_aliases``). A
Marquez client that knows only the raw name -- ``GET /api/v1/namespaces/
kafka%3A%2F%2Fb2%3A9092/datasets/orders``, ``GET /api/v1/lineage?nodeId=
dataset:kafka://b2:9092:orders`` -- still gets its answer: :class:`DatasetAliases`,
ASGI middleware in front of the access gate, rewrites such a request to the
dataset's own name before anything else sees it, so the gate checks the
namespace the dataset really lives in.

Rewritten: the ``{namespace}``/``{dataset}`` segments of ``/api/v1/namespaces/
…/datasets/…``, the ``{nodeId}`` segment of ``/api/v2/datasets/{nodeId}/…``, and
a ``nodeId`` query parameter naming a dataset or a dataset field. A name that is
a dataset of its own is never rewritten. With ``[jobs] apply_renames`` in the
rules the store follows, a job asked by a namespace a ``[[rename]]`` renamed
(``/api/v1/namespaces/{namespace}/jobs/{job}…``, a ``job:`` ``nodeId``) is
rewritten to the job it became the same way. A store without aliases costs a
request nothing but a time comparison (whether any exist is re-read every
:data:`REFRESH_SECONDS`).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from headwater.graph.model import NodeId, NodeType

__all__ = ["REFRESH_SECONDS", "DatasetAliases"]

#: How often whether the store holds any alias at all is read again.
REFRESH_SECONDS = 2.0
_DATASET_NODES = (NodeType.DATASET, NodeType.DATASET_FIELD)


class DatasetAliases:
    """ASGI middleware rewriting raw dataset names to the datasets they became."""

    def __init__(self, app: ASGIApp, store: Any) -> None:
        self.app = app
        self.store = store
        self._any = False
        self._job_rules: Any = None  # the rules in force, when they rename job namespaces
        self._read_at: float | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _may_name_dataset(scope) and self._may_have_aliases():
            scope = await run_in_threadpool(self._rewritten, scope)
        await self.app(scope, receive, send)

    def _may_have_aliases(self) -> bool:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= REFRESH_SECONDS:
            from headwater.store import aliases

            self._read_at = now
            try:
                with self.store.engine.connect() as conn:
                    self._any = aliases.any_aliases(conn)
                    rules = aliases.rules_applied(conn)
                    self._job_rules = rules if rules is not None and rules.job_renames else None
            except Exception:  # noqa: BLE001 - the route meets the same database and answers 503
                self._any, self._job_rules = False, None
        return self._any or self._job_rules is not None

    def _rewritten(self, scope: Scope) -> Scope:
        from headwater.store import aliases

        try:
            with self.store.engine.connect() as conn:

                def resolve(namespace: str, name: str) -> tuple[str, str] | None:
                    return aliases.resolve(conn, namespace, name)

                def resolve_job(namespace: str, name: str) -> tuple[str, str] | None:
                    return aliases.resolve_job(conn, self._job_rules, namespace, name)

                raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
                path, query = _path_of(raw_path), scope.get("query_string", b"")
                new_path = _rewrite_path(path, resolve, resolve_job)
                new_query = _rewrite_query(query.decode("latin-1"), resolve, resolve_job)
        except Exception:  # noqa: BLE001 - unanswerable here: the route answers as asked
            return scope
        if new_path is None and new_query is None:
            return scope
        scope = dict(scope)
        if new_path is not None:
            scope["raw_path"] = new_path.encode("latin-1")
            scope["path"] = unquote(new_path)
        if new_query is not None:
            scope["query_string"] = new_query.encode("latin-1")
        return scope


def _may_name_dataset(scope: Scope) -> bool:
    """Whether the request's path or query can hold a dataset name (ingestion never does)."""
    path: str = scope["path"]
    return path.startswith(("/api/v1/namespaces/", "/api/v2/datasets/")) or b"nodeId=" in scope.get(
        "query_string", b""
    )


def _path_of(raw_path: bytes) -> str:
    return raw_path.split(b"?", 1)[0].decode("latin-1")


def _rewrite_path(path: str, resolve: Any, resolve_job: Any) -> str | None:
    parts = path.split("/")
    # ['', 'api', 'v1', 'namespaces', NS, 'datasets' or 'jobs', NAME, ...]
    if (
        len(parts) >= 7
        and parts[1:4] == ["api", "v1", "namespaces"]
        and parts[5] in ("datasets", "jobs")
    ):
        by = resolve if parts[5] == "datasets" else resolve_job
        found = by(unquote(parts[4]), unquote(parts[6]))
        if found is None:
            return None
        parts[4], parts[6] = quote(found[0], safe=""), quote(found[1], safe="")
        return "/".join(parts)
    # ['', 'api', 'v2', 'datasets', NODE_ID, ...]
    if len(parts) >= 5 and parts[1:4] == ["api", "v2", "datasets"] and parts[4]:
        node = _resolved_node(unquote(parts[4]), resolve)
        if node is None:
            return None
        parts[4] = quote(node, safe="")
        return "/".join(parts)
    return None


def _rewrite_query(query: str, resolve: Any, resolve_job: Any) -> str | None:
    if "nodeId=" not in query:
        return None
    pairs = parse_qsl(query, keep_blank_values=True)
    changed = False
    for i, (key, value) in enumerate(pairs):
        if key == "nodeId":
            node = _resolved_node(value, resolve) or _resolved_job(value, resolve_job)
            if node is not None:
                pairs[i] = (key, node)
                changed = True
    return urlencode(pairs) if changed else None


def _resolved_job(text: str, resolve_job: Any) -> str | None:
    try:
        node = NodeId.parse(text)
    except ValueError:
        return None
    if node.type is not NodeType.JOB:
        return None
    found = resolve_job(node.namespace, node.name)
    return str(NodeId(NodeType.JOB, found[0], found[1])) if found is not None else None


def _resolved_node(text: str, resolve: Any) -> str | None:
    try:
        node = NodeId.parse(text)
    except ValueError:
        return None
    if node.type not in _DATASET_NODES:
        return None
    found = resolve(node.namespace, node.name)
    if found is None and node.type is NodeType.DATASET:
        # A raw namespace may hold colons a node id cannot tell from the separator
        # (kafka://SASL_SSL://b1:9092): every other split is an alias to look for.
        rest = text.partition(":")[2]
        if node.version is not None:
            rest = rest.rpartition("#")[0]
        for i, char in enumerate(rest):
            if char == ":" and (rest[:i], rest[i + 1 :]) != (node.namespace, node.name):
                found = resolve(rest[:i], rest[i + 1 :])
                if found is not None:
                    break
    if found is None:
        return None
    renamed = str(NodeId(node.type, found[0], found[1], node.field))
    return f"{renamed}#{node.version}" if node.version is not None else renamed
