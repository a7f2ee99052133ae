"""Jars from Maven Central as a class path, resolved with ``mvn`` once per set and cached.

The set's ``pom.xml`` and the class path Maven builds for it live in a cache
directory (``$XDG_CACHE_HOME/headwater/<name>``, else ``~/.cache/...``); later
calls reuse the cached class path while every jar on it still exists.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from headwater.errors import HeadwaterError

__all__ = [
    "Coordinate",
    "LocalKafkaError",
    "free_port",
    "missing_tools",
    "resolve_classpath",
    "tail",
]

#: ``(groupId, artifactId, version)``.
Coordinate = tuple[str, str, str]

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>headwater.local</groupId>
  <artifactId>{name}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""


class LocalKafkaError(HeadwaterError):
    """Jars could not be resolved, or a broker or worker built from them did not come up."""


def missing_tools() -> list[str]:
    """The external commands a local Kafka process needs that are not on PATH."""
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "headwater"


def _cached(path: Path) -> list[str] | None:
    if not path.exists():
        return None
    jars = [jar for jar in path.read_text().strip().split(os.pathsep) if jar]
    if jars and all(Path(jar).is_file() for jar in jars):
        return jars
    return None


def resolve_classpath(name: str, coordinates: Sequence[Coordinate]) -> list[str]:
    """The jars of ``coordinates`` and their dependencies; ``name`` keys the cache."""
    cache = _cache_root() / name
    classpath_file = cache / "classpath.txt"
    jars = _cached(classpath_file)
    if jars is not None:
        return jars
    cache.mkdir(parents=True, exist_ok=True)
    dependencies = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in coordinates
    )
    (cache / "pom.xml").write_text(_POM.format(name=name, dependencies=dependencies))
    # Concurrent first runs each write their own file; the rename is atomic.
    partial = cache / f"classpath.{os.getpid()}.tmp"
    result = subprocess.run(
        ["mvn", "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={partial}"],
        cwd=cache,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        wanted = ", ".join(":".join(c) for c in coordinates)
        raise LocalKafkaError(
            f"mvn could not resolve {wanted}:\n{tail(result.stdout + result.stderr)}"
        )
    os.replace(partial, classpath_file)
    jars = _cached(classpath_file)
    if jars is None:
        raise LocalKafkaError(f"mvn wrote no usable class path to {classpath_file}")
    return jars
