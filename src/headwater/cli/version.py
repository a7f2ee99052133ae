"""``headwater version``."""

from __future__ import annotations

import click

from headwater import __version__


@click.command()
def version() -> None:
    """Print headwater's version."""
    click.echo(__version__)
