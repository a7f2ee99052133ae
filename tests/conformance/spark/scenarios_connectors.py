"""The connector scenarios (one module per connector), collected for ``scenarios.SCENARIOS``."""

from __future__ import annotations

from tests.conformance.spark.scenario import Scenario
from tests.conformance.spark.scenarios_delta import DELTA_SCENARIOS
from tests.conformance.spark.scenarios_iceberg import ICEBERG_SCENARIOS
from tests.conformance.spark.scenarios_jdbc import JDBC_SCENARIOS
from tests.conformance.spark.scenarios_kafka import KAFKA_SCENARIOS

CONNECTOR_SCENARIOS: tuple[Scenario, ...] = (*KAFKA_SCENARIOS, *JDBC_SCENARIOS, *DELTA_SCENARIOS, *ICEBERG_SCENARIOS)
