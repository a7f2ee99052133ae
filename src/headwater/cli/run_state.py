"""``headwater run RUN_ID``: a run's state, and whether its producer has gone silent."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import click

from headwater.cli.querying import Target, target_options

__all__ = ["run"]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:g} s"


def _print(answer: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    beat = answer["heartbeat"]
    state = answer["state"] + (" (stale)" if answer["stale"] else "")
    table = Table(show_header=False, title=f"run {answer['id']}")
    rows = [
        ("job", f"{answer['job']['namespace']}:{answer['job']['name']}"),
        ("state", state),
        ("started", answer["startedAt"] or "-"),
        ("ended", answer["endedAt"] or "-"),
        ("last event received", answer["lastEventAt"] or "-"),
    ]
    if beat is None:
        rows.append(("heartbeat", "not tracked: never shown stale"))
    else:
        rows += [
            ("producer", beat["producer"] or "-"),
            ("RUNNING events", str(beat["runningEvents"])),
            ("mean interval", _seconds(beat["cadenceSeconds"])),
            ("stale after", _seconds(beat["staleAfterSeconds"])),
        ]
    for name, value in rows:
        table.add_row(name, value)
    Console(soft_wrap=True).print(table)


@click.command()
@click.argument("run_id")
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@target_options
def run(run_id: str, output: str, url: str, db_url: str | None) -> None:
    """Show a run's state and whether it is stale: its producer sends periodic RUNNING
    events and has been silent for longer than it should (docs/server.md, "Stale runs").

    A stale run is not ended: its state stays what its events made it. With --db, the
    producers known to beat are HEADWATER_STALE_PRODUCERS's, or the defaults.
    """
    answer = Target(url, db_url).get(f"/api/v2/runs/{quote(run_id, safe='')}", {}, _on_db, run_id)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
    else:
        _print(answer)


def _on_db(conn: Any, run_id: str) -> dict[str, Any]:
    from headwater.config import Settings
    from headwater.server.routes.runs import RunLiveness, run_id_parameter
    from headwater.store.reads.staleness import heartbeat_rules, run_liveness

    rules = heartbeat_rules(Settings.from_env().stale_producers)
    answer = run_liveness(conn, run_id_parameter(run_id, "RUN_ID"), rules)
    # Through the server's response model, so --db prints exactly what the API sends.
    body: dict[str, Any] = RunLiveness.model_validate(answer).model_dump(mode="json")
    return body
