"""``headwater instrument -- <command>``: run a program with the agent on every SparkSession."""

from __future__ import annotations

import os
import shlex
import sys

import click

from headwater.agent.instrument import ENV_SWITCH, instrumented_env, site_dir

__all__ = ["instrument"]


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--print-path", is_flag=True,
              help="Print the directory to put first on PYTHONPATH, and exit.")
@click.option("--print-env", is_flag=True,
              help="Print shell `export` lines that instrument a whole environment, and exit.")
@click.option("--url", metavar="URL", help="Send events to this OpenLineage URL (OPENLINEAGE_URL).")
@click.option("--namespace", metavar="NAME", help="Job namespace (OPENLINEAGE_NAMESPACE).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def instrument(
    print_path: bool, print_env: bool, url: str | None, namespace: str | None,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND with the headwater agent attached to every SparkSession it creates.

    \b
    Examples:
      headwater instrument -- spark-submit job.py
      headwater instrument --url http://localhost:5000 -- python job.py

    Works for the Python process you start and every Python process it starts
    (such as the driver spark-submit launches): it prepends a directory with a
    sitecustomize hook to PYTHONPATH and sets HEADWATER_INSTRUMENT=1. The
    agent is configured as usual (spark.openlineage.* keys, OPENLINEAGE_* variables).
    """
    if print_path:
        click.echo(site_dir())
        return
    env = instrumented_env(os.environ)
    if url:
        env["OPENLINEAGE_URL"] = url
    if namespace:
        env["OPENLINEAGE_NAMESPACE"] = namespace
    if print_env:
        names = ["PYTHONPATH", ENV_SWITCH]
        names += ["OPENLINEAGE_URL"] if url else []
        names += ["OPENLINEAGE_NAMESPACE"] if namespace else []
        for name in names:
            click.echo(f"export {name}={shlex.quote(env[name])}")
        return
    if not command:
        raise click.UsageError(
            "give the command to run after --, e.g. headwater instrument -- python job.py"
        )
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        # Replace this process: the command gets our PID, signals and exit status as is.
        os.execvpe(command[0], list(command), env)
    except OSError as exc:
        click.echo(f"headwater instrument: cannot run {command[0]!r}: {exc.strerror}", err=True)
        sys.exit(127)
