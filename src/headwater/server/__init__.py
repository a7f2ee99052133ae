"""The headwater HTTP server: OpenLineage ingestion plus the read API.

Build an app with :func:`headwater.server.app.create_app`; ``headwater serve``
runs it under uvicorn. Nothing here runs at import time.
"""

from __future__ import annotations

__all__: list[str] = []
