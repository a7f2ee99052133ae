"""The connector scenarios (one module per connector), collected for ``scenarios.SCENARIOS``."""

from __future__ import annotations

from tests.conformance.spark.scenario import Scenario

CONNECTOR_SCENARIOS: tuple[Scenario, ...] = ()
