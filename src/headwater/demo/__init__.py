"""The headwater demo: a real PySpark retail pipeline whose lineage you can explore.

:func:`run_demo` starts an embedded server on a SQLite store, runs the
pipeline in ``pipelines/retail`` (each job its own instrumented Spark
application, all under one orchestrator run), prints a summary and serves.
``headwater.demo.command.demo`` is the click command; ``python -m
headwater.demo`` runs it.
"""

from __future__ import annotations

from headwater.demo.orchestrate import DEFAULT_DATA_DIR, DemoResult, run_demo
from headwater.demo.runner import PipelineFailed, PipelineResult, StepResult, run_pipeline

__all__ = [
    "DEFAULT_DATA_DIR",
    "DemoResult",
    "PipelineFailed",
    "PipelineResult",
    "StepResult",
    "run_demo",
    "run_pipeline",
]
