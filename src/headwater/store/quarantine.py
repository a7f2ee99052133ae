"""The quarantine: events the write path refused, kept with the reason.

Most producers keep nothing of what a server rejects (the OpenLineage Java
listener and ``openlineage-python`` log and drop it), so the server keeps it:
one row per distinct refused value, counted each time it arrives again, and
readable through ``GET /api/v2/quarantine``. A value is kept as the JSON text
of what was received, which any refused event fits (a NUL character stays the
escape ``\\u0000``; a lone surrogate is escaped too).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from headwater.store import dialects, producers
from headwater.store import tables as t
from headwater.store.reads.common import Page
from headwater.store.transactions import now_utc, write_transaction

__all__ = ["Refused", "keep", "page"]

_q = t.quarantine


@dataclass(frozen=True)
class Refused:
    """One refused value: what arrived, why it was refused, and the status answered."""

    value: Any
    reason: str
    field: str | None
    status: int


def keep(engine: sa.Engine, refused: Sequence[Refused]) -> None:
    """Add ``refused`` to the quarantine in one transaction (a repeat bumps its count),
    and count each refusal against its producer (``producers``)."""
    if not refused:
        return
    now = now_utc()
    rows: dict[str, dict[str, Any]] = {}
    for item in refused:
        payload = _json_text(item.value)
        digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
        row = rows.get(digest)
        if row is not None:
            row["times_seen"] += 1
            continue
        rows[digest] = {"payload_hash": digest, "payload": payload,
                        "reason": _text(item.reason), "field": _text(item.field),
                        "status": item.status, "times_seen": 1,
                        "first_received_at": now, "last_received_at": now}
    with write_transaction(engine, records=False) as conn:
        producers.record_refusals(conn, (item.value for item in refused), now)
        for row in sorted(rows.values(), key=lambda r: r["payload_hash"]):
            stmt = dialects.insert(conn.dialect.name, _q).values(**row)
            conn.execute(stmt.on_conflict_do_update(
                index_elements=[_q.c.payload_hash],
                set_={"times_seen": _q.c.times_seen + stmt.excluded.times_seen,
                      "last_received_at": stmt.excluded.last_received_at,
                      "reason": stmt.excluded.reason, "field": stmt.excluded.field,
                      "status": stmt.excluded.status}))


def page(conn: sa.Connection, page: Page) -> tuple[int, list[dict[str, Any]]]:
    """How many values are quarantined, and ``page`` of them, most recently received first."""
    total = int(conn.scalar(sa.select(sa.func.count()).select_from(_q)) or 0)
    rows = conn.execute(page.apply(
        sa.select(_q).order_by(_q.c.last_received_at.desc(), _q.c.id.desc()))).all()
    return total, [row._asdict() for row in rows]


def _text(value: str | None) -> str | None:
    """``value`` storable as text: a reason or path may quote the NUL that was refused."""
    if value is None:
        return None
    return value.replace("\x00", "\\u0000").encode("utf-8", "backslashreplace").decode()


def _json_text(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
        text.encode("utf-8")
        return text
    except (UnicodeEncodeError, ValueError, TypeError):
        # Lone surrogates cannot be UTF-8: escaped, they can.
        return json.dumps(value, ensure_ascii=True, sort_keys=True, default=repr)
