"""A lineage graph spanning a team's namespaces and a canary's, for the namespace-scope tests.

The team sees jobs in ``teama`` and datasets in ``s3://teama-lake``. Everything of the
canary's -- namespaces, datasets, jobs, columns, run facets, a symlink's table --
holds the word ``canary``, and nothing of the team's does, so a response body that
holds it shows something crossed the boundary. The graph crosses it every way it
can: a canary job writes a team dataset and reads one, a team job reads a canary
dataset, a canary job sits between two team datasets, a team run's parent is a
canary run and a canary run's parent is a team run.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CANARY",
    "CANARY_JOBS",
    "CANARY_LAKE",
    "CANARY_PARENT_RUN",
    "CANARY_READER_RUN",
    "TEAM_APP_RUN",
    "TEAM_CLEAN_RUN",
    "TEAM_JOBS",
    "TEAM_LAKE",
    "TEAM_ORPHAN_RUN",
    "blocks",
    "events",
]

CANARY = "canary"
TEAM_JOBS = "teama"
TEAM_LAKE = "s3://teama-lake"
CANARY_JOBS = "canaryjobs"
CANARY_LAKE = "s3://canary-lake"

TEAM_APP_RUN = "11111111-1111-4111-8111-000000000001"
TEAM_CLEAN_RUN = "11111111-1111-4111-8111-000000000002"
TEAM_ORPHAN_RUN = "11111111-1111-4111-8111-000000000003"
CANARY_WRITER_RUN = "22222222-2222-4222-8222-000000000001"
CANARY_READER_RUN = "22222222-2222-4222-8222-000000000002"
CANARY_PARENT_RUN = "22222222-2222-4222-8222-000000000003"
CANARY_BRIDGE_RUN = "22222222-2222-4222-8222-000000000004"

_PRODUCER = "https://github.com/headwater/headwater/tests"
_RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_DATASET_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"


def _facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": _PRODUCER, "_schemaURL": f"{_PRODUCER}/facet.json", **fields}


def _dataset(
    namespace: str,
    name: str,
    fields: list[str],
    lineage: dict[str, list[tuple[str, str, str]]] | None = None,
    **facets: Any,
) -> dict[str, Any]:
    found = {"schema": _facet(fields=[{"name": f, "type": "string"} for f in fields]), **facets}
    if lineage:
        found["columnLineage"] = _facet(
            fields={
                target: {
                    "inputFields": [
                        {
                            "namespace": ns,
                            "name": ds,
                            "field": field,
                            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                        }
                        for ns, ds, field in sources
                    ]
                }
                for target, sources in lineage.items()
            }
        )
    return {"namespace": namespace, "name": name, "facets": found}


def _parent(run_id: str, namespace: str, name: str) -> dict[str, Any]:
    return _facet(run={"runId": run_id}, job={"namespace": namespace, "name": name})


def _run(
    run_id: str,
    namespace: str,
    job: str,
    minute: int,
    *,
    inputs: list[dict[str, Any]] = (),
    outputs: list[dict[str, Any]] = (),  # type: ignore[assignment]
    run_facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-11-01T10:{minute:02d}:00.000Z",
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": namespace, "name": job, "facets": {}},
        "inputs": list(inputs),
        "outputs": list(outputs),
        "producer": _PRODUCER,
        "schemaURL": _RUN_EVENT,
    }


def events() -> list[dict[str, Any]]:
    """The events, in time order (each test posts them as one batch)."""
    canary_secret = _facet(note="canary_run_facet_secret")
    return [
        _run(
            CANARY_PARENT_RUN,
            CANARY_JOBS,
            "canary_parent_app",
            0,
            run_facets={"canary_custom": canary_secret},
        ),
        _run(TEAM_APP_RUN, TEAM_JOBS, "teama_app", 1),
        # A canary job writes a team dataset, from a canary one; the team dataset's
        # table is a canary metastore's.
        _run(
            CANARY_WRITER_RUN,
            CANARY_JOBS,
            "canary_secret_job",
            2,
            run_facets={"canary_custom": canary_secret},
            inputs=[
                _dataset(
                    CANARY_LAKE,
                    "canary_raw",
                    ["canary_col_ssn"],
                    tags=_facet(tags=[{"key": "canary_tag"}]),
                    dataSource=_facet(name="canary_source", uri="postgres://canary-host:5432"),
                )
            ],
            outputs=[
                _dataset(
                    TEAM_LAKE,
                    "orders_in",
                    ["order_id", "amount"],
                    {"order_id": [(CANARY_LAKE, "canary_raw", "canary_col_ssn")]},
                    symlinks=_facet(
                        identifiers=[
                            {
                                "namespace": "hive://canary-metastore",
                                "name": "canary_db.orders_in",
                                "type": "TABLE",
                            },
                        ]
                    ),
                )
            ],
        ),
        # The team's job reads its own dataset and a canary one.
        _run(
            TEAM_CLEAN_RUN,
            TEAM_JOBS,
            "teama_app.orders_clean",
            3,
            run_facets={"parent": _parent(TEAM_APP_RUN, TEAM_JOBS, "teama_app")},
            inputs=[
                _dataset(
                    TEAM_LAKE,
                    "orders_in",
                    ["order_id", "amount"],
                    tags=_facet(tags=[{"key": "pii", "field": "order_id"}]),
                    dataSource=_facet(name="teama_source", uri="s3://teama-lake"),
                ),
                # Its column is pii, which would propagate into the team's region.
                _dataset(
                    CANARY_LAKE,
                    "canary_lookup",
                    ["canary_lookup_col"],
                    tags=_facet(tags=[{"key": "pii", "field": "canary_lookup_col"}]),
                ),
            ],
            outputs=[
                _dataset(
                    TEAM_LAKE,
                    "orders_clean",
                    ["order_id", "amount", "region"],
                    {
                        "order_id": [(TEAM_LAKE, "orders_in", "order_id")],
                        "amount": [(TEAM_LAKE, "orders_in", "amount")],
                        "region": [(CANARY_LAKE, "canary_lookup", "canary_lookup_col")],
                    },
                )
            ],
        ),
        # A team job whose parent is a canary application.
        _run(
            TEAM_ORPHAN_RUN,
            TEAM_JOBS,
            "teama_report",
            4,
            run_facets={"parent": _parent(CANARY_PARENT_RUN, CANARY_JOBS, "canary_parent_app")},
            inputs=[_dataset(TEAM_LAKE, "orders_clean", ["order_id", "amount", "region"])],
            outputs=[_dataset(TEAM_LAKE, "orders_report", ["report_total"])],
        ),
        # A canary job reads a team dataset; its parent is the team's application.
        _run(
            CANARY_READER_RUN,
            CANARY_JOBS,
            "canary_reader_job",
            5,
            run_facets={
                "parent": _parent(TEAM_APP_RUN, TEAM_JOBS, "teama_app"),
                "canary_custom": canary_secret,
            },
            inputs=[_dataset(TEAM_LAKE, "orders_clean", ["order_id", "amount", "region"])],
            outputs=[
                _dataset(
                    CANARY_LAKE,
                    "canary_out",
                    ["canary_x"],
                    {"canary_x": [(TEAM_LAKE, "orders_clean", "order_id")]},
                )
            ],
        ),
        # A canary job between two team datasets.
        _run(
            CANARY_BRIDGE_RUN,
            CANARY_JOBS,
            "canary_bridge_job",
            6,
            run_facets={"canary_custom": canary_secret},
            inputs=[_dataset(TEAM_LAKE, "orders_in", ["order_id", "amount"])],
            outputs=[
                _dataset(
                    TEAM_LAKE,
                    "orders_bridged",
                    ["bridged_total"],
                    {"bridged_total": [(TEAM_LAKE, "orders_in", "amount")]},
                )
            ],
        ),
        {
            "eventTime": "2026-11-01T10:07:00Z",
            "producer": _PRODUCER,
            "schemaURL": _DATASET_EVENT,
            "dataset": _dataset(CANARY_LAKE, "canary_ds_event", ["canary_col"]),
        },
        {
            "eventTime": "2026-11-01T10:07:30Z",
            "producer": _PRODUCER,
            "schemaURL": _DATASET_EVENT,
            "dataset": _dataset(CANARY_LAKE, "canary_ds_event", ["canary_col", "canary_col2"]),
        },
        {
            "eventTime": "2026-11-01T10:08:00Z",
            "producer": _PRODUCER,
            "schemaURL": _DATASET_EVENT,
            "dataset": _dataset(TEAM_LAKE, "orders_report", ["report_total"]),
        },
        {
            "eventTime": "2026-11-01T10:09:00Z",
            "producer": _PRODUCER,
            "schemaURL": _DATASET_EVENT,
            "dataset": _dataset(TEAM_LAKE, "orders_report", ["report_count"]),
        },
    ]


def blocks() -> list[dict[str, Any]]:
    """Propagation blocks: one on a canary job's edge, one on all of a team job's."""
    return [
        {
            "job": f"job:{CANARY_JOBS}:canary_reader_job",
            "source": f"datasetField:{TEAM_LAKE}:orders_clean:order_id",
            "target": f"datasetField:{CANARY_LAKE}:canary_out:canary_x",
            "tag": "pii",
        },
        {"job": f"job:{TEAM_JOBS}:teama_app.orders_clean", "tag": "gdpr"},
    ]
