"""``headwater ingest FILE|-``: load OpenLineage events from a file into headwater.

The file is either one JSON array of events, one JSON event, or JSON Lines
(one event per line — the format of the agent's file transport and spool).
Events go straight into the store (``--db``, default: the configured store)
or, with ``--url``, to a running server's ``/api/v1/lineage/batch`` (through
:mod:`headwater.client`). Either way they pass the same validation as the
HTTP API; rejected events are reported by line (JSON Lines) or position
(array) and make the exit status 1. Files over 1 MB (or any, with
``--progress``) show their progress on stderr (:mod:`headwater.cli.progress`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from headwater.errors import HeadwaterError

if TYPE_CHECKING:
    from headwater.store import Store

__all__ = ["ingest"]

_PROGRESS_MIN_BYTES = 1024 * 1024  # show progress for files larger than this


@dataclass
class _Tally:
    received: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Item:
    where: str  # "line 12" or "event [3]"
    event: Any  # decoded JSON, or a _Broken marker for an undecodable line


@dataclass(frozen=True)
class _Broken:
    reason: str


@click.command()
@click.argument("source", type=click.File("rb"), metavar="FILE|-")
@click.option("--db", "db_url", metavar="URL",
              help="Store URL to write into. [HEADWATER_DB_URL; the default SQLite store]")
@click.option("--url", "server_url", metavar="URL",
              help="Post to this running headwater server instead of writing the store.")
@click.option("--api-key", help="Bearer token for --url. [HEADWATER_API_KEY]")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=500, show_default=True,
              help="Events per transaction / per POST.")
@click.option("--progress/--no-progress", default=None,
              help="Show progress on stderr: a bar on a terminal, else a line every "
              "--status-interval seconds. [on for files over 1 MB]")
@click.option("--status-interval", type=click.FloatRange(0), default=10.0, show_default=True,
              metavar="SECONDS",
              help="Seconds between progress lines when stderr is not a terminal.")
@click.option("--namespace-rules", "namespace_rules", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Map dataset names by this namespace rules file (docs/namespaces.md). "
                   "[HEADWATER_NAMESPACE_RULES]")
def ingest(source: IO[bytes], db_url: str | None, server_url: str | None, api_key: str | None,
           batch_size: int, progress: bool | None, status_interval: float,
           namespace_rules: Path | None) -> None:
    """Ingest the OpenLineage events in FILE (JSON array, one event, or JSON Lines; - is stdin)."""
    from headwater.config import Settings

    if db_url and server_url:
        raise click.UsageError("give --db or --url, not both")
    if namespace_rules and server_url:
        raise click.UsageError("--namespace-rules applies to --db; a server applies its own")
    settings = Settings.from_env(db_url=db_url, api_key=api_key,
                                 namespace_rules=namespace_rules)
    size = _file_size(source)
    show = progress if progress is not None else (size is not None and size > _PROGRESS_MIN_BYTES)
    tally = _Tally()
    try:
        if server_url:
            sink = _http_sink(server_url.rstrip("/"), settings.api_key, tally)
            _run(source, size, show, batch_size, sink, status_interval)
        else:
            from headwater.server.app import open_store

            store = open_store(settings)
            try:
                _run(source, size, show, batch_size, _store_sink(store, tally), status_interval)
            finally:
                store.close()
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc

    for message in tally.rejected:
        click.echo(f"rejected {message}", err=True)
    click.echo(
        f"ingested {tally.stored} of {tally.received} events "
        f"({tally.stored - tally.duplicates} new, {tally.duplicates} duplicates, "
        f"{len(tally.rejected)} rejected)"
    )
    if tally.rejected:
        raise SystemExit(1)


_Sink = Callable[[list[_Item]], None]


def _run(source: IO[bytes], size: int | None, show: bool, batch_size: int, sink: _Sink,
         interval: float) -> None:
    items, count = _read_items(source)
    if not show:
        for batch in _batches(items, batch_size):
            sink(batch)
        return
    from headwater.cli.progress import EventProgress

    # A JSON array is decoded whole, so its events are counted; JSON Lines stream, so
    # the bar follows the bytes read while the rate counts events.
    by_events = count is not None
    progress = EventProgress("ingesting", total=count if by_events else size,
                             total_in="events" if by_events else "bytes", interval=interval,
                             echo=lambda line: click.echo(line, err=True))
    with progress:
        done = 0
        for batch in _batches(items, batch_size):
            sink(batch)
            done += len(batch)
            position = None if by_events or not source.seekable() else source.tell()
            progress.update(done, position)


def _store_sink(store: Store, tally: _Tally) -> _Sink:
    from headwater.server.ingest import ingest_batch

    def sink(batch: list[_Item]) -> None:
        tally.received += len(batch)
        decoded = [item for item in batch if not isinstance(item.event, _Broken)]
        for item in batch:
            if isinstance(item.event, _Broken):
                tally.rejected.append(f"{item.where}: {item.event.reason}")
        outcome = ingest_batch(store, [item.event for item in decoded])
        for failed in outcome.failed:
            tally.rejected.append(f"{decoded[failed.index].where}: {failed.reason}")
        tally.stored += outcome.successful
        tally.duplicates += outcome.duplicates

    return sink


def _http_sink(base_url: str, api_key: str | None, tally: _Tally) -> _Sink:
    from headwater.client import Client, ClientError

    client = Client(base_url, token=api_key, timeout=60.0)

    def sink(batch: list[_Item]) -> None:
        tally.received += len(batch)
        decoded = [item for item in batch if not isinstance(item.event, _Broken)]
        for item in batch:
            if isinstance(item.event, _Broken):
                tally.rejected.append(f"{item.where}: {item.event.reason}")
        if not decoded:
            return
        try:
            result = client.ingest_batch([i.event for i in decoded])
        except ClientError as exc:
            raise click.ClickException(f"{base_url}: {exc}") from exc
        for failed in result.failed_events:
            tally.rejected.append(f"{decoded[failed.index].where}: {failed.reason}")
        tally.stored += result.summary.successful
        tally.duplicates += result.summary.duplicates

    return sink


def _read_items(source: IO[bytes]) -> tuple[Iterator[_Item], int | None]:
    """Events from a JSON array (with their count), one JSON object, or JSON Lines."""
    if _peek_first_byte(source) == b"[":
        data = _load_whole(source)
        return (_Item(f"event [{i}]", event) for i, event in enumerate(data)), len(data)
    return _read_lines(source), None


def _read_lines(source: IO[bytes]) -> Iterator[_Item]:
    """JSON Lines, unless the first line alone is not JSON (a pretty-printed object)."""
    line_no = 0
    for raw in source:
        line_no += 1
        if line_no == 1 and raw.strip() and not _parses(raw):
            yield _Item("event", _decode_or_broken(raw + source.read()))
            return
        if not raw.strip():
            continue
        yield _Item(f"line {line_no}", _decode_or_broken(raw))


def _load_whole(source: IO[bytes]) -> list[Any]:
    from headwater.server.body import decode_json
    from headwater.server.handlers import RequestError

    try:
        data = decode_json(source.read())
    except RequestError as exc:
        raise click.ClickException(f"the file is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise click.ClickException("expected a JSON array of events")
    return data


def _decode_or_broken(raw: bytes) -> Any:
    # The server's decoder, so a file is held to the same strict JSON as the API.
    from headwater.server.body import decode_json
    from headwater.server.handlers import RequestError

    try:
        return decode_json(raw)
    except RequestError as exc:
        return _Broken(str(exc))


def _parses(raw: bytes) -> bool:
    return not isinstance(_decode_or_broken(raw), _Broken)


def _peek_first_byte(source: IO[bytes]) -> bytes:
    """The first non-whitespace byte, without consuming the stream."""
    peek = getattr(source, "peek", None)
    if callable(peek):
        head = peek(4096)
        stripped = head.lstrip()
        if stripped:
            return bytes(stripped[:1])
    if source.seekable():
        position = source.tell()
        head = source.read(4096)
        source.seek(position)
        return head.lstrip()[:1]
    return b""


def _batches(items: Iterator[_Item], size: int) -> Iterator[list[_Item]]:
    batch: list[_Item] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _file_size(source: IO[bytes]) -> int | None:
    try:
        return os.fstat(source.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return None
