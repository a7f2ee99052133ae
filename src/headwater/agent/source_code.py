"""Where a job's code lives and at which version: the ``sourceCodeLocation`` job facet.

Lineage compared across deploys needs to say which code produced it. When the
driver's main script sits in a git checkout, its repository URL (the
``origin`` remote, credentials removed), the script's path in the repository,
the commit and the branch are read from the checkout's own files — no ``git``
process, so it costs a few file reads once per application. Configuration
(``spark.headwater.sourceCode.url`` / ``.version`` / ``.path`` or
``HEADWATER_SOURCE_CODE_URL`` / ``_VERSION`` / ``_PATH``) names or overrides it
where the script is not in a checkout (a wheel, a notebook, a copied file).
"""

from __future__ import annotations

import configparser
import logging
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["main_script", "source_code_location"]

logger = logging.getLogger(__name__)

_COMMIT = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def main_script() -> Path | None:
    """The driver's main script, when the interpreter runs one."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None) or (sys.argv[0] if sys.argv and sys.argv[0] else None)
    if not path or path in ("-c", "-m"):
        return None
    candidate = Path(path).resolve()
    return candidate if candidate.is_file() else None


def _git_dir(start: Path) -> tuple[Path, Path] | None:
    """``(work tree, git dir)`` of the checkout holding ``start``."""
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return folder, marker
        if marker.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = marker.read_text().strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return folder, (target if target.is_absolute() else (folder / target).resolve())
    return None


def _common_dir(git_dir: Path) -> Path:
    """Where refs and config live (a worktree's git dir points at its repository's)."""
    common = git_dir / "commondir"
    if common.is_file():
        return (git_dir / common.read_text().strip()).resolve()
    return git_dir


def _resolve_ref(common: Path, ref: str) -> str | None:
    loose = common / ref
    if loose.is_file():
        value = loose.read_text().strip()
        return value if _COMMIT.match(value) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text().splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1].strip() == ref and _COMMIT.match(parts[0]):
                return parts[0]
    return None


def _without_credentials(url: str) -> str:
    """A remote URL with any user and password removed (``https://token@host/...``)."""
    if "://" not in url:
        return url  # scp-like "git@host:org/repo.git": a user name, no secret
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _from_checkout(script: Path) -> dict[str, str]:
    found = _git_dir(script.parent)
    if found is None:
        return {}
    work_tree, git_dir = found
    common = _common_dir(git_dir)
    location: dict[str, str] = {"type": "git", "path": script.relative_to(work_tree).as_posix()}
    head = (git_dir / "HEAD").read_text().strip() if (git_dir / "HEAD").is_file() else ""
    if head.startswith("ref:"):
        ref = head[len("ref:") :].strip()
        location["branch"] = ref.removeprefix("refs/heads/")
        commit = _resolve_ref(common, ref) or _resolve_ref(git_dir, ref)
    else:
        commit = head if _COMMIT.match(head) else None
    if commit:
        location["version"] = commit
    config = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        config.read(common / "config")
        url = config.get('remote "origin"', "url", fallback=None)
    except configparser.Error:
        url = None
    if url:
        location["repoUrl"] = _without_credentials(url)
        location["url"] = location["repoUrl"]
    return location


def source_code_location(
    overrides: Mapping[str, str | None] | None = None, script: Path | None = None
) -> dict[str, str] | None:
    """The ``sourceCodeLocation`` fields (``type``, ``url``, ``repoUrl``, ``path``,
    ``version``, ``branch``), or ``None`` when nothing is known. ``overrides`` (``url``,
    ``version``, ``path``) come from configuration and win over the checkout's facts."""
    location: dict[str, str] = {}
    try:
        script = script if script is not None else main_script()
        if script is not None:
            location = _from_checkout(script)
    except (OSError, ValueError):
        logger.debug("could not read the script's git checkout", exc_info=True)
        location = {}
    for key, value in (overrides or {}).items():
        if value:
            location[key] = _without_credentials(value) if key == "url" else value
    if not location.get("url"):
        return None  # the facet requires a URL
    location.setdefault("type", "git" if "version" in location else "file")
    return location
