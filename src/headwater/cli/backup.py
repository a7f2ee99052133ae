"""``headwater export``, ``import`` and ``rebuild``: the raw event log as the backup.

Every table but the raw log (``events``) is derived from it, so the log is
all a backup needs and all a rebuild reads:

* ``export`` streams the log as JSON Lines, one event's canonical JSON a
  line, in (event time, event hash) order; gzip when the file name ends .gz.
* ``import`` reads such a file back through the one write path
  (:func:`headwater.server.ingest.ingest_batch`: ``parse_event``, then
  ``Store.record`` in lots of 500, refused events reported and quarantined).
* ``rebuild --from-raw`` does both at once, from one store into a fresh one,
  and never writes the store it reads: derived tables are rebuilt next to
  the old store, the old one stays usable until the user swaps them, and a
  rebuild that stops halfway leaves nothing to repair.

``rebuild`` also copies the tables no event can make again (the
quarantine, access tokens, the audit log: ``raw_log.CARRIED``), so the
rebuilt store keeps its tokens. What neither carries (Marquez soft deletes
and namespace owners) it reports (``docs/server.md``, "Backup, move and
rebuild"); ``export`` writes the events alone.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from headwater.errors import HeadwaterError

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["export", "import_", "rebuild"]

#: Events per transaction, the store's own lot size.
_LOT = 500
_DB_HELP = "Store URL. [HEADWATER_DB_URL; the default SQLite store]"


@click.command()
@click.option("--db", "db_url", metavar="URL", help=_DB_HELP)
@click.option("--out", "out", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path),
              help="Write here (gzip when the name ends .gz) instead of stdout.")
def export(db_url: str | None, out: Path | None) -> None:
    """Write the raw event log as JSON Lines, oldest event first."""
    from headwater.store import raw_log

    try:
        engine = _read_engine(db_url)
        try:
            total = raw_log.count(engine)
            with _output(out) as sink, _progress(out is not None) as progress:
                task = progress.add_task("exporting", total=total)
                written = 0
                for _, payload in raw_log.payloads(engine):
                    sink.write(payload.encode("utf-8") + b"\n")
                    written += 1
                    if written % _LOT == 0:
                        progress.update(task, completed=written)
                progress.update(task, completed=written)
        finally:
            engine.dispose()
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"exported {written} events", err=True)


@click.command(name="import")
@click.argument("source", metavar="FILE|-", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--db", "db_url", metavar="URL", help=_DB_HELP)
def import_(source: str, db_url: str | None) -> None:
    """Load an exported event log (JSON Lines, gzip or not) into a store."""
    from headwater.cli.ingest import _batches, _read_lines, _store_sink, _Tally
    from headwater.config import Settings
    from headwater.server.app import open_store

    tally = _Tally()
    try:
        store = open_store(Settings.from_env(db_url=db_url))
        try:
            with _input(source) as stream, _progress(source != "-") as progress:
                task = progress.add_task("importing", total=None)
                sink = _store_sink(store, tally)
                for batch in _batches(_read_lines(stream), _LOT):
                    sink(batch)
                    progress.update(task, completed=tally.received)
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    for message in tally.rejected:
        click.echo(f"refused {message}", err=True)
    click.echo(f"imported {tally.stored} of {tally.received} events "
               f"({tally.stored - tally.duplicates} new, {tally.duplicates} already stored, "
               f"{len(tally.rejected)} refused)")
    if tally.rejected:
        raise SystemExit(1)


@click.command()
@click.option("--from-raw", "from_raw", is_flag=True, required=True,
              help="Derive every table again from the raw event log (the one kind of rebuild).")
@click.option("--db", "db_url", metavar="URL", help=f"The store to rebuild (read only). {_DB_HELP}")
@click.option("--into", "into", metavar="URL",
              help="An empty store to rebuild into. [a new SQLite file next to --db's; "
                   "required for PostgreSQL]")
@click.option("--namespace-rules", "namespace_rules", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Map dataset names by this namespace rules file (docs/namespaces.md). "
                   "[HEADWATER_NAMESPACE_RULES]")
def rebuild(from_raw: bool, db_url: str | None, into: str | None,
            namespace_rules: Path | None) -> None:
    """Rebuild a store from its raw event log into a fresh store, leaving the old one as it is.

    The rebuilt store follows the namespace rules given (--namespace-rules or
    HEADWATER_NAMESPACE_RULES; none: names as sent): after a change to the rules,
    this is how the stored names follow them.
    """
    from headwater.config import Settings
    from headwater.server.app import open_store
    from headwater.server.ingest import ingest_batch
    from headwater.store import raw_log, retention

    source_url = Settings.from_env(db_url=db_url).database_url
    target_url = into or _beside(source_url)
    if target_url == source_url:
        raise click.UsageError("--into names the store being rebuilt; give a new one")
    try:
        engine = _read_engine(source_url)
        try:
            total = raw_log.count(engine)
            not_carried = raw_log.outside_log(engine)
            target = open_store(Settings.from_env(db_url=target_url,
                                                  namespace_rules=namespace_rules))
            try:
                if raw_log.count(target.engine):
                    raise click.ClickException(f"{_shown(target_url)} is not empty; "
                                               "rebuild into a new store")
                # Before the events, so a refusal during the rebuild adds to the
                # quarantine instead of colliding with a copied row.
                carried = raw_log.carry(engine, target.engine)
                rules = target.namespace_rules
                if rules is not None and rules.resolve_symlinks:
                    # A first pass, so a table named before its location joins it too.
                    for lot in _lots(raw_log.payloads(engine)):
                        target.learn_symlinks([e for e in lot if isinstance(e, dict)])
                stored = refused = 0
                with _progress(True) as progress:
                    task = progress.add_task("rebuilding", total=total)
                    for lot in _lots(raw_log.payloads(engine)):
                        outcome = ingest_batch(target, lot)
                        stored += outcome.successful
                        refused += len(outcome.failed)
                        for failed in outcome.failed:
                            click.echo(f"refused event {failed.reason}", err=True)
                        progress.update(task, advance=len(lot))
                rebuilt = raw_log.count(target.engine)
                # Last: the kept runs' events may be older than the floor.
                floor = retention.copy_floor(engine, target.engine)
            finally:
                target.close()
        finally:
            engine.dispose()
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"rebuilt {rebuilt} of {total} events into {_shown(target_url)}")
    if rules is not None:
        click.echo(f"namespace rules applied: {rules.fingerprint}")
    click.echo("carried over: " + ", ".join(f"{n} rows of {table}"
                                             for table, n in carried.items()))
    if floor is not None:
        click.echo(f"carried over: the retention floor {floor.isoformat()}Z")
    for what, n in not_carried.items():
        click.echo(f"not carried over (not in the raw log): {n} {what}", err=True)
    if rebuilt != total or refused:
        raise click.ClickException(f"{total - rebuilt} events were not rebuilt; "
                                   "keep using the old store")
    click.echo("the old store is unchanged: stop the server, swap the two, start it again")


def _read_engine(db_url: str | None) -> Any:
    """An engine on an existing store, opened without migrating it (it is only read)."""
    from headwater.config import Settings
    from headwater.store import dialects

    url = Settings.from_env(db_url=db_url).database_url
    if dialects.is_sqlite(url) and not Path(url.removeprefix("sqlite:///")).expanduser().exists():
        raise click.ClickException(f"no store at {url}")
    return dialects.create_engine(url)


def _beside(url: str) -> str:
    """A new SQLite file next to ``url``'s, named for the time of the rebuild."""
    from headwater.store import dialects

    if not dialects.is_sqlite(url) or url in ("sqlite://", "sqlite:///:memory:"):
        raise click.UsageError("rebuilding a PostgreSQL store needs --into URL (an empty database)")
    path = Path(url.removeprefix("sqlite:///")).expanduser()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"sqlite:///{path.with_name(f'{path.stem}.rebuilt-{stamp}{path.suffix}')}"


def _shown(url: str) -> str:
    from headwater.server.run import redact_url

    return redact_url(url)


def _lots(payloads: Iterator[tuple[str, str]]) -> Iterator[list[object]]:
    lot: list[object] = []
    for _, payload in payloads:
        lot.append(json.loads(payload))
        if len(lot) == _LOT:
            yield lot
            lot = []
    if lot:
        yield lot


@contextmanager
def _output(out: Path | None) -> Iterator[IO[bytes]]:
    if out is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    opener = gzip.open if out.name.endswith(".gz") else open
    with opener(out, "wb") as handle:
        yield handle


@contextmanager
def _input(source: str) -> Iterator[IO[bytes]]:
    """``source`` as bytes, un-gzipped when it starts with gzip's magic number."""
    raw: IO[bytes] = sys.stdin.buffer if source == "-" else open(source, "rb")  # noqa: SIM115
    try:
        head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
        yield gzip.GzipFile(fileobj=raw, mode="rb") if head == b"\x1f\x8b" else raw
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


@contextmanager
def _progress(show: bool) -> Iterator[Progress]:
    """A rich progress display on stderr, hidden when not a terminal or not wanted."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console,
                  disable=not (show and console.is_terminal)) as progress:
        yield progress
