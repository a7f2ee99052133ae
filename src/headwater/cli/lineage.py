"""``headwater lineage NODE_ID``: the directed lineage of a dataset, job, run or column."""

from __future__ import annotations

import json
from typing import Any

import click

from headwater.cli.lineage_diff import LineageCommand
from headwater.cli.querying import Target, target_options

__all__ = ["lineage", "to_dot", "to_table_rows"]


def to_table_rows(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    """One (upstream, downstream, how) row per edge; ``how`` names the job and transformations."""
    rows = []
    for edge in answer["edges"]:
        how = []
        if edge.get("via"):
            how.append(f"via {edge['via']}")
        kinds = [t.get("subtype") or t.get("type") for t in edge.get("transformations", [])]
        if kinds:
            how.append("/".join(k for k in kinds if k))
        rows.append((edge["upstream"], edge["downstream"], " ".join(how)))
    return rows


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(answer: dict[str, Any]) -> str:
    """A Graphviz ``digraph`` of the answer, data flowing left to right."""
    shapes = {"DATASET": "box", "JOB": "ellipse", "RUN": "diamond", "DATASET_FIELD": "note"}
    lines = ["digraph lineage {", "  rankdir=LR;"]
    for node in answer["nodes"]:
        style = ', style="bold"' if node["id"] == answer["nodeId"] else ""
        lines.append(f"  {_dot_id(node['id'])} [shape={shapes.get(node['type'], 'box')}{style}];")
    for upstream, downstream, how in to_table_rows(answer):
        label = f" [label={_dot_id(how)}]" if how else ""
        lines.append(f"  {_dot_id(upstream)} -> {_dot_id(downstream)}{label};")
    lines.append("}")
    return "\n".join(lines)


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    title = f"{answer['direction']} lineage of {answer['nodeId']} (depth {answer['depth']})"
    if answer.get("asOf"):
        title += f" as of {answer['asOf']}"
    table = Table("upstream", "downstream", "how", title=title)
    for row in to_table_rows(answer):
        table.add_row(*row)
    console = Console(soft_wrap=True)
    console.print(table)
    console.print(f"{len(answer['nodes'])} nodes, {len(answer['edges'])} edges")
    if answer["truncated"]:
        console.print(f"[yellow]cut at {answer['maxNodes']} nodes (raise --max-nodes)[/yellow]")


@click.command(cls=LineageCommand)
@click.argument("node_id")
@click.option("--upstream", "direction", flag_value="upstream", help="What NODE_ID comes from.")
@click.option("--downstream", "direction", flag_value="downstream", help="What NODE_ID feeds.")
@click.option("--both", "direction", flag_value="both", default=True, help="Both (default).")
@click.option("--depth", type=click.IntRange(0, 100), default=10, show_default=True,
              help="How many edges to walk.")
@click.option("--as-of", metavar="TIME", help="Lineage as it was at this ISO-8601 time.")
@click.option("--max-nodes", type=click.IntRange(1, 100_000), default=1_000, show_default=True,
              help="Stop admitting nodes past this many.")
@click.option("--format", "output", type=click.Choice(["table", "json", "dot"]), default="table",
              show_default=True)
@target_options
def lineage(
    node_id: str,
    direction: str,
    depth: int,
    as_of: str | None,
    max_nodes: int,
    output: str,
    url: str,
    db_url: str | None,
) -> None:
    """Show the directed lineage of NODE_ID.

    NODE_ID is dataset:NAMESPACE:NAME, datasetField:NAMESPACE:NAME:FIELD,
    job:NAMESPACE:NAME or run:UUID.
    """
    answer = Target(url, db_url).lineage(node_id, direction, depth, as_of, max_nodes)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    elif output == "dot":
        click.echo(to_dot(answer))
    else:
        _print_table(answer)
