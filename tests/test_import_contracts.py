"""The import contracts in ``.importlinter`` hold, and they cover every top-level package."""

from __future__ import annotations

import configparser
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import headwater

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"
#: lint-imports styles its report for a terminal even when it writes to a pipe.
_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def test_import_contracts_are_kept() -> None:
    # The console script of the interpreter running the tests: the one the dev extra installs.
    lint_imports = Path(sys.executable).with_name("lint-imports")
    assert lint_imports.exists(), "lint-imports is missing: pip install -e '.[dev]'"
    result = subprocess.run(
        [str(lint_imports), "--config", str(CONFIG), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, _STYLE.sub("", result.stdout + result.stderr)


def test_every_top_level_module_has_a_layer() -> None:
    # A new package outside the layers would be free to import anything.
    config = configparser.ConfigParser()
    config.read(CONFIG)
    layered = {
        name.strip()
        for line in config["importlinter:contract:layers"]["layers"].split("\n")
        for name in line.split("|")
        if name.strip()
    }
    modules = {f"headwater.{module.name}" for module in pkgutil.iter_modules(headwater.__path__)}
    assert modules - layered == set()
