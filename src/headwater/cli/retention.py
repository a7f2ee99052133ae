"""``headwater retention --keep 90d``: delete runs and raw events older than a window.

What is deleted and what never is: :mod:`headwater.store.retention`. Safe while
servers run on the same store: each transaction deletes at most ``--batch``
runs, and the floor is raised first, so a replayed old event cannot bring a
deleted run back.
"""

from __future__ import annotations

from datetime import timedelta

import click

from headwater.errors import HeadwaterError

__all__ = ["retention"]


def _keep(ctx: click.Context, param: click.Parameter, value: str) -> timedelta:
    from headwater.config import parse_duration

    try:
        return timedelta(seconds=parse_duration(value, "--keep"))
    except HeadwaterError as exc:
        raise click.BadParameter(str(exc)) from exc


@click.command()
@click.option(
    "--keep",
    required=True,
    metavar="DURATION",
    callback=_keep,
    help="Keep runs with an event within this window (90d, 36h, 2w).",
)
@click.option(
    "--db", "db_url", metavar="URL", help="Store URL. [HEADWATER_DB_URL; the default SQLite store]"
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=100,  # store.retention.DEFAULT_BATCH; not imported: a client install has no SQLAlchemy
    show_default=True,
    help="Runs deleted per transaction.",
)
@click.option(
    "--settle",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Wait between raising the floor and deleting, so running "
    "servers refuse old events first (they re-read it every 5 s).",
)
def retention(keep: timedelta, db_url: str | None, batch: int, settle: float) -> None:
    """Delete runs older than --keep, with their raw events; never the current graph."""
    from headwater.cli.backup import _progress, _shown
    from headwater.config import Settings
    from headwater.server.app import open_store
    from headwater.store.retention import prune

    url = Settings.from_env(db_url=db_url).database_url
    try:
        store = open_store(Settings.from_env(db_url=url))
        try:
            with _progress(True) as progress:
                task = progress.add_task("deleting old runs", total=None)

                def advance(done: object, seen: int) -> None:
                    progress.update(task, completed=seen)

                done = prune(store.engine, keep, batch=batch, settle=settle, progress=advance)
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"{_shown(url)}: before {done.cutoff.isoformat()}Z deleted {done.runs} runs, "
        f"{done.events} raw events, {done.dataset_versions} dataset versions, "
        f"{done.producer_hours} producer hours; kept {done.protected} older runs the "
        f"current graph needs; {done.transactions} transactions, {done.seconds:.1f} s"
        + (f"; {done.vacuumed_pages} pages given back" if done.vacuumed_pages else "")
    )
