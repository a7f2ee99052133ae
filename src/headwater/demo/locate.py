"""Find the retail pipeline's scripts: inside the installed package, else the repo checkout.

A wheel carries them as ``headwater/pipelines/retail`` (a build-time mapping of
the repository's top-level ``pipelines/retail``); a source checkout has them at
``<repo>/pipelines/retail``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from headwater.errors import ConfigError

__all__ = ["pipeline_dir"]

_MARKER = "bronze.py"


def pipeline_dir() -> Path:
    """The directory holding ``generate.py`` and the job scripts; ConfigError if absent."""
    candidates: list[Path] = []
    try:
        packaged = resources.files("headwater") / "pipelines" / "retail"
        # Installed packages live on the file system; a zip import cannot run scripts.
        if isinstance(packaged, Path):
            candidates.append(packaged)
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - headwater is importable here
        pass
    candidates.append(Path(__file__).resolve().parents[3] / "pipelines" / "retail")
    for candidate in candidates:
        if (candidate / _MARKER).is_file():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"the retail pipeline scripts are missing (looked in {searched})")
