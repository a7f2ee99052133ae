"""AsyncClient over httpx.ASGITransport against the same in-process app as the blocking
client: the same methods, awaited, give the same results."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from headwater.client import AsyncClient, Client, NotFound, models
from tests.graph.retail import col, ds


def _run(app: Any, work: Any) -> Any:
    async def main() -> Any:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport) as http:
            async with AsyncClient("http://asgi", http=http, strict=True) as client:
                return await work(client)

    return asyncio.run(main())


def test_async_answers_equal_the_blocking_ones(app: Any, client: Client) -> None:
    async def work(aclient: AsyncClient) -> tuple[Any, ...]:
        return (
            await aclient.upstream(ds("gold.revenue"), depth=2),
            await aclient.impact(col("silver.orders", "amount")),
            await aclient.dataset("warehouse", "gold.revenue"),
            await aclient.search("revenue"),
            [d.name async for d in aclient.iter_datasets("warehouse", limit=2)],
            await aclient.classification("dataset:file:/silver/customers"),
        )

    up, impact, dataset, found, names, classified = _run(app, work)
    assert isinstance(up, models.DirectedLineage)
    assert up == client.upstream(ds("gold.revenue"), depth=2)
    assert impact == client.impact(col("silver.orders", "amount"))
    assert dataset == client.dataset("warehouse", "gold.revenue")
    assert found == client.search("revenue")
    assert names == [d.name for d in client.iter_datasets("warehouse", limit=100)]
    assert classified == client.classification("dataset:file:/silver/customers")


def test_async_ingest_gzip_and_errors(app: Any, client: Client) -> None:
    from tests.api.retail_events import events

    async def work(aclient: AsyncClient) -> Any:
        stored = await aclient.ingest_batch(events()[:4], gzip=True)
        with pytest.raises(NotFound):
            await aclient.run("00000000-0000-4000-8000-0000000fffff")
        return stored

    stored = _run(app, work)
    assert stored.summary.received == 4 and stored.summary.duplicates == 4
