"""A virtualenv with dbt-ol (openlineage-dbt) and dbt-postgres, for the real-producer tests.

dbt pins its own versions of libraries the project's ``.venv`` also holds
(protobuf, jsonschema, ...), so it lives apart, in ``.venv-dbt`` at the
repository root. The first test that needs it builds it from
:data:`REQUIREMENTS` (a minute or two from PyPI); later sessions reuse it as
long as it was built from the same requirements.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["REQUIREMENTS", "dbt_bin"]

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-dbt"
#: dbt-core 1.10 and dbt-postgres 1.9 build from PyPI alone; openlineage-dbt matches
#: the openlineage-python the live tests use.
REQUIREMENTS = ("openlineage-dbt==1.54.0", "dbt-core==1.10.23", "dbt-postgres==1.9.1")


def dbt_bin() -> Path:
    """The ``bin`` folder of a ready ``.venv-dbt`` (``dbt``, ``dbt-ol``), built if missing."""
    stamp = VENV / "headwater-requirements.txt"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if stamp.exists() and stamp.read_text() == wanted and (VENV / "bin" / "dbt-ol").exists():
        return VENV / "bin"
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [
            str(VENV / "bin" / "python"),
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
    return VENV / "bin"
