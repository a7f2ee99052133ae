"""Where ``headwater lineage``, ``impact`` and ``search`` send their questions.

Either a running server (``--url``, the default ``http://127.0.0.1:5000``), over its
HTTP API, or a database directly (``--db``), through the same code the server runs,
so both answer identically. Errors of either kind become a :class:`click.ClickException`
with the server's message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, TypeVar, cast

import click
import httpx

__all__ = ["DEFAULT_URL", "Target", "target_options"]

DEFAULT_URL = "http://127.0.0.1:5000"

F = TypeVar("F", bound=Callable[..., Any])


def target_options(command: F) -> F:
    """Add ``--url`` and ``--db`` to a query command."""
    command = click.option(
        "--db",
        "db_url",
        metavar="URL",
        envvar="HEADWATER_DB_URL",
        help="Query this database directly instead of a server. [HEADWATER_DB_URL]",
    )(command)
    command = click.option(
        "--token",
        metavar="SECRET",
        envvar="HEADWATER_TOKEN",
        expose_value=False,
        callback=_remember_token,
        help="Bearer token with the read scope, for a server that has tokens. "
        "[HEADWATER_TOKEN]",
    )(command)
    command = click.option(
        "--url",
        metavar="URL",
        envvar="HEADWATER_URL",
        default=DEFAULT_URL,
        show_default=True,
        help="The headwater server to ask. [HEADWATER_URL]",
    )(command)
    return command


_TOKEN_KEY = "headwater.token"


def _remember_token(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # Kept on the context rather than passed as an argument, so every query command
    # takes it without naming it in its signature.
    ctx.meta[_TOKEN_KEY] = value


class Target:
    """A server or a database to query."""

    def __init__(self, url: str, db_url: str | None) -> None:
        self.url = url.rstrip("/")
        self.db_url = db_url

    def lineage(
        self, node_id: str, direction: str, depth: int, as_of: str | None, max_nodes: int
    ) -> dict[str, Any]:
        """The ``/api/v2/lineage`` answer for these parameters."""
        if self.db_url:
            return self._on_db(_directed, node_id, direction, depth, as_of, max_nodes)
        params: dict[str, Any] = {
            "nodeId": node_id,
            "direction": direction,
            "depth": depth,
            "maxNodes": max_nodes,
        }
        if as_of:
            params["asOf"] = as_of
        return self._get("/api/v2/lineage", params)

    def impact(
        self,
        node_id: str,
        depth: int,
        as_of: str | None,
        edges: str,
        namespaces: tuple[str, ...],
        jobs: tuple[str, ...],
        max_nodes: int,
    ) -> dict[str, Any]:
        """The ``/api/v2/impact`` JSON answer for these parameters."""
        if self.db_url:
            return self._on_db(
                _impact, node_id, depth, as_of, edges, namespaces, jobs, max_nodes
            )
        params: dict[str, Any] = {
            "nodeId": node_id,
            "depth": depth,
            "edges": edges,
            "maxNodes": max_nodes,
            "namespace": list(namespaces),
            "job": list(jobs),
        }
        if as_of:
            params["asOf"] = as_of
        return self._get("/api/v2/impact", params)

    def search(self, text: str, kind: str | None, limit: int) -> dict[str, Any]:
        """The ``/api/v1/search`` answer for these parameters."""
        if self.db_url:
            return self._on_db(_search, text, kind, limit)
        params: dict[str, Any] = {"q": text, "limit": limit}
        if kind:
            params["filter"] = kind
        return self._get("/api/v1/search", params)

    def drift(self, dataset: str | None, since: str | None, breaking: bool,
              limit: int) -> dict[str, Any]:
        """The ``/api/v2/drift`` answer for these parameters."""
        if self.db_url:
            return self._on_db(_drift, dataset, since, breaking, limit)
        params: dict[str, Any] = {"limit": limit}
        if dataset:
            params["dataset"] = dataset
        if since:
            params["since"] = since
        if breaking:
            params["breaking"] = "true"
        return self._get("/api/v2/drift", params)

    def get(self, path: str, params: dict[str, Any],
            on_db: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        """``path``'s answer from the server, or ``on_db(conn, *args)``'s with ``--db``."""
        if self.db_url:
            return self._on_db(on_db, *args)
        return self._get(path, params)

    def send(self, method: str, path: str, body: Any = None,
             params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A write through the server's API; its JSON answer (empty for 204)."""
        return self._get(path, params or {}, method=method, body=body)

    def _get(self, path: str, params: dict[str, Any], *, method: str = "GET",
             body: Any = None) -> dict[str, Any]:
        try:
            context = click.get_current_context(silent=True)
            token = context.meta.get(_TOKEN_KEY) if context is not None else None
            auth = {"headers": {"Authorization": f"Bearer {token}"}} if token else {}
            if method == "GET":
                response = httpx.get(f"{self.url}{path}", params=params, timeout=60, **auth)
            else:
                response = httpx.request(method, f"{self.url}{path}", params=params, json=body,
                                         timeout=60, **auth)
        except httpx.HTTPError as exc:
            raise click.ClickException(f"cannot reach {self.url}: {exc}") from exc
        if response.status_code >= 400:
            try:
                message = response.json().get("error", response.text)
            except ValueError:
                message = response.text
            raise click.ClickException(f"{message} (HTTP {response.status_code})")
        if response.status_code == 204:
            return {}
        if response.headers.get("content-type", "").startswith("text/"):
            return {"text": response.text}
        body: dict[str, Any] = response.json()
        return body

    def _on_db(self, query: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        from headwater.errors import HeadwaterError
        from headwater.store import Store

        try:
            store = Store.open(self.db_url or "", migrate=False)
        except HeadwaterError as exc:
            raise click.ClickException(str(exc)) from exc
        try:
            with store.engine.connect() as conn:
                return query(conn, *args)
        except HeadwaterError as exc:
            raise click.ClickException(str(exc)) from exc
        finally:
            store.close()


def _directed(
    conn: Any, node_id: str, direction: str, depth: int, as_of: str | None, max_nodes: int
) -> dict[str, Any]:
    from headwater.server.responses import V2Graph
    from headwater.server.routes.graph_v2 import directed_lineage
    from headwater.server.routes.reading import parse_time

    when: datetime | None = parse_time(as_of, "as-of")
    walk = cast(Literal["upstream", "downstream", "both"], direction)
    answer = directed_lineage(conn, node_id, walk, depth, when, max_nodes)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = V2Graph.model_validate(answer).model_dump(mode="json")
    return body


def _impact(
    conn: Any,
    node_id: str,
    depth: int,
    as_of: str | None,
    edges: str,
    namespaces: tuple[str, ...],
    jobs: tuple[str, ...],
    max_nodes: int,
) -> dict[str, Any]:
    from headwater.server.routes.impact import ImpactResponse, impact_answer, impact_filter
    from headwater.server.routes.reading import parse_time

    when: datetime | None = parse_time(as_of, "as-of")
    filters = impact_filter(edges, namespaces, jobs, "--job")
    answer = impact_answer(conn, node_id, depth, when, filters, max_nodes)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = ImpactResponse.model_validate(answer).model_dump(mode="json")
    return body


def _search(conn: Any, text: str, kind: str | None, limit: int) -> dict[str, Any]:
    from headwater.store.reads.search import search

    only = cast(Literal["dataset", "job"] | None, kind)
    results, total = search(conn, text, only, "name", limit)
    for result in results:
        result["updatedAt"] = result["updatedAt"].isoformat() if result["updatedAt"] else None
    return {"totalCount": total, "results": results}


def _drift(conn: Any, dataset: str | None, since: str | None, breaking: bool,
           limit: int) -> dict[str, Any]:
    from headwater.server.routes.drift import DriftList, drift_answer

    answer = drift_answer(conn, since, None, dataset, True if breaking else None, limit, 0)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = DriftList.model_validate(answer).model_dump(mode="json")
    return body
