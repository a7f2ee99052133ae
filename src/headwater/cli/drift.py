"""``headwater drift [DATASET]``: schema drift, between consecutive dataset versions
(``version``) and between what a producer writes and a consumer declares (``contract``)."""

from __future__ import annotations

import json
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["drift", "to_impact_rows", "to_table_rows"]


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


def to_impact_rows(answer: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """One (drift id, node, type, depth, impact, path) row per node a drift reaches,
    the path with each edge's kind after its job (as ``headwater impact`` prints it)."""
    from headwater.cli.impact import path_text

    rows = []
    for item in answer["drifts"]:
        for node in (item.get("impact") or {}).get("nodes") or []:
            rows.append((item["id"], node["id"], node["type"], str(node["depth"]),
                         node["impact"], path_text(node)))
    return rows


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table("changed at", "dataset", "kind", "class", "change", title="schema drift")
    for row in to_table_rows(answer):
        table.add_row(*(escape(cell) for cell in row))
    console = Console(soft_wrap=True)
    console.print(table)
    shown = len(answer["drifts"])
    console.print(f"{shown} of {answer['totalCount']} drifts")
    walked = [item for item in answer["drifts"] if item.get("impact")]
    if not walked:
        return
    impact = Table("drift", "node", "type", "depth", "impact", "path",
                   title="what the drifts reach (lineage as of each change)")
    for row in to_impact_rows(answer):
        impact.add_row(*(escape(cell) for cell in row))
    console.print(impact)
    for item in walked:
        if item["impact"]["truncated"]:
            console.print(f"[yellow]{escape(item['id'])}: impact cut at "
                          f"{item['impact']['maxNodes']} nodes (raise --max-nodes)[/yellow]")


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
@click.option("--impact/--no-impact", "walk", default=True, show_default=True,
              help="List what each drift reaches downstream through column lineage, as "
              "lineage stood at the change (--no-impact: a cheaper answer).")
@click.option("--impact-depth", type=click.IntRange(0, 100), default=10, show_default=True,
              help="How many jobs each drift's impact walk crosses.")
@click.option("--max-nodes", type=click.IntRange(1, 100_000), default=1_000, show_default=True,
              help="Impacted nodes per drift before its impact is cut (and says so).")
@click.option("--format", "output", type=click.Choice(["table", "json", "csv"]),
              default="table", show_default=True)
@target_options
def drift(
    dataset: str | None,
    since: str | None,
    breaking: bool,
    kind: str | None,
    fail_on: str | None,
    limit: int,
    walk: bool,
    impact_depth: int,
    max_nodes: int,
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

    Each drift's impact lists the columns, datasets and jobs its changed fields
    reach through column lineage known at the time of the change, direct or
    indirect (through a join, filter, group by... column), with one path each.

    With --fail-on breaking the command exits with status 1 when a breaking
    drift is among those shown, so a CI step can stop on it.

    --format json prints the GET /api/v2/drift answer; --format csv one row per
    (drift, impacted node): driftId, kind, datasetId, changedAt, breaking,
    consumer, id, type, depth, impact, path, pathEdges.
    """
    impact = (walk, impact_depth, max_nodes)
    answer = Target(url, db_url).drift(dataset, since, breaking, limit, kind, impact)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    elif output == "csv":
        from headwater.graph.drift_impact import to_csv

        click.echo(to_csv(answer), nl=False)
    else:
        _print_table(answer)
    if fail_on == "breaking" and any(item["breaking"] for item in answer["drifts"]):
        click.get_current_context().exit(1)
