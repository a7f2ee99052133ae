"""The ``headwater`` command line.

Subcommands live in their own modules and are imported only when invoked, so
``headwater instrument`` on a Spark client never imports the server stack.
To add one, write ``cli/<name>.py`` with a click command and list it in
``_COMMANDS`` as ``"name": "module:attribute"``.
"""

from __future__ import annotations

import importlib
import logging

import click

from headwater import __version__

__all__ = ["main"]

_COMMANDS: dict[str, str] = {
    "audit": "headwater.cli.audit:audit",
    "compliance": "headwater.cli.compliance:compliance",
    "connect": "headwater.cli.connect:connect",
    "consume": "headwater.cli.consume:consume",
    "declare": "headwater.cli.declare:declare",
    "demo": "headwater.demo.command:demo",
    "drift": "headwater.cli.drift:drift",
    "duplicates": "headwater.cli.duplicates:duplicates",
    "export": "headwater.cli.backup:export",
    "impact": "headwater.cli.impact:impact",
    "import": "headwater.cli.backup:import_",
    "ingest": "headwater.cli.ingest:ingest",
    "instrument": "headwater.cli.instrument:instrument",
    "lineage": "headwater.cli.lineage:lineage",
    "namespaces": "headwater.cli.namespaces:namespaces",
    "owners": "headwater.cli.owners:owners",
    "quality": "headwater.cli.quality:quality",
    "readers": "headwater.cli.readers:readers",
    "rebuild": "headwater.cli.backup:rebuild",
    "retention": "headwater.cli.retention:retention",
    "root-cause": "headwater.cli.root_cause:root_cause",
    "run": "headwater.cli.run_state:run",
    "search": "headwater.cli.search:search",
    "sample": "headwater.cli.sample:sample",
    "serve": "headwater.cli.serve:serve",
    "tags": "headwater.cli.tags:tags",
    "token": "headwater.cli.token:token",
    "version": "headwater.cli.version:version",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="headwater")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def main(verbose: int) -> None:
    """headwater: data lineage for PySpark pipelines, OpenLineage-native."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
