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
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

__all__ = ["json_answer"]

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC


def json_answer(body: Any, status_code: int = 200) -> Response:
    """``body`` (dicts, lists, strings, numbers, datetimes) as an ``application/json`` answer."""
    return Response(orjson.dumps(body, option=_OPTIONS), status_code=status_code,
                    media_type="application/json")
