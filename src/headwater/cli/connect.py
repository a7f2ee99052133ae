"""``headwater connect watch``: Kafka Connect lineage from the Connect REST API.

Events go where ``--url`` (an OpenLineage HTTP endpoint such as ``headwater
serve``) or ``--file`` (JSONL, for ``headwater ingest``) says, else to standard
output as JSON lines. See docs/connect.md.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from pathlib import Path
from typing import Any

import click

from headwater.config import parse_duration
from headwater.errors import HeadwaterError

__all__ = ["connect"]

logger = logging.getLogger(__name__)


def _duration(ctx: click.Context, param: click.Parameter, value: str) -> float:
    try:
        return parse_duration(value, f"--{param.name}")
    except HeadwaterError as exc:
        raise click.BadParameter(str(exc)) from exc


def _optional_duration(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> float | None:
    return None if value is None else _duration(ctx, param, value)


def _default_state(connect_url: str) -> Path:
    safe = "".join(c if c.isalnum() else "_" for c in connect_url.split("://", 1)[-1])
    return Path(".headwater") / f"connect-{safe.strip('_')}.json"


@click.group()
def connect() -> None:
    """Kafka Connect lineage: connectors as jobs, their files, tables and topics as datasets."""


@connect.command()
@click.option(
    "--connect-url",
    required=True,
    metavar="URL",
    help="The Connect cluster's REST API, e.g. http://connect:8083.",
)
@click.option(
    "--bootstrap-servers",
    metavar="LIST",
    envvar="HEADWATER_CONNECT_BOOTSTRAP_SERVERS",
    help="The Kafka cluster the Connect workers use (their bootstrap.servers); names "
    "topics kafka://<first host:port>, as the agent does, and resolves topics.regex. "
    "[HEADWATER_CONNECT_BOOTSTRAP_SERVERS]",
)
@click.option(
    "--namespace",
    metavar="NAME",
    help="Job namespace of the connectors. [kafka-connect://<host:port of --connect-url>]",
)
@click.option(
    "--interval",
    default="10s",
    callback=_duration,
    metavar="DURATION",
    help="Time between polls (10s, 1m). [10s]",
)
@click.option(
    "--state",
    "state_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="State file: a restarted watcher with the same file continues the same "
    "runs and sends nothing twice. [.headwater/connect-<url>.json]",
)
@click.option(
    "--url",
    metavar="URL",
    envvar="OPENLINEAGE_URL",
    help="Send events to this OpenLineage HTTP endpoint (a headwater server's "
    "base URL). [OPENLINEAGE_URL]",
)
@click.option(
    "--api-key",
    metavar="TOKEN",
    envvar="OPENLINEAGE_API_KEY",
    help="Bearer token for --url. [OPENLINEAGE_API_KEY]",
)
@click.option(
    "--file",
    "file_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Append events to this JSONL file instead (for headwater ingest).",
)
@click.option(
    "--heartbeat",
    callback=_optional_duration,
    metavar="DURATION",
    help="Send RUNNING for a live connector whose run has sent nothing for this long "
    "(10m, 1h), so a silent watcher shows. [off]",
)
@click.option("--once", is_flag=True, help="Poll once, send what changed, and exit.")
def watch(
    connect_url: str,
    bootstrap_servers: str | None,
    namespace: str | None,
    interval: float,
    state_path: Path | None,
    url: str | None,
    api_key: str | None,
    file_path: Path | None,
    heartbeat: float | None,
    once: bool,
) -> None:
    """Watch a Kafka Connect cluster and emit OpenLineage events for its connectors.

    One job per connector, one run per incarnation: START when it appears,
    RUNNING when its state (paused, stopped, running), tasks, configuration or
    datasets change, FAIL with the failed task's trace, COMPLETE when it is
    deleted. Secrets in configurations and traces are redacted first.
    """
    from headwater.connect import ConnectClient, ConnectUnavailable, ConnectWatcher
    from headwater.transport import create_transport

    if url and file_path:
        raise click.UsageError("give --url or --file, not both")
    transport_config: dict[str, Any] | None = None
    if url:
        transport_config = {"type": "http", "url": url}
        if api_key:
            transport_config["auth"] = {"type": "api_key", "apiKey": api_key}
    elif file_path:
        transport_config = {"type": "file", "location": str(file_path)}
    try:
        transport = create_transport(transport_config) if transport_config else None
        client = ConnectClient(connect_url)
        watcher = ConnectWatcher(
            client,
            _deliver(transport) if transport else _print,
            namespace=namespace,
            bootstrap_servers=bootstrap_servers,
            state_path=state_path or _default_state(connect_url),
            heartbeat=heartbeat,
        )
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    if not bootstrap_servers:
        click.echo(
            "no --bootstrap-servers: topics are named only where a connector's own "
            "configuration gives its cluster",
            err=True,
        )
    try:
        if once:
            sent = watcher.poll()
            click.echo(f"{len(sent)} event(s) sent", err=True)
            return
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        click.echo(f"watching {connect_url} every {interval:g}s (Ctrl+C stops)", err=True)
        try:
            watcher.run(interval, stop)
        except KeyboardInterrupt:
            pass
    except ConnectUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        client.close()
        if transport is not None:
            transport.close(5.0)


def _print(events: list[dict[str, Any]]) -> None:
    """No destination given: each event as one JSON line on standard output."""
    for event in events:
        click.echo(json.dumps(event, separators=(",", ":")))


def _deliver(transport: Any) -> Any:
    from headwater.transport import DeliveryError

    def emit(events: list[dict[str, Any]]) -> None:
        failures = transport.emit_batch(events)
        for failure in failures:
            if not failure.retriable:
                logger.warning("event %d refused: %s", failure.index, failure.reason)
        retry = [f for f in failures if f.retriable]
        if retry:
            raise DeliveryError(
                f"{len(retry)} event(s) not delivered: {retry[0].reason}", retriable=True
            )

    return emit
