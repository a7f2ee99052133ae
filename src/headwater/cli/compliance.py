"""``headwater compliance``: where a tag, or a column's tags, flow, as of a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["compliance"]


def _report(conn: Any, tag: str | None, node: str | None, as_of: str | None,
            output: str) -> dict[str, Any]:
    from fastapi.encoders import jsonable_encoder

    from headwater.server.routes.classification import (
        MAX_NODES,
        compliance_csv,
        compliance_report,
    )

    report = compliance_report(conn, tag, node, as_of, MAX_NODES)
    if output == "csv":
        return {"text": compliance_csv(jsonable_encoder(report))}
    encoded: dict[str, Any] = jsonable_encoder(report)
    return encoded


def _owners(item: dict[str, Any]) -> str:
    return ", ".join(o["name"] for o in item["owners"])


def _print_table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    owners = {item["nodeId"]: _owners(item)
              for item in report["datasets"] + report["jobs"]}
    title = "where " + (report["tag"] or "the tags") + (
        f" of {report['nodeId']}" if report["nodeId"] else "") + " flow" + (
        f" as of {report['asOf']}" if report["asOf"] else "")
    table = Table("column", "tag", "how", "dataset owners", "job owners", title=title)
    for flow in report["flows"]:
        table.add_row(flow["column"], flow["tag"], flow["explanation"],
                      owners.get(flow["dataset"], ""),
                      "; ".join(owners.get(job, "") for job in flow["jobs"]))
    for stop in report["stops"]:
        why = stop["reason"] + (f" (block {stop['block']})" if stop["block"] else "")
        table.add_row(stop["edge"]["target"], stop["tag"],
                      f"stopped: {why} at {stop['edge']['job']}", "", "")
    console = Console(soft_wrap=True)
    console.print(table)
    console.print(f"{len(report['flows'])} columns reached, {len(report['stops'])} stops")


@click.command()
@click.argument("node", required=False)
@click.option("--tag", metavar="TAG", help="The tag whose flow to report (all of NODE's "
              "tags when left out).")
@click.option("--as-of", metavar="TIME",
              help="Report as of this ISO-8601 time (UTC when no offset). [now]")
@click.option("--format", "output", type=click.Choice(["table", "json", "csv"]),
              default="table", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report to this file instead of standard output.")
@target_options
def compliance(node: str | None, tag: str | None, as_of: str | None, output: str,
               out: Path | None, url: str, db_url: str | None) -> None:
    """Report where a tag, or the tags of a column or dataset, flow.

    NODE is datasetField:NS:NAME:FIELD or dataset:NS:NAME; give NODE, --tag or
    both. The report names every column the tag reached and how (jobs and
    transformations), every dataset and job on the way with its owners, and
    every edge where it stopped (masking or a block).
    """
    if not node and not tag:
        raise click.UsageError("give a NODE, a --tag, or both")
    params: dict[str, Any] = {"format": "csv" if output == "csv" else "json",
                              **({"tag": tag} if tag else {}),
                              **({"nodeId": node} if node else {}),
                              **({"asOf": as_of} if as_of else {})}
    answer = Target(url, db_url).get("/api/v2/compliance", params, _report, tag, node, as_of,
                                     output)
    if output == "table" and out is None:
        _print_table(answer)
        return
    text = answer["text"] if output == "csv" else json.dumps(answer, indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text)
        click.echo(f"wrote {out}")
