"""Records' JSON built once per store revision and reused by the answers that hold them.

A v1 lineage answer, a dataset list and a job list are made of Marquez records
(a dataset with its fields, facets and column lineage; a job with its facets
and its latest runs, each with its inputs and outputs). Building one costs a
few batched queries and a few hundred Python values; a lineage answer holds
hundreds of them, so building them per request is most of its cost (docs/api.md,
"What a v1 lineage answer costs"). :class:`RecordFragments` keeps each record's
JSON as bytes with its deflated form (a ``json_answers.Fragment``), and the
answers are stitched from them (``json_answers.stitched_answer``): copied in as
they are.

What a fragment is keyed by: the record's kind and node id, the namespaces the
reader may see (a namespace-limited token's records leave out what lies outside,
so they are other bytes), and the store's watermark
(:func:`headwater.store.reads.watermark.read_watermark`), which every committed
write changes — a late event that only adds a facet to a finished run
included. Nothing in the store is immutable (events merge in any order), and a
record reads many tables (a job's latest runs read the versions their inputs
had), so the whole store's revision is the one every record's content is sure
to follow. The price: the first answer after a write builds its records again,
so on a store written to continuously the reuse is between writes.

Why a fragment is never older than the answer it goes into: a request reads the
watermark *before* any of its rows, so what it builds is at least as new as the
watermark it files it under, and it only takes fragments filed under the
watermark it read itself. Filing under a different watermark empties the
cache first (the store changed, or an older request finishes late: its
fragments are still at least as new as its watermark). The watermark is the one
the ``ETags`` middleware read for the request when it read one (before the
route opened its connection), else one read on the route's connection.

The cache is bounded in bytes (:data:`MAX_BYTES`), least recently used first
out, per server process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from starlette.requests import Request

from headwater.server.etags import WATERMARK_KEY
from headwater.server.json_answers import Fragment
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads
from headwater.store.reads.scope import NamespaceScope
from headwater.store.reads.watermark import read_watermark

__all__ = ["MAX_BYTES", "RecordFragments"]

#: Bytes of record JSON (and its compressed form) one server process keeps; a v1
#: lineage node is ~10 KB of JSON and ~1.3 KB compressed.
MAX_BYTES = 256 * 1024 * 1024

Key = tuple[str, str, frozenset[str] | None]
Row = TypeVar("Row")


class RecordFragments:
    """Records' JSON per (kind, node id, scope), valid at one store watermark."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._watermark: str | None = None
        self._items: OrderedDict[Key, tuple[Fragment, int]] = OrderedDict()
        self._size = 0

    def watermark(self, conn: Any, request: Request | None = None) -> str:
        """The store's watermark: the one the ``ETags`` middleware read for ``request``
        (before the route's connection opened), else as ``conn`` sees it now. Read it
        before the answer's rows."""
        if request is not None:
            known = request.scope.get("state", {}).get(WATERMARK_KEY)
            if isinstance(known, str):
                return known
        return read_watermark(conn)

    def datasets(
        self,
        conn: Any,
        watermark: str,
        rows: Sequence[Any],
        scope: NamespaceScope,
    ) -> list[Fragment]:
        """Marquez ``Dataset`` records of dataset rows (with ``namespace``), in their order."""
        return self.records(
            watermark,
            "dataset",
            scope,
            rows,
            lambda row: f"dataset:{row.namespace}:{row.name}",
            lambda missing: dataset_reads.dataset_records(conn, missing, scope),
        )

    def jobs(
        self,
        conn: Any,
        watermark: str,
        rows: Sequence[Any],
        scope: NamespaceScope,
    ) -> list[Fragment]:
        """Marquez ``Job`` records (latest runs included) of job rows, in their order."""
        return self.records(
            watermark,
            "job",
            scope,
            rows,
            lambda row: f"job:{row.namespace}:{row.name}",
            lambda missing: job_reads.job_records(conn, missing, scope=scope),
        )

    @property
    def size(self) -> int:
        """Bytes of JSON and compressed JSON held now."""
        return self._size

    def records(
        self,
        watermark: str,
        kind: str,
        scope: NamespaceScope,
        rows: Sequence[Row],
        node_of: Callable[[Row], str],
        build: Callable[[list[Row]], Iterable[dict[str, Any]]],
    ) -> list[Fragment]:
        """The records of ``rows`` (in their order) as fragments: those filed under
        ``watermark`` taken as they are, the others built by ``build`` (records in
        the order of the rows it is given) and filed."""
        keys: list[Key] = [(kind, node_of(row), scope.namespaces) for row in rows]
        found = self._take(watermark, keys)
        missing = [row for row, key in zip(rows, keys, strict=True) if key not in found]
        if missing:
            built: dict[Key, Fragment] = {
                (kind, node_of(row), scope.namespaces): Fragment.of(record)
                for row, record in zip(missing, build(missing), strict=True)
            }
            found.update(built)
            self._file(watermark, built)
        return [found[key] for key in keys]

    def _take(self, watermark: str, keys: Sequence[Key]) -> dict[Key, Fragment]:
        with self._lock:
            if watermark != self._watermark:
                return {}
            found = {}
            for key in keys:
                item = self._items.get(key)
                if item is not None:
                    self._items.move_to_end(key)
                    found[key] = item[0]
            return found

    def _file(self, watermark: str, built: dict[Key, Fragment]) -> None:
        with self._lock:
            if watermark != self._watermark:
                self._items.clear()
                self._size = 0
                self._watermark = watermark
            for key, fragment in built.items():
                size = fragment.size
                if size > self.max_bytes:
                    continue
                old = self._items.pop(key, None)
                if old is not None:
                    self._size -= old[1]
                self._items[key] = (fragment, size)
                self._size += size
            while self._size > self.max_bytes:
                _, (_, size) = self._items.popitem(last=False)
                self._size -= size
