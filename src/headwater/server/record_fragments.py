"""Records' JSON built once per revision of their rows and reused by the answers that hold them.

A v1 lineage answer, a dataset list and a job list are made of Marquez records
(a dataset with its fields, facets and column lineage; a job with its facets
and its latest runs, each with its inputs and outputs). Building one costs a
few batched queries and a few hundred Python values; a lineage answer holds
hundreds of them, so building them per request is most of its cost (docs/api.md,
"What a v1 lineage answer costs"). :class:`RecordFragments` keeps each record's
JSON as bytes with its deflated form (a ``json_answers.Fragment``), and the
answers are stitched from them (``json_answers.stitched_answer``): copied in as
they are.

What a fragment is keyed by: the record's kind and node id and the namespaces the
reader may see (a namespace-limited token's records leave out what lies outside,
so they are other bytes); what it is valid for: the revision of the record's
rows and the records epoch (:mod:`headwater.store.revisions`). The write path
counts a dataset's or a job's ``revision`` in the transaction of every write
that may change its record -- an event naming it (a late one that only adds a
facet to an old version or a finished run included), a run that wrote the
dataset settling its state, a version of a dataset the job's runs read moving
under them, the parent run of one of its runs arriving -- and the
epoch on writes outside the event write path that may change any record
(tags set by hand, deletes, retention). So a write changing dataset A's record
leaves dataset B's fragment valid: on a store taking events continuously, an
answer rebuilds only the records the writes since it was last asked touched.

Why a fragment is never older than the answer it goes into: a request reads the
epoch *before* its rows, and each row carries its revision; what it builds from
them is at least as new as that (epoch, revision), which it files the fragment
under. A request takes a fragment only when both equal its own: no write that
may change the record happened between the two, so the bytes are the ones it
would build. A fragment filed under an older (epoch, revision) than the one
kept (a request finishing late) does not replace it.

The cache is bounded in bytes (:data:`MAX_BYTES`), least recently used first
out, per server process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from headwater.server.json_answers import Fragment
from headwater.store.reads import datasets as dataset_reads
from headwater.store.reads import jobs as job_reads
from headwater.store.reads.scope import NamespaceScope
from headwater.store.revisions import read_epoch

__all__ = ["MAX_BYTES", "RecordFragments"]

#: Bytes of record JSON (and its compressed form) one server process keeps; a v1
#: lineage node is ~10 KB of JSON and ~1.3 KB compressed.
MAX_BYTES = 256 * 1024 * 1024

Key = tuple[str, str, frozenset[str] | None]
#: (records epoch, row revision): what a fragment is valid for.
Revision = tuple[int, int]
Row = TypeVar("Row")


class RecordFragments:
    """Records' JSON per (kind, node id, scope), each valid for one revision of its rows."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._items: OrderedDict[Key, tuple[Revision, Fragment, int]] = OrderedDict()
        self._size = 0
        #: Records built (not taken from the cache) since this cache was made.
        self.built = 0

    def epoch(self, conn: Any) -> int:
        """The records epoch as ``conn`` sees it now; read it before the answer's rows."""
        return read_epoch(conn)

    def datasets(
        self,
        conn: Any,
        epoch: int,
        rows: Sequence[Any],
        scope: NamespaceScope,
    ) -> list[Fragment]:
        """Marquez ``Dataset`` records of dataset rows (with ``namespace`` and
        ``revision``), in their order."""
        return self.records(
            "dataset",
            scope,
            rows,
            lambda row: f"dataset:{row.namespace}:{row.name}",
            lambda row: (epoch, row.revision),
            lambda missing: dataset_reads.dataset_records(conn, missing, scope),
        )

    def jobs(
        self,
        conn: Any,
        epoch: int,
        rows: Sequence[Any],
        scope: NamespaceScope,
    ) -> list[Fragment]:
        """Marquez ``Job`` records (latest runs included) of job rows, in their order."""
        return self.records(
            "job",
            scope,
            rows,
            lambda row: f"job:{row.namespace}:{row.name}",
            lambda row: (epoch, row.revision),
            lambda missing: job_reads.job_records(conn, missing, scope=scope),
        )

    @property
    def size(self) -> int:
        """Bytes of JSON and compressed JSON held now."""
        return self._size

    def records(
        self,
        kind: str,
        scope: NamespaceScope,
        rows: Sequence[Row],
        node_of: Callable[[Row], str],
        revision_of: Callable[[Row], Revision],
        build: Callable[[list[Row]], Iterable[dict[str, Any]]],
    ) -> list[Fragment]:
        """The records of ``rows`` (in their order) as fragments: those filed under
        the row's revision taken as they are, the others built by ``build`` (records
        in the order of the rows it is given) and filed."""
        keys: list[Key] = [(kind, node_of(row), scope.namespaces) for row in rows]
        revisions = [revision_of(row) for row in rows]
        found = self._take(keys, revisions)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            records = build([rows[i] for i in missing])
            built = {
                keys[i]: (revisions[i], Fragment.of(record))
                for i, record in zip(missing, records, strict=True)
            }
            self.built += len(built)
            found.update((key, fragment) for key, (_, fragment) in built.items())
            self._file(built)
        return [found[key] for key in keys]

    def _take(self, keys: Sequence[Key], revisions: Sequence[Revision]) -> dict[Key, Fragment]:
        found = {}
        with self._lock:
            for key, revision in zip(keys, revisions, strict=True):
                item = self._items.get(key)
                if item is not None and item[0] == revision:
                    self._items.move_to_end(key)
                    found[key] = item[1]
        return found

    def _file(self, built: dict[Key, tuple[Revision, Fragment]]) -> None:
        with self._lock:
            for key, (revision, fragment) in built.items():
                size = fragment.size
                if size > self.max_bytes:
                    continue
                old = self._items.get(key)
                if old is not None:
                    if old[0] > revision:
                        continue  # a newer one is kept already
                    del self._items[key]
                    self._size -= old[2]
                self._items[key] = (revision, fragment, size)
                self._size += size
            while self._size > self.max_bytes:
                _, (_, _, size) = self._items.popitem(last=False)
                self._size -= size
