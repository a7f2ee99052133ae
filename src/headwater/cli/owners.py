"""``headwater owners ...``: who owns a dataset or a job, from ``ownership`` facets and
the API, and adding or removing the API's owners."""

from __future__ import annotations

import json
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["owners"]


def _owners_on_db(conn: Any, node: str) -> dict[str, Any]:
    from headwater.graph.model import NodeType
    from headwater.server.routes.reading import parse_node_id
    from headwater.store.reads.classification import owners_of
    from headwater.store.reads.nodes import require_node

    parsed = parse_node_id(node, "nodeId", (NodeType.DATASET, NodeType.JOB))
    require_node(conn, parsed)
    return {"nodeId": str(parsed), "owners": owners_of(conn, [str(parsed)])[str(parsed)]}


@click.group()
def owners() -> None:
    """Owners of datasets and jobs: those of the spec's ``ownership`` facets and those
    set here or through the API (``/api/v2/owners``)."""


@owners.command()
@click.argument("node")
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@target_options
def show(node: str, output: str, url: str, db_url: str | None) -> None:
    """The owners of NODE (dataset:NS:NAME or job:NS:NAME)."""
    answer = Target(url, db_url).get("/api/v2/owners", {"nodeId": node}, _owners_on_db, node)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    for owner in answer["owners"]:
        kind = f" ({owner['type']})" if owner["type"] else ""
        click.echo(f"{owner['name']}{kind}  from {owner['source']}")
    if not answer["owners"]:
        click.echo(f"{answer['nodeId']} has no owner")


@owners.command()
@click.argument("node")
@click.argument("name")
@click.option("--type", "owner_type", default="", metavar="TYPE",
              help="The owner's type (team, user, ...).")
@target_options
def add(node: str, name: str, owner_type: str, url: str, db_url: str | None) -> None:
    """Add owner NAME to NODE."""
    target = Target(url, db_url)
    body = {"nodeId": node, "name": name, "type": owner_type}
    if db_url:
        target.get("", {}, _add_on_db, body)
    else:
        target.send("PUT", "/api/v2/owners", body)
    click.echo(f"{name} owns {node}")


def _add_on_db(conn: Any, body: dict[str, Any]) -> dict[str, Any]:
    from headwater.store import classification as writes

    checked = _owners_on_db(conn, body["nodeId"])
    writes.put_owner(conn.engine, checked["nodeId"], body["name"], body["type"])
    return {}


@owners.command()
@click.argument("node")
@click.argument("name")
@click.option("--type", "owner_type", default="", metavar="TYPE", help="The owner's type.")
@target_options
def remove(node: str, name: str, owner_type: str, url: str, db_url: str | None) -> None:
    """Take owner NAME (set through the API) off NODE."""
    target = Target(url, db_url)
    if db_url:
        from headwater.store import classification as writes

        target.get("", {}, lambda conn: writes.delete_owner(conn.engine, node, name,
                                                            owner_type) or {})
    else:
        target.send("DELETE", "/api/v2/owners",
                    params={"nodeId": node, "name": name, "type": owner_type})
    click.echo(f"{name} no longer owns {node}")
