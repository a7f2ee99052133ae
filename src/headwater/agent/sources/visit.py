"""The visit loop: :func:`visit_plan` runs the source families over a captured plan."""

from __future__ import annotations

from headwater.agent.sources.common import CapturedDataset, VisitContext, Visited
from headwater.agent.sources.registry import read_datasets, write_outputs

__all__ = ["visit_plan"]


def visit_plan(ctx: VisitContext) -> Visited:
    """Inputs and outputs of the captured plan."""
    root = ctx.tree
    visited = Visited()
    handled = write_outputs(root, ctx, visited)
    # Inputs are the leaf relations of whatever the action read: the whole tree
    # for queries and inserts (a CTAS keeps its query as an inner plan).
    if not handled or root.children or root.inner:
        for node in root.walk():
            visited.inputs.extend(read_datasets(node, ctx))
    visited.inputs = _dedupe(visited.inputs)
    visited.outputs = _dedupe(visited.outputs)
    return visited


def _dedupe(datasets: list[CapturedDataset]) -> list[CapturedDataset]:
    merged: dict[tuple[str, str], CapturedDataset] = {}
    for ds in datasets:
        key = (ds.namespace, ds.name)
        if key in merged:
            kept = merged[key]
            kept.attributes.update(ds.attributes)
            for expr_id, sources in ds.derived_attributes.items():
                kept.derived_attributes.setdefault(expr_id, []).extend(sources)
            kept.row_sources.extend(ds.row_sources)
            # Two SQL reads of one table may each see some of its columns.
            known = {f[0] for f in kept.fields}
            kept.fields.extend(f for f in ds.fields if f[0] not in known)
            for link in ds.symlinks:
                if link not in kept.symlinks:
                    kept.symlinks.append(link)
        else:
            merged[key] = ds
    return list(merged.values())
