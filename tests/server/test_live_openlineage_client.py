"""The real openlineage-python client (HTTP transport) posts to a running ``headwater serve``."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset
from openlineage.client.transport.http import (
    ApiKeyTokenProvider,
    HttpCompression,
    HttpConfig,
    HttpTransport,
)

from headwater.store import Store
from headwater.store.tables import events as events_table
from tests.server.live import running_server

pytestmark = [pytest.mark.live, pytest.mark.slow]

PRODUCER = "https://github.com/headwater/headwater/tests/live"


def _events() -> list[RunEvent | DatasetEvent]:
    run = Run(runId=str(uuid.uuid4()))
    job = Job(namespace="live", name="orders_to_silver")
    schema = schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name="order_id", type="long")]
    )
    lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            "order_id": column_lineage_dataset.Fields(
                inputFields=[column_lineage_dataset.InputField(
                    namespace="s3a://lake", name="bronze/orders", field="id")],
            )
        }
    )
    now = datetime.now(UTC).isoformat()
    inputs = [InputDataset(namespace="s3a://lake", name="bronze/orders", facets={"schema": schema})]
    outputs = [OutputDataset(namespace="s3://lake", name="silver/orders",
                             facets={"schema": schema, "columnLineage": lineage})]
    return [
        RunEvent(eventType=RunState.START, eventTime=now, run=run, job=job, inputs=inputs,
                 outputs=outputs, producer=PRODUCER),
        RunEvent(eventType=RunState.COMPLETE, eventTime=now, run=run, job=job, inputs=inputs,
                 outputs=outputs, producer=PRODUCER),
        DatasetEvent(eventTime=now, dataset=StaticDataset(namespace="s3://lake", name="gold/kpis"),
                     producer=PRODUCER),
    ]


@pytest.mark.parametrize("compression", [None, HttpCompression.GZIP], ids=["plain", "gzip"])
def test_openlineage_python_client_posts_to_headwater_serve(
    db_url: str, compression: HttpCompression | None
) -> None:
    with running_server("--db", db_url, "--api-key", "live-key") as url:
        transport = HttpTransport(HttpConfig(
            url=url,
            auth=ApiKeyTokenProvider({"apiKey": "live-key"}),
            compression=compression,
        ))
        client = OpenLineageClient(transport=transport)
        for event in _events():
            client.emit(event)
        client.close()

    with Store.open(db_url, migrate=False) as store:
        assert store.counts()["events"] == 3
        with store.engine.connect() as conn:
            payloads = [json.loads(p) for p in conn.scalars(sa.select(events_table.c.payload))]
    complete = next(p for p in payloads if p.get("eventType") == "COMPLETE")
    assert complete["inputs"][0]["namespace"] == "s3://lake"  # s3a normalised at ingest
    column = complete["outputs"][0]["facets"]["columnLineage"]["fields"]["order_id"]
    assert column["inputFields"][0]["namespace"] == "s3://lake"
    assert complete["producer"] == PRODUCER


def test_wrong_api_key_is_refused_by_the_live_server(db_url: str) -> None:
    with running_server("--db", db_url, "--api-key", "right") as url:
        transport = HttpTransport(HttpConfig(url=url, auth=ApiKeyTokenProvider({"apiKey": "wrong"}),
                                             retry={"total": 0}))
        client = OpenLineageClient(transport=transport)
        with pytest.raises(Exception, match="401"):
            client.transport.emit(_events()[0])
        client.close()
    with Store.open(db_url, migrate=False) as store:
        assert store.counts()["events"] == 0
