"""Route matching on the *encoded* path, so names with slashes can be addressed.

Dataset names are often paths (``file`` + ``/data/orders``) and namespaces are
often URIs (``s3://bucket``). Clients such as ``marquez-python`` send them as one
percent-encoded segment (``/namespaces/s3%3A%2F%2Fbucket/datasets/...``). ASGI
servers decode ``%2F`` into ``/`` before routing, which would split the segment;
Marquez (Jersey) matches on the encoded path instead. :class:`EncodedPathRoute`
does the same: it matches the raw path and decodes each path parameter after.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fastapi.routing import APIRoute
from starlette.routing import Match
from starlette.types import Scope

__all__ = ["EncodedPathRoute"]


class EncodedPathRoute(APIRoute):
    """An :class:`APIRoute` whose ``{param}`` segments may contain encoded slashes."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        raw = scope.get("raw_path")
        if scope["type"] != "http" or not raw:
            return super().matches(scope)
        path = raw.decode("latin-1")
        root_path = scope.get("root_path", "")
        if root_path and path.startswith(root_path):
            path = path[len(root_path) :]
        match, child = super().matches({**scope, "path": path, "root_path": ""})
        if match is not Match.NONE:
            params: dict[str, Any] = child.get("path_params", {})
            child["path_params"] = {
                key: unquote(value) if isinstance(value, str) else value
                for key, value in params.items()
            }
        return match, child
