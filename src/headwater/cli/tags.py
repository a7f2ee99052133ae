"""``headwater tags ...``: a dataset's or column's tags and propagated tags, which
tags propagate, and where propagation is blocked.

Reads and writes go to a server (``--url``) or straight to a database (``--db``),
through the same code the API runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["tags"]

_AS_OF = click.option("--as-of", metavar="TIME",
                      help="Answer as of this ISO-8601 time (UTC when no offset). [now]")
_FORMAT = click.option("--format", "output", type=click.Choice(["table", "json"]),
                       default="table", show_default=True)


def _console() -> Any:
    from rich.console import Console

    return Console(soft_wrap=True)


def _json_ready(answer: dict[str, Any]) -> dict[str, Any]:
    from fastapi.encoders import jsonable_encoder

    # The encoder the API's answers go through, so --db prints what a server sends.
    encoded: dict[str, Any] = jsonable_encoder(answer)
    return encoded


def _on_db(call: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def run(conn: Any, *args: Any) -> dict[str, Any]:
        return _json_ready(call(conn, *args))
    return run


def _classification(conn: Any, node: str, as_of: str | None) -> dict[str, Any]:
    from headwater.server.routes.classification import MAX_NODES, classification_answer

    return classification_answer(conn, node, as_of, MAX_NODES)


def _badges(conn: Any, as_of: str | None) -> dict[str, Any]:
    from headwater.server.classification import classify, datasets_answer
    from headwater.server.routes.classification import MAX_NODES
    from headwater.server.routes.reading import parse_time

    return datasets_answer(classify(conn, parse_time(as_of, "as-of"), MAX_NODES))


def _definitions(conn: Any) -> dict[str, Any]:
    from headwater.server.classification import definitions_answer
    from headwater.store.reads.classification import definitions

    return definitions_answer(definitions(conn))


def _blocks(conn: Any, as_of: str | None, everything: bool) -> dict[str, Any]:
    from headwater.server.routes.reading import parse_time
    from headwater.store.reads.classification import blocks

    rows = blocks(conn, parse_time(as_of, "as-of"), include_removed=everything)
    return {"blocks": [{"id": b.id, "job": b.job, "source": b.source, "target": b.target,
                        "tag": b.tag, "reason": b.reason, "createdAt": b.created_at,
                        "removedAt": b.removed_at} for b in rows]}


@click.group()
def tags() -> None:
    """Tags on datasets and columns, and the ones that propagate along column lineage.

    A tag whose definition says it propagates (PII, GDPR, confidential, sensitive,
    PHI and PCI do unless a definition says otherwise) travels from the column or
    dataset it is on to every column downstream that copies its values, and stops
    at masking transformations (hashes, counts) and at blocks users set.
    """


@tags.command()
@click.argument("node")
@_AS_OF
@_FORMAT
@target_options
def show(node: str, as_of: str | None, output: str, url: str, db_url: str | None) -> None:
    """Tags of a dataset's columns or of one column (NODE: dataset:NS:NAME or
    datasetField:NS:NAME:FIELD): direct, propagated with where from, and stopped."""
    params = {"nodeId": node, **({"asOf": as_of} if as_of else {})}
    answer = Target(url, db_url).get("/api/v2/classification", params,
                                     _on_db(_classification), node, as_of)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    from rich.table import Table

    table = Table("column", "tags", "propagated", "stopped",
                  title=f"tags of {answer['nodeId']}" + (f" as of {as_of}" if as_of else ""))
    for column in answer["columns"]:
        table.add_row(column["field"], ", ".join(column["tags"]),
                      "\n".join(item["explanation"] for item in column["propagated"]),
                      "\n".join(f"{s['tag']}: {s['reason']} at {s['edge']['job']}"
                                + (f" (block {s['block']})" if s["block"] else "")
                                for s in column["stopped"]))
    _console().print(table)


@tags.command()
@_AS_OF
@_FORMAT
@target_options
def datasets(as_of: str | None, output: str, url: str, db_url: str | None) -> None:
    """Every dataset with a tag or a propagated tag."""
    params = {"asOf": as_of} if as_of else {}
    answer = Target(url, db_url).get("/api/v2/classification/datasets", params,
                                     _on_db(_badges), as_of)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    from rich.table import Table

    table = Table("dataset", "tags", "propagated tags", title="tagged datasets")
    for item in answer["datasets"]:
        table.add_row(item["nodeId"], ", ".join(item["tags"]), ", ".join(item["propagatedTags"]))
    _console().print(table)


@tags.command()
@_FORMAT
@target_options
def definitions(output: str, url: str, db_url: str | None) -> None:
    """Which tags propagate: users' definitions and the default list."""
    answer = Target(url, db_url).get("/api/v2/tag-definitions", {}, _on_db(_definitions))
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    from rich.table import Table

    table = Table("tag", "propagates", "from", "description", title="tag definitions")
    for item in answer["definitions"]:
        table.add_row(item["name"], "yes" if item["propagates"] else "no",
                      "default" if item["default"] else "definition", item["description"] or "")
    _console().print(table)


