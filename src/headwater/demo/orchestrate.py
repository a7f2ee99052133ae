"""``run_demo``: embedded server + instrumented retail pipeline + summary (+ keep serving).

Everything lives in one data directory: the SQLite store (``headwater.db``),
the lake the pipeline writes (``raw``, ``lake``, ``warehouse``, ``metastore``,
``models``), one log per step (``logs``) and the agent's spool. Running the
demo again reuses all of it: the jobs overwrite their outputs, so the store
gains new runs and new dataset versions, never duplicate datasets or jobs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from rich.console import Console

from headwater.config import Settings
from headwater.demo.realtime import ORDERS_TOPIC, SCORES_TOPIC, RealtimeHalf, RealtimeUnavailable
from headwater.demo.runner import PipelineResult, run_pipeline
from headwater.demo.server import EmbeddedServer, free_port
from headwater.demo.steps import PIPELINE_JOB, PIPELINE_NAMESPACE
from headwater.errors import ConfigError

__all__ = ["DEFAULT_DATA_DIR", "DemoResult", "run_demo"]

logger = logging.getLogger(__name__)

DEFAULT_DATA_DIR = Path(".headwater-demo")

# Store tables a newcomer wants counted first, with their labels.
_HEADLINE = (
    ("datasets", "datasets"),
    ("jobs", "jobs"),
    ("runs", "runs"),
    ("dataset_versions", "dataset versions"),
    ("column_lineage", "column-lineage edges"),
)


@dataclass
class DemoResult:
    """What one ``run_demo`` call did."""

    data_dir: Path
    url: str
    pipelines: list[PipelineResult] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    realtime: bool = False  # the real-time half ran on a Kafka broker


def run_demo(
    data_dir: Path = DEFAULT_DATA_DIR,
    scale: str = "small",
    drift: bool = False,
    serve: bool = True,
    host: str = "127.0.0.1",
    port: int = 5000,
    console: Console | None = None,
    streaming: bool = True,
    kafka_bootstrap: str | None = None,
    with_connect: bool = False,
) -> DemoResult:
    """Run the retail pipeline instrumented against an embedded server and summarise it.

    ``drift=True`` runs the pipeline on the changed upstream export, its
    real-time half included (the producer writes the drifted orders to the
    topic); if the store holds no earlier pipeline run, a normal run goes first
    so there is a before and an after to compare. ``port=0``, or a taken port,
    picks a free one. With ``serve=True`` the server keeps running until
    interrupted.

    ``streaming`` adds the real-time half on a Kafka broker started here (or
    on ``kafka_bootstrap``); when it cannot start, the demo says why and runs
    the batch steps. ``with_connect`` feeds the orders topic from a Kafka
    Connect FileStreamSource too.
    """
    from headwater.server.app import open_store

    # No wrapping: the URLs printed below must stay copyable in narrow terminals and logs.
    console = console or Console(soft_wrap=True)
    data_dir = data_dir.expanduser().resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=data_dir, host=host, port=port)
    if port == 0 or not _port_free(host, port):
        settings = settings.replace(port=free_port(host))
        if port:
            console.print(f"(port {port} is taken; using {settings.port})")
    console.print(f"data directory: {data_dir}")
    store = open_store(settings)
    try:
        server = EmbeddedServer(settings, store)
        server.start()
        result = DemoResult(data_dir=data_dir, url=server.url)
        realtime, skipped = _realtime(
            console, streaming, kafka_bootstrap, with_connect, data_dir / "kafka-port"
        )
        result.realtime = realtime is not None
        try:
            runs = [drift] if not drift or _has_pipeline_run(server.url) else [False, True]
            try:
                for drifted in runs:
                    what = " on the drifted raw source" if drifted else ""
                    console.print(f"\nrunning the retail pipeline{what} (scale {scale})")
                    pipeline = run_pipeline(
                        data_dir,
                        server.url,
                        scale=scale,
                        drift=drifted,
                        console=console,
                        realtime=realtime,
                        realtime_skipped=skipped,
                    )
                    result.pipelines.append(pipeline)
                    _print_run(console, pipeline)
            finally:
                # The streams ran with the availableNow trigger and have stopped; the
                # broker (and a Connect worker) go before serving.
                if realtime is not None:
                    realtime.finish()
            result.counts = store.counts()
            _print_summary(console, result)
            if serve:
                console.print(f"\nserving at {server.url}   (Ctrl+C to stop)")
                server.wait()
            else:
                console.print(f"\nto explore later: headwater serve --data-dir {data_dir}")
        finally:
            server.stop()
    finally:
        store.close()
    return result


def _realtime(
    console: Console,
    streaming: bool,
    bootstrap: str | None,
    with_connect: bool,
    port_file: Path | None = None,
) -> tuple[RealtimeHalf | None, str]:
    """The real-time half, or None and why it is skipped."""
    if not streaming:
        return None, "--no-streaming"
    try:
        realtime = RealtimeHalf(bootstrap, with_connect=with_connect, port_file=port_file)
    except RealtimeUnavailable as exc:
        console.print(f"real-time half skipped: {exc}")
        return None, "Kafka is not available"
    console.print(f"Kafka broker at {realtime.bootstrap} (topics {ORDERS_TOPIC}, {SCORES_TOPIC})")
    return realtime, ""


def _port_free(host: str, port: int) -> bool:
    from headwater.server.run import port_is_free

    try:
        return port_is_free(host, port)
    except OSError as exc:
        raise ConfigError(f"cannot use {host}:{port}: {exc}") from exc


def _has_pipeline_run(url: str) -> bool:
    """True if the server already holds a run of the demo's orchestrator job."""
    import httpx

    response = httpx.get(
        f"{url}/api/v1/namespaces/{PIPELINE_NAMESPACE}/jobs/{PIPELINE_JOB}/runs", timeout=10.0
    )
    return response.status_code == 200 and bool(response.json().get("runs"))


def _print_run(console: Console, pipeline: PipelineResult) -> None:
    ran = [s for s in pipeline.steps if s.status == "ok"]
    console.print(f"pipeline run {pipeline.run_id}: {len(ran)} steps in {pipeline.seconds:.0f} s")
    for step in pipeline.steps:
        if step.status == "skipped":
            console.print(f"  skipped {step.step.name}: {step.reason}")


def _print_summary(console: Console, result: DemoResult) -> None:
    parts = [f"{result.counts.get(key, 0)} {label}" for key, label in _HEADLINE]
    console.print("\nlineage store: " + ", ".join(parts))
    url = result.url
    revenue = result.data_dir / "lake" / "gold" / "revenue_daily"
    node = quote(f"dataset:file:{revenue}", safe="")
    console.print("explore:")
    console.print(f"  web UI:         {url}/")
    console.print(f"  jobs:           {url}/api/v1/namespaces/{PIPELINE_NAMESPACE}/jobs")
    runs = f"{url}/api/v1/namespaces/{PIPELINE_NAMESPACE}/jobs/{PIPELINE_JOB}/runs"
    console.print(f"  pipeline runs:  {runs}")
    upstream = f"{url}/api/v2/lineage?nodeId={node}&direction=upstream"
    console.print(f"  revenue_daily upstream: {upstream}")
    if result.realtime:
        console.print(f"  the scores topic:       {url}/api/v1/search?q={quote(SCORES_TOPIC)}")
