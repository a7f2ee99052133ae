"""Read queries over the store's tables (the query API's side of ``headwater.store``).

Modules, one concept each:

- :mod:`~headwater.store.reads.common` — paging, times, node-id lookups;
- :mod:`~headwater.store.reads.datasets` — namespaces, sources, datasets, versions;
- :mod:`~headwater.store.reads.jobs` — jobs and job versions;
- :mod:`~headwater.store.reads.runs` — runs, run facets, which versions a run read;
- :mod:`~headwater.store.reads.table_lineage`, :mod:`~headwater.store.reads.run_lineage`,
  :mod:`~headwater.store.reads.column_lineage` — neighbour sources for the graph walk
  (dataset/job, run/version and column edges);
- :mod:`~headwater.store.reads.job_version_at` — a job's version at a time;
- :mod:`~headwater.store.reads.search` — search and the raw event log.

Every function takes an open :class:`sqlalchemy.Connection`; callers decide the
transaction (a read API request uses one connection for all its queries).
"""

from __future__ import annotations

from headwater.store.reads.column_lineage import ColumnLineage
from headwater.store.reads.common import Page
from headwater.store.reads.run_lineage import RunLineage
from headwater.store.reads.runs import InputVersion, run_input_versions
from headwater.store.reads.table_lineage import TableLineage

__all__ = [
    "ColumnLineage",
    "InputVersion",
    "Page",
    "RunLineage",
    "TableLineage",
    "run_input_versions",
]
