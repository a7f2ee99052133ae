"""``headwater token create|list|revoke``: the server's access tokens, straight in its database.

The secret of a new token is printed once and never stored (only its SHA-256
digest is). A running server sees a new or revoked token within
:data:`~headwater.server.access.TOKEN_TTL_SECONDS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from headwater.config import Settings
from headwater.errors import HeadwaterError

__all__ = ["db_option", "open_database", "token"]


def db_option(command: Any) -> Any:
    return click.option(
        "--db", "db_url", metavar="URL", envvar="HEADWATER_DB_URL",
        help="The server's store. [HEADWATER_DB_URL; the SQLite file in HEADWATER_DATA_DIR]",
    )(command)


@contextmanager
def open_database(db_url: str | None) -> Iterator[Any]:
    """The store ``--db`` names (migrated), closed afterwards; errors become CLI errors."""
    from headwater.server.app import open_store

    try:
        store = open_store(Settings.from_env(db_url=db_url))
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        yield store
    except (HeadwaterError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        store.close()


@click.group()
def token() -> None:
    """Create, list and revoke the tokens a server with access control accepts."""


@token.command()
@click.argument("name")
@click.option("--scope", "scopes", multiple=True, required=True,
              type=click.Choice(["admin", "ingest", "read"]),
              help="What the token may do; repeat for several.")
@click.option("--namespace", "namespaces", multiple=True,
              help="A namespace the token may see; repeat for several (none: all).")
@db_option
def create(name: str, scopes: tuple[str, ...], namespaces: tuple[str, ...],
           db_url: str | None) -> None:
    """Create token NAME and print its secret (shown this once)."""
    from headwater.store import access

    with open_database(db_url) as store:
        secret, made = access.create_token(store.engine, name, scopes, namespaces or None)
    click.echo(secret)
    click.echo(f"token '{made.name}' created with scopes {', '.join(sorted(made.scopes))}; "
               "the secret above is not shown again", err=True)


@token.command(name="list")
@click.option("--format", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@db_option
def list_(output: str, db_url: str | None) -> None:
    """List every token (revoked ones included), never a secret."""
    from headwater.store import access

    with open_database(db_url) as store:
        found = access.list_tokens(store.engine)
    if output == "json":
        click.echo(json.dumps([t.as_json() for t in found], indent=2))
        return
    for t in found:
        row = t.as_json()
        click.echo("\t".join([
            row["name"], ",".join(row["scopes"]),
            ",".join(row["namespaces"]) if row["namespaces"] else "*",
            row["createdAt"], f"revoked {row['revokedAt']}" if row["revokedAt"] else "live",
        ]))


@token.command()
@click.argument("name")
@db_option
def revoke(name: str, db_url: str | None) -> None:
    """Revoke token NAME."""
    from headwater.store import access

    with open_database(db_url) as store:
        access.revoke_token(store.engine, name)
    click.echo(f"token '{name}' revoked", err=True)
