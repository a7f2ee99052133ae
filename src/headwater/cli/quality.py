"""``headwater quality DATASET``: a dataset's data quality, latest and over time."""

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

__all__ = ["quality", "to_table_rows"]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def to_table_rows(answer: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """One (measure, column, latest, history) row per series, with its latest value."""
    rows = []
    for line in answer["series"]:
        points = line["points"]
        if line["metric"] == "assertion":
            measure = f"assertion {line['assertion']}"
            history = "".join("." if p["success"] else "x" for p in points)
            latest = "pass" if points[-1]["success"] else "FAIL"
        else:
            measure = line["metric"]
            history = " ".join(_number(p["value"]) for p in points[-8:])
            latest = _number(points[-1]["value"])
        rows.append((measure, line["column"] or "", latest, history))
    return rows


def _print_table(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    latest = answer["latest"]
    table = Table(
        "measure",
        "column",
        "latest",
        "history (oldest first)",
        title=f"quality of {answer['datasetId']}",
    )
    for row in to_table_rows(answer):
        table.add_row(*row)
    console = Console(soft_wrap=True)
    console.print(table)
    if latest["time"] is None:
        console.print("no quality facets received for this dataset")
    else:
        console.print(
            f"latest at {latest['time']}: {latest['failedAssertions']} of "
            f"{len(latest['assertions'])} assertions failing"
        )


@click.command()
@click.argument("dataset")
@click.option("--since", metavar="TIME", help="Only observations at or after this ISO-8601 time.")
@click.option("--until", metavar="TIME", help="Only observations before this ISO-8601 time.")
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@target_options
def quality(
    dataset: str, since: str | None, until: str | None, output: str, url: str, db_url: str | None
) -> None:
    """Show a dataset's data quality: row count, bytes, files, column metrics and
    assertion results, the latest of each and its history.

    DATASET is dataset:NAMESPACE:NAME. The figures come from the quality facets
    producers send (dataQualityMetrics, dataQualityAssertions, outputStatistics:
    dbt tests through dbt-ol, Great Expectations, the Spark agent's output
    statistics). With --format table, x marks a failed run of an assertion.
    """
    params = window_params(since, until)
    answer = Target(url, db_url).get(
        dataset_path(dataset, "quality"), params, _on_db, dataset, since, until
    )
    print_answer(answer, output, _print_table)


def _on_db(conn: Any, dataset: str, since: str | None, until: str | None) -> dict[str, Any]:
    from headwater.server.routes.quality import QualityResponse, quality_answer

    answer = quality_answer(conn, dataset, since, until)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = QualityResponse.model_validate(answer).model_dump(mode="json")
    return body
