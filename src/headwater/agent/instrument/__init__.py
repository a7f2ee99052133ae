"""Activation without code change: attach the agent to every SparkSession a program creates.

``headwater instrument -- <command>`` runs the command with two additions to its
environment, inherited by every Python process it starts (``python job.py``, and
the driver that ``spark-submit job.py`` launches):

* ``PYTHONPATH`` starts with :func:`site_dir`, a directory holding a
  ``sitecustomize.py`` that Python runs at start-up;
* ``HEADWATER_INSTRUMENT=1`` tells that ``sitecustomize`` to install the hook.

The hook (:mod:`headwater.agent.instrument.hook`) does not import PySpark; it
waits for the program to import ``pyspark.sql.session`` and then wraps the
SparkSession constructor and ``Builder.getOrCreate`` so each new session is
handed to :func:`headwater.agent.attach`. A program that never uses Spark pays
one environment lookup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from headwater.agent.instrument.hook import install, installed

__all__ = ["ENV_SWITCH", "install", "installed", "instrumented_env", "maybe_install", "site_dir"]

#: ``1`` turns the hook on in every Python process that can see it.
ENV_SWITCH = "HEADWATER_INSTRUMENT"


def site_dir() -> str:
    """The directory to put first on ``PYTHONPATH`` (it holds headwater's ``sitecustomize``)."""
    return str(Path(__file__).resolve().parent / "site")


def instrumented_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` that makes every Python process attach the agent to its sessions."""
    result = dict(env)
    hook_dir = site_dir()
    paths = [p for p in result.get("PYTHONPATH", "").split(os.pathsep) if p and p != hook_dir]
    result["PYTHONPATH"] = os.pathsep.join([hook_dir, *paths])
    result[ENV_SWITCH] = "1"
    return result


def maybe_install(env: Mapping[str, str] | None = None) -> bool:
    """Install the hook if ``HEADWATER_INSTRUMENT=1``; never raises. True if installed."""
    try:
        source = os.environ if env is None else env
        if source.get(ENV_SWITCH, "").strip().lower() not in ("1", "true", "yes"):
            return False
        install()
        return True
    except Exception:  # start-up of the user's program must not fail because of us
        return False
