"""Coalesce concurrent single-event POSTs into one store call.

Each ``POST /api/v1/lineage`` carries one event. Handing each to the store on
its own thread costs a thread hop and a transaction per event; under many
concurrent producers that overhead, not the work, sets the rate. The
:class:`Coalescer` queues events on the event loop and has one drain task
write everything queued so far in a single ``store.record_events`` call (one
thread hop, one transaction), then the next lot. A lone request still goes out
at once — nothing waits for a timer.

Each request keeps its own outcome: if the store refuses an event of the lot
(:class:`~headwater.errors.EventError`), the lot is retried event by event so
only that request gets the 400; if the database fails, every request of the
lot gets the error (nothing of the lot was written).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool

from headwater.errors import EventError

if TYPE_CHECKING:
    from headwater.store import RecordResult, Store

__all__ = ["Coalescer"]

logger = logging.getLogger(__name__)

_Waiting = tuple[dict[str, Any], "asyncio.Future[RecordResult]"]


class Coalescer:
    """Queue single events and write them in lots of at most ``max_events``."""

    def __init__(self, store: Store, max_events: int = 500) -> None:
        self._store = store
        self._max_events = max_events
        self._waiting: list[_Waiting] = []
        self._drain_task: asyncio.Task[None] | None = None

    async def record(self, event: dict[str, Any]) -> RecordResult:
        """Store one validated event; returns once its lot is committed."""
        future: asyncio.Future[RecordResult] = asyncio.get_running_loop().create_future()
        self._waiting.append((event, future))
        if self._drain_task is None:
            self._drain_task = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._waiting:
                lot = self._waiting[: self._max_events]
                del self._waiting[: self._max_events]
                await self._write(lot)
        finally:
            # No await between the loop's last check and here: a request that
            # arrives now sees no task and starts a new one.
            self._drain_task = None

    async def _write(self, lot: list[_Waiting]) -> None:
        try:
            results = await run_in_threadpool(self._store.record_events, [e for e, _ in lot])
        except Exception as exc:  # noqa: BLE001 - delivered to the waiting requests
            if isinstance(exc, EventError) and len(lot) > 1:
                logger.debug("store refused an event of a lot of %d; writing one by one", len(lot))
                for waiting in lot:
                    await self._write([waiting])
                return
            for _, future in lot:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(lot, results, strict=True):
            if not future.done():  # a client that went away leaves a cancelled future
                future.set_result(result)
