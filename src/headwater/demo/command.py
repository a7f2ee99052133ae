"""The ``headwater demo`` click command: run the retail pipeline with lineage, then serve it."""

from __future__ import annotations

from pathlib import Path

import click

from headwater.errors import HeadwaterError

__all__ = ["demo"]

_SCALES = ("tiny", "small", "medium")


@click.command()
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".headwater-demo"),
    show_default=True,
    envvar="HEADWATER_DEMO_DIR",
    help="Where the store, the lake and the logs go (reused by later runs).",
)
@click.option(
    "--scale",
    type=click.Choice(_SCALES),
    default="small",
    show_default=True,
    help="Size of the generated raw data.",
)
@click.option(
    "--drift",
    is_flag=True,
    help="Rerun on a changed raw source: customer ids become strings, "
    "customers.phone is renamed phone_number; the real-time half runs too, "
    "so the orders topic carries the string ids.",
)
@click.option(
    "--serve/--no-serve",
    "serve",
    default=True,
    show_default=True,
    help="Keep serving the lineage until interrupted.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=5000,
    show_default=True,
    help="Port to serve on (0, or a taken port: a free one).",
)
@click.option(
    "--streaming/--no-streaming",
    "streaming",
    default=True,
    show_default=True,
    help="Run the real-time half on a local Kafka broker (skipped, saying why, "
    "when the broker cannot start).",
)
@click.option(
    "--with-connect",
    is_flag=True,
    help="Also feed the orders topic from a Kafka Connect FileStreamSource.",
)
def demo(
    data_dir: Path,
    scale: str,
    drift: bool,
    serve: bool,
    host: str,
    port: int,
    streaming: bool,
    with_connect: bool,
) -> None:
    """Run a PySpark retail lakehouse pipeline with lineage and explore it.

    Starts a headwater server on a local SQLite store, runs the pipeline's
    jobs (bronze, silver, gold, features, model training, batch scoring; then
    order events into Kafka, a stream into a Delta table, live gold and
    features, streaming scoring into a topic) each as its own instrumented
    Spark application under one orchestrator run, prints what was captured and
    where to look, and keeps serving.
    """
    from headwater.demo.orchestrate import run_demo

    if with_connect and not streaming:
        raise click.UsageError("--with-connect feeds the real-time half: drop --no-streaming")
    try:
        run_demo(
            data_dir=data_dir,
            scale=scale,
            drift=drift,
            serve=serve,
            host=host,
            port=port,
            streaming=streaming,
            with_connect=with_connect,
        )
    except HeadwaterError as exc:
        raise click.ClickException(str(exc)) from exc
