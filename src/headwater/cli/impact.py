"""``headwater impact NODE_ID``: what a change to a dataset or a column breaks downstream."""

from __future__ import annotations

import json
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["impact", "path_text"]


def path_text(node: dict[str, Any]) -> str:
    """The path with the kind of each edge after the job it goes through:
    ``a > job [indirect:FILTER] > b``."""
    kinds = iter(node["pathEdges"])
    parts = []
    for node_id in node["path"]:
        parts.append(node_id)
        if node_id.startswith("job:"):
            parts.append(f"[{next(kinds, '?')}]")
    return " > ".join(parts).replace(" > [", " [")


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    title = f"impact of {escape(answer['start'])}"
    title += f" (depth {answer['depth']}, edges {answer['edges']})"
    if answer.get("asOf"):
        title += f" as of {answer['asOf']}"
    table = Table("node", "type", "depth", "impact", "path", title=title)
    for node in answer["nodes"]:
        # escape: a path's "-[job, kind]->" would otherwise be read as console markup.
        cells = (node["id"], node["type"], str(node["depth"]), node["impact"], path_text(node))
        table.add_row(*(escape(cell) for cell in cells))
    console = Console(soft_wrap=True)
    console.print(table)
    s = answer["summary"]
    console.print(
        f"{s['datasets']} datasets, {s['columns']} columns, {s['jobs']} jobs: "
        f"{s['direct']} direct, {s['indirect']} indirect"
    )
    if answer["truncated"]:
        console.print(f"[yellow]cut at {answer['maxNodes']} nodes (raise --max-nodes)[/yellow]")


@click.command()
@click.argument("node_id")
@click.option("--depth", type=click.IntRange(0, 100), default=10, show_default=True,
              help="How many jobs to cross.")
@click.option("--as-of", metavar="TIME", help="Impact as lineage stood at this ISO-8601 time.")
@click.option("--edges", type=click.Choice(["all", "direct", "indirect"]), default="all",
              show_default=True,
              help="Follow DIRECT column edges, INDIRECT ones (join, filter, group by, "
              "sort, window, conditional columns), or both.")
@click.option("--namespace", "namespaces", multiple=True, metavar="NAMESPACE",
              help="Follow edges into this namespace only (repeatable).")
@click.option("--job", "jobs", multiple=True, metavar="JOB_ID",
              help="Follow edges through this job (job:NAMESPACE:NAME) only (repeatable).")
@click.option("--max-nodes", type=click.IntRange(1, 100_000), default=1_000, show_default=True,
              help="Stop admitting impacted nodes past this many.")
@click.option("--format", "output", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True)
@target_options
def impact(
    node_id: str,
    depth: int,
    as_of: str | None,
    edges: str,
    namespaces: tuple[str, ...],
    jobs: tuple[str, ...],
    max_nodes: int,
    output: str,
    url: str,
    db_url: str | None,
) -> None:
    """Show what a change to NODE_ID breaks downstream.

    NODE_ID is dataset:NAMESPACE:NAME or datasetField:NAMESPACE:NAME:FIELD. Every
    impacted dataset, column and job is listed with its depth (jobs crossed), whether
    it is reached directly (through DIRECT column edges: its values come from NODE_ID)
    or only indirectly (a JOIN, FILTER, GROUP BY, SORT, WINDOW or CONDITIONAL column
    on the way), and one shortest path from NODE_ID. From a dataset, the outputs of
    jobs that report no column lineage are found through table lineage.

    --format json prints the GET /api/v2/impact answer; --format csv one row per
    impacted node (id, type, depth, impact, path, pathEdges).
    """
    from headwater.graph.impact import to_csv

    answer = Target(url, db_url).impact(
        node_id, depth, as_of, edges, namespaces, jobs, max_nodes
    )
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    elif output == "csv":
        click.echo(to_csv(answer), nl=False)
    else:
        _print_table(answer)
