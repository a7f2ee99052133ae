"""Sample OpenLineage events shipped with headwater (for ``headwater sample`` and tests)."""

from __future__ import annotations

from headwater.samples.retail import JOB_NAMESPACE, retail_events

__all__ = ["JOB_NAMESPACE", "retail_events"]
