"""``headwater namespaces check``: datasets that look like one thing under two names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from headwater.cli.querying import Target, target_options

__all__ = ["namespaces"]


@click.group()
def namespaces() -> None:
    """Dataset namespaces: find names that split one dataset in two (docs/namespaces.md)."""


@namespaces.command()
@click.option(
    "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--namespace-rules",
    "namespace_rules",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="HEADWATER_NAMESPACE_RULES",
    help="With --db: the rules file the store is meant to follow, compared with the rules "
    "it was derived with (a server compares its own). [HEADWATER_NAMESPACE_RULES]",
)
@target_options
def check(output: str, namespace_rules: Path | None, url: str, db_url: str | None) -> None:
    """List datasets that look like the same thing under two names -- a topic under two
    bootstrap spellings, an S3 key under s3 and s3a, a path with and without a trailing
    slash, a catalog table and its location -- each with the namespace rule that would
    merge them; and say so when the configured namespace rules are not those the store
    was derived with. Exit status 0 either way."""
    configured: Any = None
    if db_url and namespace_rules is not None:
        from headwater.errors import ConfigError
        from headwater.store.namespace_rules import load_rules

        try:
            configured = load_rules(namespace_rules)
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
    elif db_url:
        from headwater.server.routes.namespace_check import UNKNOWN

        configured = UNKNOWN
    answer = Target(url, db_url).get("/api/v2/namespaces/check", {}, _on_db, configured)
    changed = answer.get("rulesChanged")
    if changed:
        # Loud in either format: the check's groups follow the store's rules, not these.
        click.echo(f"WARNING: {changed}", err=True)
    if output == "json":
        click.echo(json.dumps(answer, indent=2))
        return
    suspects = answer["suspects"]
    for suspect in suspects:
        certainty = "" if suspect["certain"] else " (possibly)"
        click.echo(f"{suspect['kind']}{certainty}: {suspect['reason']}")
        for dataset in suspect["datasets"]:
            click.echo(f"  {dataset['nodeId']}")
        click.echo("  rule:")
        for line in suspect["rule"].splitlines():
            click.echo(f"    {line}")
    click.echo(
        f"{len(suspects)} group(s) of datasets that look like one"
        + ("" if suspects else ": nothing to merge")
    )


def _on_db(conn: Any, configured: Any) -> dict[str, Any]:
    from headwater.server.routes.namespace_check import NamespaceCheck, check_answer
    from headwater.store.aliases import rules_applied, rules_in_force

    answer = check_answer(
        conn, rules_in_force(conn), rules=rules_applied(conn), configured=configured
    )
    body: dict[str, Any] = NamespaceCheck.model_validate(answer).model_dump(mode="json")
    return body
