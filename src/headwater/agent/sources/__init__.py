"""Which datasets an action read and wrote, one module per source family.

Each family module (:mod:`.files`, :mod:`.tables`, :mod:`.ddl`, :mod:`.jdbc`,
:mod:`.logical_rdds`, ...) declares a :class:`~.family.SourceFamily`: the plan
classes it understands, the JVM look-ups that fetch what their JSON lacks, and
the visitors that turn a node and its facts into datasets. :mod:`.registry`
merges the families; :mod:`.visit` runs them over a plan. The shared pieces
(:mod:`.common`, :mod:`.jvm_common`) sit one floor below the families.

Visitors work on the plain :class:`~headwater.agent.plan.PlanNode` tree and
its facts, so they run without a JVM.
"""

from __future__ import annotations

from headwater.agent.sources.common import CapturedDataset, VisitContext, Visited
from headwater.agent.sources.visit import visit_plan

__all__ = ["CapturedDataset", "VisitContext", "Visited", "visit_plan"]
