"""HTTP route modules, one concept each; ``server/app.py`` includes their routers."""

from __future__ import annotations

__all__: list[str] = []
