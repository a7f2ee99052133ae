"""``headwater audit``: the server's audit log, read straight from its database."""

from __future__ import annotations

import json
from datetime import datetime

import click

from headwater.cli.token import db_option, open_database

__all__ = ["audit"]


@click.command()
@click.option("--since", type=click.DateTime(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"]),
              help="Only entries at or after this UTC time.")
@click.option("--limit", type=click.IntRange(0, 10_000), default=100, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@db_option
def audit(since: datetime | None, limit: int, offset: int, output: str,
          db_url: str | None) -> None:
    """Show audit entries, oldest first: who wrote what, and refused requests."""
    from headwater.store import access

    with open_database(db_url) as store:
        rows = access.read_audit(store.engine, since=since, limit=limit, offset=offset)
    if output == "json":
        click.echo(json.dumps([row.as_json() for row in rows], indent=2))
        return
    for row in rows:
        entry = row.as_json()
        click.echo("\t".join(str(entry[key]) if entry[key] is not None else "-" for key in (
            "at", "tokenName", "client", "operation", "target", "outcome", "status", "count")))


