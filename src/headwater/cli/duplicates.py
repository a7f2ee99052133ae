"""``headwater duplicates``: pairs of jobs that compute the same output columns."""

from __future__ import annotations

import json
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["duplicates"]


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        "relation",
        "job",
        "shares",
        "other job",
        "shares",
        "score",
        title=f"jobs computing the same columns (valueShare >= {answer['minShare']})",
    )
    for pair in answer["duplicates"]:
        left, right = pair["jobs"]
        relation = pair["relation"]
        if pair["contained"]:
            relation += f" ({pair['contained']} contained)"
        table.add_row(
            relation, left["job"], _shares(left), right["job"], _shares(right), str(pair["score"])
        )
    console = Console(soft_wrap=True)
    console.print(table)
    console.print(f"{len(answer['duplicates'])} of {answer['totalCount']} pairs")


def _shares(side: dict[str, Any]) -> str:
    return (
        f"{side['sameColumns']}/{side['columns']} exact, "
        f"{side['sameValues']}/{side['columns']} values"
    )


@click.command()
@click.option("--namespace", metavar="NS", help="Only pairs with a job in this namespace.")
@click.option("--job", metavar="JOB", help="Only the pairs of this job (job:NAMESPACE:NAME).")
@click.option(
    "--min-share",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="The least share of one job's output columns the other computes from the same inputs.",
)
@click.option(
    "--limit",
    type=click.IntRange(0, 10_000),
    default=100,
    show_default=True,
    help="How many pairs, highest share first.",
)
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@target_options
def duplicates(
    namespace: str | None,
    job: str | None,
    min_share: float,
    limit: int,
    output: str,
    url: str,
    db_url: str | None,
) -> None:
    """List pairs of jobs whose output columns are computed the same way (the same input
    columns and transformations, filters included): equal, one containing the other,
    or partial, with how many of each job's columns the other computes too."""
    params: dict[str, Any] = {"minShare": min_share, "limit": limit}
    params.update({k: v for k, v in (("namespace", namespace), ("job", job)) if v})
    answer = Target(url, db_url).get(
        "/api/v2/duplicates", params, _on_db, namespace, job, min_share, limit
    )
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    else:
        _print_table(answer)


def _on_db(
    conn: Any, namespace: str | None, job: str | None, min_share: float, limit: int
) -> dict[str, Any]:
    from headwater.server.routes.duplicates import DuplicateList, duplicates_answer

    answer = duplicates_answer(conn, namespace, job, min_share, limit)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = DuplicateList.model_validate(answer).model_dump(mode="json")
    return body
