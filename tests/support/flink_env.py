"""PyFlink with the OpenLineage Flink integration, for the real-producer tests.

``apache-flink`` pins its own numpy, pyarrow and apache-beam, so it lives apart,
in ``.venv-flink`` at the repository root, built by the first test that needs
it from :data:`REQUIREMENTS` (pip's wheel cache under the home folder makes a
rebuild quick); later sessions reuse it while it was built from the same
requirements. The jars the job loads -- Flink's Kafka SQL connector of the
same Flink line and the OpenLineage integration -- are resolved with ``mvn``
into the local Maven repository once, by the product's own resolver
(:func:`headwater.local_kafka.maven.resolve_classpath`), which caches their
class path.

Versions: PyFlink 2.2.1 (the newest Flink line with a Kafka connector build on
Maven Central: ``flink-sql-connector-kafka`` ``5.0.0-2.2``); the OpenLineage
integration ``io.openlineage:openlineage-flink`` 1.53.0, one shaded jar holding
both the Flink 1 ``JobListener`` and the Flink 2 native job-status listener
(``io.openlineage.flink.listener.OpenLineageJobStatusChangedListenerFactory``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from headwater.local_kafka.maven import resolve_classpath

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


def flink_classpath() -> list[str]:
    """The jars of :data:`FLINK_JARS` (and what they need), resolved once and cached."""
    versions = "-".join(version for _, _, version in FLINK_JARS)
    return resolve_classpath(f"tests-flink-jars-{versions}", FLINK_JARS)
