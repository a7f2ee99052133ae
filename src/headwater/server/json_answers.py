"""Large read answers written straight from plain values with orjson.

FastAPI turns a route's return value into JSON by validating it against the
route's response model and walking the result with ``jsonable_encoder``: a few
microseconds per value, which for a v1 lineage answer (about 10 KB of JSON per
node, each dataset and job with its fields, facets and latest run) is most of
its cost — 4.5 s of 7.5 s for a 1,237-node answer (docs/api.md, "What a v1
lineage answer costs"). The routes that answer with whole graphs return
:func:`json_answer` instead: the same JSON (orjson writes timezone-aware
datetimes with ``Z``, as pydantic does), with no model pass.

What it relies on: FastAPI neither validates nor re-encodes a returned
``Response`` (its documented behaviour), so the route's response model still
describes the answer in the OpenAPI document but does not check it; a test
(``tests/api/test_json_answers.py``) validates sampled answers against the
models and compares them with what the model pass would have written.

Answers made mostly of records (v1 lineage, the dataset and job lists) are
*stitched* (:func:`stitched_answer`): written as a sequence of parts, each
either a few bytes of JSON written for this answer (ids, edges, counts) or a
:class:`Fragment`, a record's JSON kept between answers
(``headwater.server.record_fragments``). A fragment also keeps its JSON
deflated, ending on a full flush, so a gzip answer copies it in as it is
instead of compressing ~10 KB per record again: the parts written for the
answer are deflated with a full flush before each fragment (so nothing refers
back across it), and the gzip trailer's CRC-32 and length are computed over the
whole JSON. The answer is a little larger than one compressed in one go (each
record compressed on its own: ~1.3 KB against ~0.8 KB per lineage node), and
costs a fraction of the CPU.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from headwater.server.compression import GZIP_LEVEL, MIN_SIZE, accepts_gzip

__all__ = ["Fragment", "dump", "json_answer", "list_parts", "stitched_answer"]

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC
# gzip's member header: magic, deflate, no flags, no time, no extra flags, unknown OS.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def dump(value: Any) -> bytes:
    """``value`` (dicts, lists, strings, numbers, datetimes) as JSON."""
    return orjson.dumps(value, option=_OPTIONS)


def _deflated(data: bytes) -> bytes:
    """Raw deflate of ``data`` with no history before it, ending on a byte boundary
    with nothing left pending: it can stand anywhere in a deflate stream."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


@dataclass(frozen=True, slots=True)
class Fragment:
    """A value's JSON, and that JSON deflated to stand anywhere in a gzip answer."""

    json: bytes
    deflated: bytes

    @classmethod
    def of(cls, value: Any) -> Fragment:
        data = dump(value)
        return cls(data, _deflated(data))

    @property
    def size(self) -> int:
        """Bytes held."""
        return len(self.json) + len(self.deflated)


def _gzip(parts: Sequence[bytes | Fragment]) -> bytes:
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    out = [_GZIP_HEADER]
    crc = length = 0
    for part in parts:
        if isinstance(part, Fragment):
            # Written so far flushed whole, history dropped: the fragment's own
            # deflate stream (which starts with no history) follows it unchanged.
            out.append(compressor.flush(zlib.Z_FULL_FLUSH))
            out.append(part.deflated)
            data = part.json
        else:
            out.append(compressor.compress(part))
            data = part
        crc = zlib.crc32(data, crc)
        length += len(data)
    out.append(compressor.flush(zlib.Z_FINISH))
    out.append(struct.pack("<II", crc, length & 0xFFFFFFFF))
    return b"".join(out)


def json_answer(body: Any, status_code: int = 200) -> Response:
    """``body`` (dicts, lists, strings, numbers, datetimes) as an ``application/json`` answer."""
    return Response(dump(body), status_code=status_code, media_type="application/json")


def stitched_answer(parts: Sequence[bytes | Fragment], request: Request) -> Response:
    """The JSON ``parts`` make, one after the other, as an ``application/json`` answer:
    gzip when the request accepts it (as ``Compression`` would decide), from the
    fragments' deflated JSON."""
    length = sum(len(p.json) if isinstance(p, Fragment) else len(p) for p in parts)
    if (
        request.method != "HEAD"
        and length >= MIN_SIZE
        and accepts_gzip(request.headers.get("accept-encoding"))
    ):
        # Compression leaves an encoded answer as it is (and adds its Vary).
        return Response(
            _gzip(parts), media_type="application/json", headers={"Content-Encoding": "gzip"}
        )
    body = b"".join(p.json if isinstance(p, Fragment) else p for p in parts)
    return Response(body, media_type="application/json")


def list_parts(
    key: str, items: Sequence[Fragment], rest: dict[str, Any]
) -> list[bytes | Fragment]:
    """The parts of ``{key: [items...], **rest}`` (a Marquez list answer)."""
    parts: list[bytes | Fragment] = [b"{" + dump(key) + b":["]
    for index, item in enumerate(items):
        if index:
            parts.append(b",")
        parts.append(item)
    parts.append(b"]," + dump(rest)[1:] if rest else b"]}")
    return parts
