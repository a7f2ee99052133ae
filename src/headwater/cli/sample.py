"""``headwater sample``: a local headwater loaded with a sample retail pipeline's lineage, no Spark.

``headwater demo`` runs the real PySpark pipeline; this loads a fixed set of
events in a second, for trying the API and the UI.

Creates the data folder (``./.headwater`` unless ``--data-dir``/``HEADWATER_DATA_DIR``
says otherwise), loads the sample events shipped in :mod:`headwater.samples`
into its SQLite store, prints what is there and the URL, and serves until
interrupted (``--no-serve`` exits after loading). The sample is deterministic,
so a second run finds every event already stored and changes nothing.
"""

from __future__ import annotations

from typing import Any

import click

from headwater.cli.serve import server_options, settings_from_options
from headwater.errors import HeadwaterError

__all__ = ["sample"]


@click.command()
@server_options
@click.option("--serve/--no-serve", "keep_serving", default=True, show_default=True,
              help="Serve the loaded store until interrupted.")
def sample(keep_serving: bool, **options: Any) -> None:
    """Load fixed sample retail lineage (no Spark needed) and serve it."""
    from headwater.samples import JOB_NAMESPACE, retail_events
    from headwater.server.app import open_store
    from headwater.server.ingest import ingest_batch
    from headwater.server.run import port_is_free, redact_url, run_server

    try:
        settings = settings_from_options(options)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        click.echo(f"data folder: {settings.data_dir.resolve()}")
        click.echo(f"store:       {redact_url(settings.database_url)}")
        store = open_store(settings)
        try:
            outcome = ingest_batch(store, retail_events())
            new = outcome.successful - outcome.duplicates
            click.echo(
                f"sample:      {outcome.received} events "
                f"({new} new, {outcome.duplicates} already loaded, {len(outcome.failed)} rejected)"
            )
            click.echo("contents:    " + _summary(store.counts()))
            if not keep_serving:
                return
            if not port_is_free(settings.host, settings.port):
                settings = settings.replace(port=_free_port(settings.host))
                click.echo(f"(the usual port is taken; using {settings.port})")
            url = settings.base_url
            click.echo(f"\nheadwater sample lineage at {url}   (Ctrl+C to stop)")
            click.echo(f"  jobs:   {url}/api/v1/namespaces/{JOB_NAMESPACE}/jobs")
            click.echo(f"  health: {url}/api/v1/health")
            run_server(settings, store)
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc


# What a newcomer wants to see first; other non-empty tables follow.
_HEADLINE = {"jobs": "jobs", "datasets": "datasets", "runs": "runs",
             "dataset_versions": "dataset versions", "column_lineage": "column-lineage edges",
             "events": "raw events"}


def _summary(counts: dict[str, int]) -> str:
    parts = [f"{counts[key]} {label}" for key, label in _HEADLINE.items() if counts.get(key)]
    return ", ".join(parts) or "empty"


def _free_port(host: str) -> int:
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
