"""The API documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served
from the package.

FastAPI's own pages load Swagger UI and ReDoc from a CDN and start them with an
inline script; a server without internet access shows a blank page, and the
content security policy refuses the inline script. Here the assets come from the
npm packages ``swagger-ui-dist`` and ``redoc``, copied into ``static/docs/`` by the
UI build (``frontend/scripts/vendor-docs.mjs``) with the two small scripts that
start them.

The pages are shells like ``index.html``: they hold no data and need no token.
Their scripts read ``/openapi.json`` (the ``read`` scope) with the token the web
UI keeps in the tab's sessionStorage, if any. Their policy differs from the UI's
in one way: both libraries set inline styles (ReDoc through styled-components),
so ``style-src`` allows ``'unsafe-inline'``; scripts stay the package's own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

__all__ = ["DOCS_CONTENT_SECURITY_POLICY", "mount_api_docs"]

DOCS_CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self' data:; "
    "worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

_SWAGGER = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>headwater API: Swagger UI</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/static/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/static/docs/swagger-ui-bundle.js"></script>
  <script src="/static/docs/swagger-init.js"></script>
</body>
</html>
"""

_REDOC = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>headwater API: ReDoc</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <div id="redoc"></div>
  <script src="/static/docs/redoc.standalone.js"></script>
  <script src="/static/docs/redoc-init.js"></script>
</body>
</html>
"""


def _page(html: str) -> Callable[[Request], Awaitable[HTMLResponse]]:
    async def serve(request: Request) -> HTMLResponse:
        return HTMLResponse(html, headers={
            "Content-Security-Policy": DOCS_CONTENT_SECURITY_POLICY,
            "Cache-Control": "no-cache",
        })
    return serve


def mount_api_docs(app: FastAPI) -> None:
    """Serve ``/docs`` and ``/redoc``; the app is built with FastAPI's own pages off."""
    app.router.routes.append(Route("/docs", _page(_SWAGGER), methods=["GET", "HEAD"],
                                   name="swagger-ui", include_in_schema=False))
    app.router.routes.append(Route("/redoc", _page(_REDOC), methods=["GET", "HEAD"],
                                   name="redoc", include_in_schema=False))
