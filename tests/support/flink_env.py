"""PyFlink with the OpenLineage Flink integration, for the real-producer tests.

``apache-flink`` pins its own numpy, pyarrow and apache-beam, so it lives apart,
in ``.venv-flink`` at the repository root, built by the first test that needs
it from :data:`REQUIREMENTS` (pip's wheel cache under the home folder makes a
rebuild quick); later sessions reuse it while it was built from the same
requirements. The jars the job loads -- Flink's Kafka SQL connector of the
same Flink line and the OpenLineage integration -- are resolved with ``mvn``
into the local Maven repository once; their class path is cached under
``$XDG_CACHE_HOME/headwater-tests`` (else ``~/.cache``).

Versions: PyFlink 2.2.1 (the newest Flink line with a Kafka connector build on
Maven Central: ``flink-sql-connector-kafka`` ``5.0.0-2.2``); the OpenLineage
integration ``io.openlineage:openlineage-flink`` 1.53.0, one shaded jar holding
both the Flink 1 ``JobListener`` and the Flink 2 native job-status listener
(``io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = [
    "FLINK_JARS",
    "LISTENER_FACTORY",
    "REQUIREMENTS",
    "flink_classpath",
    "flink_python",
]

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-flink"
REQUIREMENTS = ("apache-flink==2.2.1",)
#: (groupId, artifactId, version) of the jars the job puts on ``pipeline.jars``.
FLINK_JARS = (
    ("org.apache.flink", "flink-sql-connector-kafka", "5.0.0-2.2"),
    ("io.openlineage", "openlineage-flink", "1.53.0"),
)
LISTENER_FACTORY = "io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory"

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>headwater.tests</groupId>
  <artifactId>flink-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""


def flink_python() -> Path:
    """The ``python`` of a ready ``.venv-flink``, built if missing or stale."""
    stamp = VENV / "headwater-requirements.txt"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    python = VENV / "bin" / "python"
    if stamp.exists() and stamp.read_text() == wanted and python.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *REQUIREMENTS,
        ],
        check=True,
    )
    stamp.write_text(wanted)
    return python


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    name = "-".join(version for _, _, version in FLINK_JARS)
    return Path(base) / "headwater-tests" / f"flink-jars-{name}"


def flink_classpath() -> list[str]:
    """The jars of :data:`FLINK_JARS` (and what they need), resolved once and cached."""
    cache = _cache_dir()
    listing = cache / "classpath.txt"
    if listing.exists():
        jars = [jar for jar in listing.read_text().strip().split(os.pathsep) if jar]
        if jars and all(Path(jar).is_file() for jar in jars):
            return jars
    cache.mkdir(parents=True, exist_ok=True)
    dependencies = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in FLINK_JARS
    )
    (cache / "pom.xml").write_text(_POM.format(dependencies=dependencies))
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
        raise RuntimeError(
            f"mvn could not resolve the Flink jars:\n{(result.stdout + result.stderr)[-3000:]}"
        )
    os.replace(partial, listing)
    return [jar for jar in listing.read_text().strip().split(os.pathsep) if jar]
