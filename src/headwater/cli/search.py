"""``headwater search TEXT``: datasets and jobs whose name contains TEXT."""

from __future__ import annotations

import json

import click

from headwater.cli.querying import Target, target_options

__all__ = ["search"]


@click.command()
@click.argument("text")
@click.option("--type", "kind", type=click.Choice(["dataset", "job"]), help="Only this kind.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@target_options
def search(
    text: str, kind: str | None, limit: int, output: str, url: str, db_url: str | None
) -> None:
    """Find datasets and jobs by name (case-insensitive; % and _ are wildcards)."""
    answer = Target(url, db_url).search(text, kind, limit)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    for result in answer["results"]:
        click.echo(result["nodeId"])
    shown, total = len(answer["results"]), answer["totalCount"]
    if total > shown:
        click.echo(f"({shown} of {total}; raise --limit for more)", err=True)
