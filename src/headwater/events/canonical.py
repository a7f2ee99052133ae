"""An event's canonical JSON and content hash, fast and byte-for-byte stable.

The canonical form is what ``json.dumps(event, sort_keys=True,
separators=(",", ":"), ensure_ascii=False)`` writes; the content hash is the
SHA-256 of its UTF-8 bytes. Dedupe depends on that definition never
changing, so it stays the standard library's.

Serialising a 3-4 KB event that way costs ~50 us, the largest single cost of
the write path, so orjson writes it instead (~5 us). orjson agrees with the
standard library byte for byte on what JSON decoders produce, except in three
places, each detected here and handed to the standard library:

* floats between 1e-10 and 1e-4 in magnitude: Python writes ``1e-07`` and
  ``1e-05``, orjson ``1e-7`` and ``0.00001`` (detected by looking for a
  number ending ``e-<digit>`` or starting ``0.0000``: Python never writes
  either for a float; a string that merely contains such text takes the
  slow path too, which is still correct);
* ``NaN``/``Infinity`` (not JSON, but ``json.loads`` accepts them): orjson
  writes ``null``, so an output containing ``null`` is checked for
  non-finite floats;
* what orjson refuses (integers over 64 bits, lone surrogates, non-string
  keys): it raises, and the standard library decides.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

try:  # the server extra installs orjson; a client install writes the same bytes without it
    import orjson
except ImportError:  # pragma: no cover - exercised by client installs only
    orjson = None  # type: ignore[assignment]

__all__ = ["canonical_bytes", "canonical_json", "content_hash"]

# As orjson writes such numbers: a digit, e-, one digit, then the end of the
# value; or a value starting 0.0000. Anchoring on the JSON delimiters keeps
# text like a UUID's "...8e-4a..." from sending events down the slow path.
_SMALL_DECIMAL = re.compile(rb"[:,\[]-?0\.0000")
_DIGITS = frozenset(b"0123456789")
_VALUE_ENDS = frozenset(b",]}")


def _has_short_exponent(out: bytes) -> bool:
    """A number ending ``<digit>e-<digit>``: looked up from each ``e-`` (there are few)."""
    at = out.find(b"e-")
    while at != -1:
        if (0 < at and at + 3 < len(out) and out[at - 1] in _DIGITS
                and out[at + 2] in _DIGITS and out[at + 3] in _VALUE_ENDS):
            return True
        at = out.find(b"e-", at + 2)
    return False


def _stdlib(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_non_finite(v) for v in value)
    return False


def canonical_bytes(value: Mapping[str, Any]) -> bytes:
    """The canonical JSON of ``value`` as UTF-8 bytes."""
    if orjson is None:
        return _stdlib(value)
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return _stdlib(value)
    if _has_short_exponent(out):
        return _stdlib(value)
    if b"0.0000" in out and _SMALL_DECIMAL.search(out):
        return _stdlib(value)
    if b"null" in out and _has_non_finite(value):
        return _stdlib(value)
    return out


def canonical_json(value: Mapping[str, Any]) -> str:
    """The canonical JSON of ``value`` as text."""
    return canonical_bytes(value).decode()


def content_hash(canonical: bytes) -> str:
    """The content hash (hex SHA-256) of canonical JSON bytes."""
    return hashlib.sha256(canonical).hexdigest()
