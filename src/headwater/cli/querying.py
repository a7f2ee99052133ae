"""Where ``headwater lineage``, ``impact`` and ``search`` send their questions.

Either a running server (``--url``, the default ``http://127.0.0.1:5000``), over its
HTTP API through :mod:`headwater.client` (its operations, retries and errors), or a
database directly (``--db``), through the same code the server runs, so both answer
identically. Errors of either kind become a :class:`click.ClickException`
with the server's message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, TypeVar, cast
from urllib.parse import quote

import click

from headwater.client import DEFAULT_URL, Call, Client, ClientError
from headwater.client.call import raw
from headwater.client.operations import headwater as v2
from headwater.client.operations import marquez as v1

__all__ = [
    "DEFAULT_URL",
    "Target",
    "dataset_path",
    "print_answer",
    "target_options",
    "window_params",
]

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
        help="Bearer token with the read scope, for a server that has tokens. [HEADWATER_TOKEN]",
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


def dataset_path(dataset: str, endpoint: str) -> str:
    """The API path of a per-dataset ``endpoint`` (``readers``, ``quality`` ...), with the
    dataset's node id percent-encoded as one path segment."""
    return f"/api/v2/datasets/{quote(dataset, safe='')}/{endpoint}"


def window_params(since: str | None, until: str | None) -> dict[str, str]:
    """``--since`` and ``--until`` as query parameters; one left out is not sent, so the
    server applies its own default."""
    return {name: value for name, value in (("since", since), ("until", until)) if value}


def print_answer(
    answer: dict[str, Any], output: str, table: Callable[[dict[str, Any]], None]
) -> None:
    """``answer`` as the server's JSON (``--format json``) or drawn by ``table``."""
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    else:
        table(answer)


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
        walk = cast(Literal["upstream", "downstream", "both"], direction)
        return self._remote(
            v2.lineage(node_id, direction=walk, depth=depth, as_of=as_of, max_nodes=max_nodes)
        )

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
            return self._on_db(_impact, node_id, depth, as_of, edges, namespaces, jobs, max_nodes)
        which = cast(Literal["direct", "indirect", "all"], edges)
        return self._remote(
            v2.impact(
                node_id,
                depth=depth,
                as_of=as_of,
                edges=which,
                namespaces=namespaces,
                jobs=jobs,
                max_nodes=max_nodes,
            )
        )

    def search(self, text: str, kind: str | None, limit: int) -> dict[str, Any]:
        """The ``/api/v1/search`` answer for these parameters."""
        if self.db_url:
            return self._on_db(_search, text, kind, limit)
        only = cast(Literal["dataset", "job"] | None, kind)
        return self._remote(v1.search(text, filter=only, limit=limit))

    def drift(
        self,
        dataset: str | None,
        since: str | None,
        breaking: bool,
        limit: int,
        kind: str | None = None,
        impact: tuple[bool, int, int] = (True, 10, 1_000),
    ) -> dict[str, Any]:
        """The ``/api/v2/drift`` answer for these parameters; ``impact`` is (whether to
        walk each drift's impact, its depth, its maxNodes)."""
        if self.db_url:
            return self._on_db(_drift, dataset, since, breaking, limit, kind, impact)
        walk, depth, max_nodes = impact
        return self._remote(
            v2.drift(
                dataset=dataset,
                since=since,
                breaking=True if breaking else None,
                kind=kind,
                limit=limit,
                impact=walk,
                impact_depth=depth,
                max_nodes=max_nodes,
            )
        )

    def get(
        self, path: str, params: dict[str, Any], on_db: Callable[..., dict[str, Any]], *args: Any
    ) -> dict[str, Any]:
        """``path``'s answer from the server, or ``on_db(conn, *args)``'s with ``--db``."""
        if self.db_url:
            return self._on_db(on_db, *args)
        return self._remote(Call("GET", path, raw, params))

    def send(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A write through the server's API; its JSON answer (empty for 204)."""
        if body is None:
            return self._remote(Call(method, path, raw, params or {}))
        call = Call.json(method, path, raw, body)
        return self._remote(replace(call, params=params or {}))

    def _remote(self, call: Call[Any]) -> dict[str, Any]:
        """``call``'s answer as the server sent it, through :mod:`headwater.client`.

        Sent with the raw reader, so ``--format json`` prints the server's own JSON;
        a text answer (CSV) comes back as ``{"text": ...}``, a 204 as ``{}``.
        """
        context = click.get_current_context(silent=True)
        token = context.meta.get(_TOKEN_KEY) if context is not None else None
        try:
            with Client(self.url, token=token, timeout=60.0) as client:
                answer = client.send(replace(call, read=raw))
        except ClientError as exc:
            raise click.ClickException(str(exc)) from exc
        if answer is None:
            return {}
        if isinstance(answer, str):
            return {"text": answer}
        body: dict[str, Any] = answer
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
    from headwater.server.lineage_responses import V2Graph
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


def _drift(
    conn: Any,
    dataset: str | None,
    since: str | None,
    breaking: bool,
    limit: int,
    kind: Any = None,
    impact: tuple[bool, int, int] = (True, 10, 1_000),
) -> dict[str, Any]:
    from headwater.server.routes.drift import DriftImpactQuery, DriftList, drift_answer

    walk, depth, max_nodes = impact
    query = DriftImpactQuery(impact=walk, depth=depth, max_nodes=max_nodes)
    answer = drift_answer(
        conn, since, None, dataset, True if breaking else None, limit, 0, kind=kind, query=query
    )
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = DriftList.model_validate(answer).model_dump(mode="json")
    return body
