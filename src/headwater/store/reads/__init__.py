"""Read queries over the store's tables (the query API's side of ``headwater.store``).

Modules, one concept each:

- :mod:`~headwater.store.reads.common` — paging, times, node-id lookups;
- :mod:`~headwater.store.reads.datasets` — namespaces, sources, datasets, versions;
- :mod:`~headwater.store.reads.jobs` — jobs and job versions;
- :mod:`~headwater.store.reads.runs` — runs, run facets, which versions a run read;
- :mod:`~headwater.store.reads.lineage` — neighbour sources for the graph walk;
- :mod:`~headwater.store.reads.search` — search and the raw event log.

Every function takes an open :class:`sqlalchemy.Connection`; callers decide the
transaction (a read API request uses one connection for all its queries).
"""

from __future__ import annotations

from headwater.store.reads.common import Page
from headwater.store.reads.lineage import ColumnLineage, RunLineage, TableLineage
from headwater.store.reads.runs import InputVersion, run_input_versions

__all__ = [
    "ColumnLineage",
    "InputVersion",
    "Page",
    "RunLineage",
    "TableLineage",
    "run_input_versions",
]
