"""Keyset paging for list endpoints: an opaque ``cursor`` beside Marquez's ``limit``/``offset``.

A list answers with ``nextCursor``: the sort key of its last item, encoded. Sent
back as ``cursor``, it makes the next page start right after that item, which
the database finds through an index (``headwater.store.reads.common.after_key``)
however deep the page is, where ``offset`` reads and drops every row before it.
Items inserted meanwhile never shift a cursor's page: none is skipped or
repeated. An item whose own sort key changes between two pages (a run whose
earliest event arrives late) moves in the order, as it would for ``offset``.

The cursor is base64url of JSON ``[list, [key values]]``; it names its list, so
a cursor of another list (or of the other ``sortDirection``) is a 400 naming
``query.cursor``, as is anything that does not decode. ``nextCursor`` is null
when the page held fewer than ``limit`` items: there is nothing after it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Query

from headwater.server.handlers import RequestError
from headwater.store.reads.common import Page

__all__ = ["Cursor", "CursorKey", "KeyKind", "MAX_CURSOR_LENGTH"]

#: The longest cursor accepted (a key of a few names and times is far shorter).
MAX_CURSOR_LENGTH = 4096

#: ``cursor`` query parameter of every keyset-paged list.
Cursor = Annotated[
    str | None,
    Query(
        max_length=MAX_CURSOR_LENGTH,
        description="`nextCursor` of the page before: this page starts right after its "
        "last item (keyset paging, as fast at any depth). `offset` then skips within "
        "what follows.",
    ),
]

KeyKind = Literal["text", "time", "int"]


@dataclass(frozen=True)
class CursorKey:
    """How one list's items are ordered: the list's name, the kinds of its sort key's
    values, and how to read the key from an answered item."""

    name: str
    kinds: tuple[KeyKind, ...]
    of_item: Callable[[dict[str, Any]], Sequence[Any]] | None = None

    def page(self, limit: int, offset: int, cursor: str | None) -> Page:
        """The store's :class:`Page` for these parameters."""
        return Page(limit=limit, offset=offset, after=self.decode(cursor) if cursor else None)

    def next_cursor(self, items: Sequence[dict[str, Any]], limit: int) -> str | None:
        """The cursor of the page after ``items``; None when ``items`` is the last page."""
        if limit == 0 or len(items) < limit or self.of_item is None:
            return None
        return self.encode(self.of_item(items[-1]))

    def encode(self, key: Sequence[Any]) -> str:
        """The cursor of the page after the item whose sort key is ``key``."""
        values = [_encode(kind, value) for kind, value in zip(self.kinds, key, strict=True)]
        text = json.dumps([self.name, values], separators=(",", ":"), ensure_ascii=False)
        return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")

    def decode(self, cursor: str) -> tuple[Any, ...]:
        """The sort key a cursor holds; 400 naming ``query.cursor`` if it is not this list's."""
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            name, values = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            if name != self.name or not isinstance(values, list) or len(values) != len(self.kinds):
                raise ValueError("another list's cursor")
            return tuple(
                _decode(kind, value) for kind, value in zip(self.kinds, values, strict=True)
            )
        except (ValueError, TypeError, binascii.Error, UnicodeError) as exc:
            raise RequestError(
                "cursor is not a nextCursor of this list (keep it as it was answered)",
                field="query.cursor",
            ) from exc


def _encode(kind: KeyKind, value: Any) -> str:
    if kind == "time":
        if not isinstance(value, datetime):
            raise TypeError(f"a time is needed, got {value!r}")
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return aware.replace(tzinfo=None).isoformat()
    return str(value)


def _decode(kind: KeyKind, value: Any) -> Any:
    if not isinstance(value, str):
        raise TypeError("key values are strings")
    if kind == "time":
        return datetime.fromisoformat(value)  # naive UTC, as the tables hold times
    if kind == "int":
        return int(value)
    if "\x00" in value:
        raise ValueError("a NUL character")
    return value
