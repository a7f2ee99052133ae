"""headwater's web UI: the built single-page app, served by ``headwater serve`` at ``/``.

The page is built from ``frontend/`` (TypeScript, Cytoscape.js) with npm and the
result is committed under ``static/``, so a Python install needs no Node. The
server side is only this module:

- ``/static/...`` serves the built assets (file names carry content hashes);
- every other GET that no API route answered (``/``, ``/lineage?...``,
  ``/datasets/{ns}/{name}``, ``/jobs/...``, ``/runs/...``, ``/search?...``) gets
  ``index.html``, and the page routes itself from the URL;
- paths under ``/api/`` are never answered with the page, so an unknown API path
  keeps its JSON 404;
- ``/docs`` and ``/redoc`` are the API documentation pages (:mod:`headwater.ui.api_docs`),
  whose assets the build copies into ``static/docs/``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Match, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["STATIC_DIR", "mount_ui"]

logger = logging.getLogger(__name__)

#: Where ``npm run build`` in ``frontend/`` writes the page (committed).
STATIC_DIR = Path(__file__).parent / "static"

# Paths the page must never shadow: the API and FastAPI's own documentation.
_RESERVED_PREFIXES = ("/api/", "/static/", "/docs", "/redoc", "/openapi.json")


class _PageRoute(Route):
    """A catch-all GET route that steps aside for reserved paths (so they 404 as JSON)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path: str = scope.get("path", "")
        if path == "/api" or path.startswith(_RESERVED_PREFIXES):
            return Match.NONE, {}
        return super().matches(scope)


def mount_ui(app: FastAPI, static_dir: Path = STATIC_DIR) -> None:
    """Serve the web UI from ``app``; call after every API router is included.

    Without a built ``index.html`` (a source checkout that was never built) the
    API still works and ``/`` answers 404 with a hint in the log.
    """
    index = static_dir / "index.html"
    if not index.is_file():
        logger.warning("web UI not built (%s missing); run `npm ci && npm run build` in frontend/",
                       index)
        return
    app.mount("/static", StaticFiles(directory=static_dir), name="ui-static")
    from headwater.ui.api_docs import mount_api_docs

    mount_api_docs(app)

    async def page(request: Request) -> Response:
        if request.url.path.startswith("/static"):
            raise HTTPException(status_code=404)
        # The page itself must not be cached: it names the current hashed assets.
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    app.router.routes.append(
        _PageRoute("/{path:path}", page, methods=["GET", "HEAD"], name="ui-page")
    )
