"""The write path's driver-level statements read and write what SQLAlchemy would.

``BulkStatement`` (executemany) and ``IdsStatement`` (expanding IN list) skip
SQLAlchemy's per-execution processing; on both databases their rows must
equal what plain SQLAlchemy Core writes and reads.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from headwater.store import Store
from headwater.store import tables as t
from headwater.store.driver.bulk import BulkStatement, IdsStatement
from headwater.store.dialects import insert

PAYLOADS = [{"url": "https://example.com/x.py", "n": [1, 2.5, None], "s": "\u00e9"},
            {"nested": {"a": {"b": []}}}, [1, "two"], "text", None]


def _rows() -> list[dict[str, object]]:
    return [{"kind": "job", "subject": f"job:ns:j{i}", "run_uuid": f"run-{i}", "name": "x",
             "payload": payload, "event_time": datetime(2026, 11, 22, 10, i, 5, i * 1001),
             "event_hash": f"{i:064d}"} for i, payload in enumerate(PAYLOADS)]


def _stored(db_url: str) -> tuple[Store, list[dict[str, object]]]:
    """A store holding ``_rows()`` written by BulkStatement."""
    store = Store.open(db_url)
    rows = _rows()
    with store.engine.begin() as conn:
        stmt = insert(conn.dialect.name, t.facets)
        BulkStatement(stmt, list(rows[0]), conn.dialect, t.facets).execute(conn, rows)
    return store, rows


def test_bulk_insert_then_read_by_ids_match_sqlalchemy(db_url: str) -> None:
    store, rows = _stored(db_url)
    try:
        select = sa.select(t.facets.c.run_uuid, t.facets.c.payload, t.facets.c.event_time,
                           t.facets.c.event_hash).where(
            t.facets.c.run_uuid.in_(sa.bindparam("ids", expanding=True)),
            t.facets.c.kind == "job").order_by(t.facets.c.run_uuid)
        wanted = [r["run_uuid"] for r in rows][::-1]
        with store.engine.connect() as conn:
            expected = [tuple(r) for r in conn.execute(select, {"ids": wanted})]
            fast = IdsStatement(select, conn.dialect)
            got = [tuple(r) for r in fast.run(conn, wanted)]
            assert got == expected
            assert [r.payload for r in fast.run(conn, wanted)] == PAYLOADS
            assert [r.event_time for r in fast.run(conn, wanted[-2:])] == [
                rows[0]["event_time"], rows[1]["event_time"]]
            # A different count of ids compiles another IN list.
            assert len(fast.run(conn, wanted[:1])) == 1
    finally:
        store.close()


def test_update_by_ids_changes_only_those_rows(db_url: str) -> None:
    store, _ = _stored(db_url)
    try:
        with store.engine.begin() as conn:
            update = t.facets.update().where(
                t.facets.c.run_uuid.in_(sa.bindparam("ids", expanding=True))).values(name="y")
            assert IdsStatement(update, conn.dialect).run(conn, ["run-1", "run-3"]) == []
        with store.engine.connect() as conn:
            names = dict(conn.execute(sa.select(t.facets.c.run_uuid, t.facets.c.name)).all())
        assert names == {"run-0": "x", "run-1": "y", "run-2": "x", "run-3": "y", "run-4": "x"}
    finally:
        store.close()
