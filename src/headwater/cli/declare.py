"""``headwater declare job JOB_ID --input DATASET_ID ...``: static lineage by hand.

A job no OpenLineage producer reports (a BI dashboard, a report, an export) is
declared with the datasets it reads and writes, so it sits in the graph and in
impact answers. The declaration is a JobEvent, stored like one a producer sends:
a later declaration of the job replaces it.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import click

from headwater.cli.querying import Target, target_options

__all__ = ["declare"]


def _node(value: str, prefix: str, option: str) -> tuple[str, str]:
    """(namespace, name) of a ``prefix:NAMESPACE:NAME`` id; a usage error otherwise."""
    from headwater.graph.model import NodeId

    try:
        node = NodeId.parse(value)
    except ValueError:
        node = None
    if node is None or node.type.prefix != prefix or node.field or node.version:
        raise click.BadParameter(
            f"{value!r} is not a {prefix} id ({prefix}:NAMESPACE:NAME)", param_hint=option
        )
    return node.namespace, node.name


@click.group()
def declare() -> None:
    """Declare lineage no producer reports (static lineage)."""


@declare.command("job")
@click.argument("job_id")
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="DATASET_ID",
    help="A dataset the job reads (dataset:NAMESPACE:NAME); repeat for more.",
)
@click.option(
    "--output",
    "outputs",
    multiple=True,
    metavar="DATASET_ID",
    help="A dataset the job writes; repeat for more.",
)
@click.option(
    "--type",
    "job_type",
    type=click.Choice(["BATCH", "STREAM", "SERVICE"]),
    default="BATCH",
    show_default=True,
)
@click.option("--description", help="What the job is (a dashboard's title).")
@target_options
def declare_job(
    job_id: str,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    job_type: str,
    description: str | None,
    url: str,
    db_url: str | None,
) -> None:
    """Declare that JOB_ID (job:NAMESPACE:NAME) reads the --input and writes the
    --output datasets, replacing what it declared before.

    The datasets must exist. Through a server this is Marquez's
    PUT /api/v1/namespaces/{namespace}/jobs/{job} (a token with the admin scope),
    after creating the job's namespace if it is new.
    """
    namespace, name = _node(job_id, "job", "JOB_ID")
    body: dict[str, Any] = {
        "type": job_type,
        "inputs": [
            dict(zip(("namespace", "name"), _node(d, "dataset", "--input"), strict=True))
            for d in inputs
        ],
        "outputs": [
            dict(zip(("namespace", "name"), _node(d, "dataset", "--output"), strict=True))
            for d in outputs
        ],
    }
    if description is not None:
        body["description"] = description
    target = Target(url, db_url)
    if db_url:
        answer = target.get("", {}, _on_db, namespace, name, body)
    else:
        base = f"/api/v1/namespaces/{quote(namespace, safe='')}"
        if not _namespace_exists(target, base):
            # Marquez's job write needs its namespace; a job event would make it too.
            target.send("PUT", base, {"ownerName": "headwater"})
        answer = target.send("PUT", f"{base}/jobs/{quote(name, safe='')}", body)
    click.echo(
        json.dumps(
            {
                "job": job_id,
                "inputs": list(inputs),
                "outputs": list(outputs),
                "updatedAt": answer.get("updatedAt"),
            },
            indent=2,
        )
    )


def _namespace_exists(target: Target, path: str) -> bool:
    try:
        target.get(path, {}, _unused)
    except click.ClickException as exc:
        if "HTTP 404" in exc.message:
            return False
        raise
    return True


def _unused(conn: Any) -> dict[str, Any]:
    raise AssertionError("asked only of a server")


def _on_db(conn: Any, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    """Store the declaring JobEvent through ``conn``'s store, as the server's route does."""
    from headwater.errors import NotFoundError
    from headwater.events import parse_event
    from headwater.server.routes import legacy_events as legacy
    from headwater.store import Store
    from headwater.store.reads import datasets as dataset_reads

    job = legacy.JobBody.model_validate(body)
    for side in ("inputs", "outputs"):
        items = getattr(job, side)
        found = dataset_reads.dataset_rows_by_keys(conn, [(d.namespace, d.name) for d in items])
        known = {(row.namespace, row.name) for row in found}
        for item in items:
            if (item.namespace, item.name) not in known:
                raise NotFoundError(
                    f"dataset '{item.name}' not found in namespace '{item.namespace}'"
                )
    event = legacy.job_event(namespace, name, job, legacy.now())
    store = Store.open(str(conn.engine.url.render_as_string(hide_password=False)), migrate=False)
    try:
        store.record([parse_event(event)])
    finally:
        store.close()
    return {"updatedAt": event["eventTime"]}
