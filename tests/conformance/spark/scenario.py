"""One conformance scenario, and the clean-up helpers scenario jobs share."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Scenario", "clean", "drop"]


@dataclass(frozen=True)
class Scenario:
    name: str
    namespace: str
    app_name: str
    warehouse: str
    expected: tuple[str, ...]
    job: Callable[[Any], None]
    conf: dict[str, str] = field(default_factory=dict)
    #: Session settings for the job only (set before the agent attaches, unset after).
    session_conf: dict[str, str] = field(default_factory=dict)
    #: The static session profile the JVM starts with (``sessions.PROFILES``).
    session: str = "hive"


def clean(*paths: str) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def drop(spark: Any, *tables: str) -> None:
    for table in tables:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
