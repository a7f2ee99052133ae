"""``headwater drift [DATASET]``: schema drift, between consecutive dataset versions
(``version``) and between what a producer writes and a consumer declares (``contract``)."""

from __future__ import annotations

import json
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["drift", "to_table_rows"]


def to_table_rows(answer: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """One (time, dataset, kind, class, change) row per change, newest drift first; a
    contract drift's kind names its consumer job."""
    rows = []
    for item in answer["drifts"]:
        kind = item.get("kind", "version")
        if item.get("consumer"):
            kind += f" ({item['consumer']['jobId']})"
        for change in item["changes"]:
            what = f"{change['kind']} {change['path']}"
            if change.get("newPath"):
                what += f" -> {change['newPath']}"
            if change.get("old") or change.get("new"):
                what += f" ({change.get('old') or '-'} -> {change.get('new') or '-'})"
            rows.append((item["changedAt"], item["datasetId"], kind,
                         "breaking" if change["breaking"] else "compatible", what))
    return rows


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table("changed at", "dataset", "kind", "class", "change", title="schema drift")
    for row in to_table_rows(answer):
        table.add_row(*row)
    console = Console(soft_wrap=True)
    console.print(table)
    shown = len(answer["drifts"])
    console.print(f"{shown} of {answer['totalCount']} drifts")


@click.command()
@click.argument("dataset", required=False)
@click.option("--since", metavar="TIME", help="Only drifts at or after this ISO-8601 time.")
@click.option("--breaking", is_flag=True, help="Only drifts with a breaking change.")
@click.option("--kind", type=click.Choice(["version", "contract"]),
              help="Only version drifts (a dataset's schema changed) or contract drifts (a "
              "consumer declares a schema the dataset is not written with).")
@click.option("--fail-on", type=click.Choice(["breaking"]),
              help="Exit with status 1 when the answer holds a breaking drift (for CI).")
@click.option("--limit", type=click.IntRange(0, 10_000), default=100, show_default=True,
              help="How many drifts, newest first.")
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@target_options
def drift(
    dataset: str | None,
    since: str | None,
    breaking: bool,
    kind: str | None,
    fail_on: str | None,
    limit: int,
    output: str,
    url: str,
    db_url: str | None,
) -> None:
    """Show schema drift: how each dataset version's schema differs from the one before.

    DATASET is dataset:NAMESPACE:NAME (all datasets when left out). A change is
    breaking when a consumer written against the older schema can fail on it:
    a removed or (possibly) renamed field, a narrowed or incompatible type, a
    nullable field made required. Added fields, widened types (int -> long,
    float -> double, anything -> string) and required -> nullable are compatible.

    A contract drift is a consumer job (named in the kind column) whose declared
    schema (e.g. a from_json's) differs from the one the dataset is written with:
    a declared type narrower than the written one, or a declared field not
    written (unless declared nullable), is breaking; reading a subset of the
    fields is no drift.

    With --fail-on breaking the command exits with status 1 when a breaking
    drift is among those shown, so a CI step can stop on it.
    """
    answer = Target(url, db_url).drift(dataset, since, breaking, limit, kind)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    else:
        _print_table(answer)
    if fail_on == "breaking" and any(item["breaking"] for item in answer["drifts"]):
        click.get_current_context().exit(1)