@tags.command()
@click.argument("tag")
@click.option("--propagates/--no-propagates", required=True,
              help="Whether TAG travels along column lineage.")
@click.option("--description", metavar="TEXT", help="What the tag means.")
@target_options
def define(tag: str, propagates: bool, description: str | None, url: str,
           db_url: str | None) -> None:
    """Say whether TAG propagates."""
    target = Target(url, db_url)
    if db_url:
        from headwater.store import classification as writes

        target.get("", {}, lambda conn: writes.put_definition(conn.engine, tag, propagates,
                                                              description))
    else:
        target.send("PUT", f"/api/v2/tag-definitions/{_quoted(tag)}",
                    {"propagates": propagates, "description": description})
    click.echo(f"{tag} {'propagates' if propagates else 'does not propagate'}")


@tags.command()
@click.argument("tag")
@target_options
def undefine(tag: str, url: str, db_url: str | None) -> None:
    """Forget TAG's definition: it follows the default list again."""
    target = Target(url, db_url)
    if db_url:
        from headwater.store import classification as writes

        target.get("", {}, lambda conn: writes.delete_definition(conn.engine, tag) or {})
    else:
        target.send("DELETE", f"/api/v2/tag-definitions/{_quoted(tag)}")
    click.echo(f"{tag} follows the default list")


@tags.command()
@click.option("--job", required=True, metavar="JOB", help="The job: job:NS:NAME.")
@click.option("--source", metavar="COLUMN",
              help="The edge's upstream column (datasetField:...); with --target.")
@click.option("--target", "target_column", metavar="COLUMN",
              help="The edge's downstream column; without both, every edge of the job.")
@click.option("--tag", metavar="TAG", help="The tag to stop. [every tag]")
@click.option("--reason", metavar="TEXT", help="Why (kept with the block).")
@target_options
def block(job: str, source: str | None, target_column: str | None, tag: str | None,
          reason: str | None, url: str, db_url: str | None) -> None:
    """Stop propagation on one column edge of a job, or on all of its edges."""
    body = {"job": job, "source": source, "target": target_column, "tag": tag,
            "reason": reason}
    target = Target(url, db_url)
    if db_url:
        answer = target.get("", {}, _on_db(_add_block), body)
    else:
        answer = target.send("POST", "/api/v2/propagation-blocks", body)
    click.echo(f"block {answer['id']} in force from {answer['createdAt']}")


def _add_block(conn: Any, body: dict[str, Any]) -> dict[str, Any]:
    from pydantic import ValidationError

    from headwater.server.routes.classification_writes import BlockBody, add_block

    try:
        checked = BlockBody.model_validate(body)
    except ValidationError as exc:
        raise click.UsageError(str(exc)) from exc
    return add_block(conn.engine, checked)


@tags.command()
@click.argument("block_id", type=click.IntRange(1, 2**31 - 1))
@target_options
def unblock(block_id: int, url: str, db_url: str | None) -> None:
    """Remove block BLOCK_ID from now on (it still applies to earlier times)."""
    target = Target(url, db_url)
    if db_url:
        from headwater.store import classification as writes

        target.get("", {}, lambda conn: {"removedAt": writes.remove_block(conn.engine, block_id)})
    else:
        target.send("DELETE", f"/api/v2/propagation-blocks/{block_id}")
    click.echo(f"block {block_id} removed")


@tags.command()
@_AS_OF
@click.option("--all", "everything", is_flag=True, help="Removed blocks too.")
@_FORMAT
@target_options
def blocks(as_of: str | None, everything: bool, output: str, url: str,
           db_url: str | None) -> None:
    """The blocks in force (now or --as-of), or every one with --all."""
    params: dict[str, Any] = {**({"asOf": as_of} if as_of else {}),
                              **({"all": "true"} if everything else {})}
    answer = Target(url, db_url).get("/api/v2/propagation-blocks", params, _on_db(_blocks),
                                     as_of, everything)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    from rich.table import Table

    table = Table("id", "job", "edge", "tag", "reason", "from", "until", title="blocks")
    for item in answer["blocks"]:
        edge = f"{item['source']} -> {item['target']}" if item["source"] else "every edge"
        table.add_row(str(item["id"]), item["job"], edge, item["tag"] or "every tag",
                      item["reason"] or "", str(item["createdAt"]), str(item["removedAt"] or ""))
    _console().print(table)


def _quoted(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
