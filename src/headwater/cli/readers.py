"""``headwater readers DATASET``: which jobs, runs and Spark users read a dataset."""

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

__all__ = ["readers"]


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        "read at",
        "job",
        "run",
        "state",
        "spark user",
        "read-only",
        title=f"readers of {answer['datasetId']}",
    )
    for item in answer["readers"]:
        table.add_row(
            item["readAt"],
            item["job"],
            item["runId"],
            item["state"] or "",
            item["sparkUser"] or "",
            "yes" if item["readOnly"] else "",
        )
    console = Console(soft_wrap=True)
    console.print(table)
    console.print(
        f"{len(answer['readers'])} of {answer['totalCount']} runs; users: "
        f"{', '.join(answer['users']) or '-'}"
    )


@click.command()
@click.argument("dataset")
@click.option("--since", metavar="TIME", help="Only reads at or after this ISO-8601 time.")
@click.option("--until", metavar="TIME", help="Only reads before this ISO-8601 time.")
@click.option(
    "--limit",
    type=click.IntRange(0, 10_000),
    default=100,
    show_default=True,
    help="How many runs, newest read first.",
)
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@target_options
def readers(
    dataset: str,
    since: str | None,
    until: str | None,
    limit: int,
    output: str,
    url: str,
    db_url: str | None,
) -> None:
    """Show who read a dataset: the runs that had DATASET (dataset:NAMESPACE:NAME) as
    an input in the window, with their jobs, states and Spark users.

    Read-only actions (collect, toPandas, count) are among them when the agent
    captures them (spark.headwater.captureReadOnlyActions=true).
    """
    params: dict[str, Any] = {"limit": limit}
    params.update(window_params(since, until))
    answer = Target(url, db_url).get(
        dataset_path(dataset, "readers"),
        params,
        _on_db,
        dataset,
        since,
        until,
        limit,
    )
    print_answer(answer, output, _print_table)


def _on_db(
    conn: Any, dataset: str, since: str | None, until: str | None, limit: int
) -> dict[str, Any]:
    from headwater.server.routes.readers import ReaderList, readers_answer

    answer = readers_answer(conn, dataset, since, until, limit, 0)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = ReaderList.model_validate(answer).model_dump(mode="json")
    return body
