"""``headwater root-cause DATASET``: what changed upstream of a dataset in a time window."""

from __future__ import annotations

from typing import Any

import click

from headwater.cli.querying import (
    Target,
    dataset_path,
    print_answer,
    target_options,
    window_params,
)

__all__ = ["root_cause"]


def _short(node_id: str) -> str:
    """A node id's name alone, for the path column (the JSON form keeps the ids)."""
    from headwater.graph.model import NodeId

    try:
        return NodeId.parse(node_id).name
    except ValueError:
        return node_id


def _what(cause: dict[str, Any]) -> str:
    detail = cause["detail"]
    if cause["kind"] == "failedRun":
        return f"run {detail['runId']}"
    if cause["kind"] == "qualityFailure":
        failed = [
            f"{a['assertion']}({a['column']})" if a.get("column") else str(a["assertion"])
            for a in detail["failed"]
        ]
        return "failed: " + ", ".join(failed)
    changes = ", ".join(
        f"{c['kind']} {c['path']}" + (f" {c['old']}->{c['new']}" if c.get("old") else "")
        for c in detail["changes"]
    )
    consumer = f" (declared by {_short(cause['consumer'])})" if cause["consumer"] else ""
    return ("BREAKING " if detail["breaking"] else "") + changes + consumer


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        "time",
        "kind",
        "subject",
        "what",
        "depth",
        "path",
        title=f"what changed upstream of {answer['datasetId']} "
        f"({answer['since']} to {answer['until']})",
    )
    for cause in answer["causes"]:
        table.add_row(
            cause["time"],
            cause["kind"],
            cause["subject"],
            _what(cause),
            str(cause["depth"]),
            " > ".join(_short(n) for n in cause["path"]),
        )
    console = Console(soft_wrap=True)
    console.print(table)
    cut = " (truncated)" if answer["truncated"] else ""
    console.print(
        f"{len(answer['causes'])} of {answer['totalCount']} causes; walked "
        f"{answer['upstreamDatasets']} datasets and {answer['upstreamJobs']} jobs{cut}"
    )


@click.command("root-cause")
@click.argument("dataset")
@click.option(
    "--since", metavar="TIME", help="From this ISO-8601 time [default: 7 days before --until]."
)
@click.option("--until", metavar="TIME", help="Before this ISO-8601 time [default: now].")
@click.option(
    "--depth",
    type=click.IntRange(0, 100),
    default=10,
    show_default=True,
    help="Jobs to cross upstream.",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(1, 100_000),
    default=1_000,
    show_default=True,
    help="Stop the upstream walk after this many nodes.",
)
@click.option(
    "--limit",
    type=click.IntRange(0, 10_000),
    default=100,
    show_default=True,
    help="How many causes, oldest first.",
)
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@target_options
def root_cause(
    dataset: str,
    since: str | None,
    until: str | None,
    depth: int,
    max_nodes: int,
    limit: int,
    output: str,
    url: str,
    db_url: str | None,
) -> None:
    """Show what changed upstream of DATASET (dataset:NAMESPACE:NAME): the schema drifts
    (version and contract), failed runs and quality failures of the datasets and jobs
    it is derived from, oldest first, each with its path to DATASET."""
    params: dict[str, Any] = {"depth": depth, "maxNodes": max_nodes, "limit": limit}
    params.update(window_params(since, until))
    answer = Target(url, db_url).get(
        dataset_path(dataset, "root-cause"),
        params,
        _on_db,
        dataset,
        since,
        until,
        depth,
        max_nodes,
        limit,
    )
    print_answer(answer, output, _print_table)


def _on_db(
    conn: Any,
    dataset: str,
    since: str | None,
    until: str | None,
    depth: int,
    max_nodes: int,
    limit: int,
) -> dict[str, Any]:
    from headwater.server.routes.root_cause import RootCause, root_cause_answer

    answer = root_cause_answer(conn, dataset, since, until, depth, max_nodes, limit)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = RootCause.model_validate(answer).model_dump(mode="json")
    return body
