"""Plan visitors: which datasets an action read and wrote.

One module per plan-node family — :mod:`.reads` (leaf relations), :mod:`.writes`
(insert / CTAS / save commands) and :mod:`.commands` (DDL). Each works on the
plain :class:`~headwater.agent.plan.PlanNode` tree and the JVM facts captured
with it, so all of them run without a JVM. They share :mod:`.datasets`, one
floor below them; :mod:`.base` runs them over a plan.
"""

from __future__ import annotations

from headwater.agent.visitors.base import visit_plan
from headwater.agent.visitors.datasets import CapturedDataset, VisitContext, Visited

__all__ = ["CapturedDataset", "VisitContext", "Visited", "visit_plan"]
