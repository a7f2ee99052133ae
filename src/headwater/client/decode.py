"""JSON answers into the client's frozen dataclasses, checked as they are built.

The models (:mod:`headwater.client.models`) name their fields as the API
spells them, so decoding is a walk over the type hints: a dataclass from an
object, ``tuple[X, ...]`` from an array, ``X | None``, ``datetime`` from an
ISO-8601 string, ``dict[str, Any]`` for free-form facets. A value of the wrong
kind raises :class:`~headwater.client.errors.UnexpectedAnswer` naming its JSON
path. Keys the model does not know are skipped, so an older client reads a
newer server; ``strict=True`` refuses them instead, which is how the tests
prove that the models cover every field the server sends.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from datetime import datetime
from typing import Any, TypeVar

from headwater.client.errors import UnexpectedAnswer

__all__ = ["decode", "encode"]

T = TypeVar("T")


def decode(kind: type[T], value: Any, *, strict: bool = False) -> T:
    """``value`` (parsed JSON) as ``kind``; raises :class:`UnexpectedAnswer` if it does not fit."""
    result: T = _decode(kind, value, "$", strict)
    return result


def encode(value: Any) -> Any:
    """A model (or anything nested in one) back into JSON-ready values, datetimes as ISO text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return value


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _decode(kind: Any, value: Any, path: str, strict: bool) -> Any:
    origin = typing.get_origin(kind)
    if kind is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(kind)
        if value is None and type(None) in arms:
            return None
        problems = []
        for arm in arms:
            if arm is type(None):
                continue
            try:
                return _decode(arm, value, path, strict)
            except UnexpectedAnswer as exc:
                problems.append(str(exc))
        raise UnexpectedAnswer(f"{value!r} fits none of {kind}: {'; '.join(problems)}", path)
    if origin is tuple:
        if not isinstance(value, list):
            raise UnexpectedAnswer(f"expected an array, got {_kind(value)}", path)
        (item,) = typing.get_args(kind)[:1]
        return tuple(_decode(item, v, f"{path}[{i}]", strict) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise UnexpectedAnswer(f"expected an object, got {_kind(value)}", path)
        _, item = typing.get_args(kind)
        return {k: _decode(item, v, f"{path}.{k}", strict) for k, v in value.items()}
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind, value, path, strict)
    if kind is datetime:
        if not isinstance(value, str):
            raise UnexpectedAnswer(f"expected an ISO-8601 time, got {_kind(value)}", path)
        try:
            return datetime.fromisoformat(value)
        except ValueError as exc:
            raise UnexpectedAnswer(f"not an ISO-8601 time: {value!r}", path) from exc
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind in (str, bool):
        if isinstance(value, kind):
            return value
    else:
        raise TypeError(f"the client cannot decode {kind!r}")  # a model bug, not an answer's
    raise UnexpectedAnswer(f"expected {kind.__name__}, got {_kind(value)}", path)


def _dataclass(kind: type, value: Any, path: str, strict: bool) -> Any:
    if not isinstance(value, dict):
        raise UnexpectedAnswer(f"expected an object, got {_kind(value)}", path)
    hints = _hints(kind)
    arguments = {}
    for field in dataclasses.fields(kind):
        if field.name in value:
            arguments[field.name] = _decode(
                hints[field.name], value[field.name], f"{path}.{field.name}", strict
            )
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise UnexpectedAnswer(f"missing {field.name!r} of {kind.__name__}", path)
    if strict:
        unknown = sorted(set(value) - set(hints))
        if unknown:
            raise UnexpectedAnswer(f"{kind.__name__} has no field {', '.join(unknown)}", path)
    return kind(**arguments)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
