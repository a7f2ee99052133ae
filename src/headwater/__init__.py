"""headwater: end-to-end data lineage for PySpark pipelines, OpenLineage-native.

The package follows the data flow: ``agent`` (PySpark capture) -> ``events``
(the OpenLineage contract) -> ``transport`` -> ``server`` ingest -> ``store``
-> ``graph`` -> API, web UI and CLI.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
