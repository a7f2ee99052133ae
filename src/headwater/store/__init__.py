"""headwater's store: every OpenLineage event, kept in SQLite or PostgreSQL.

All SQL in headwater lives in this package (SQLAlchemy Core; dialect
differences in ``dialects``; Alembic chain in ``migrations``). Writers call
:meth:`Store.record` with events parsed by :func:`headwater.events.parse_event`;
read queries use the tables in ``tables`` and the
selects in ``queries``.

Tables (``tables.py`` has every column)::

    events            append-only raw log, one row per distinct event (sha256 of canonical JSON)
    namespaces        every job and dataset namespace
    sources           from dataSource facets (else one per dataset namespace)
    datasets          (namespace, name); current fields/description/source/lifecycle/version
    dataset_symlinks  symlinks facet identifiers of a dataset
    fields            the current fields of each dataset (mirror of datasets.fields)
    dataset_versions  one per (dataset, producing run), or per DatasetEvent; schema snapshot
    dataset_drifts    schema changes between consecutive versions of a dataset (``drift.py``)
    jobs              (namespace, name); current job version
    job_versions      job + sorted input/output node ids + source location
    runs              one per runId: state, start/end, nominal times, parent, job version
    run_inputs        run read dataset (version resolved at query time: queries.py)
    run_outputs       run wrote dataset version
    facets            latest facet per (kind, subject, run_uuid, name)
    event_subjects    node id -> events mentioning it (facet history = those events' facets)
    column_lineage    source field -> target field edges, indexed both directions
    column_fingerprints  each job's output columns with their duplicate-work
                      fingerprint digests (``fingerprints.py``)
    tags, tag_assignments   tags facets on datasets, fields and jobs
    quarantine        events the write path refused, with the reason (``quarantine.py``)
    api_tokens, audit_log   hashed scoped tokens; the append-only audit log (``access.py``)
    tag_definitions, propagation_blocks, owners, tag_history   users' classification
                      (``classification.py``)
    producer_hours, producer_agents   per-producer arrivals, refusals and the agent's
                      emission figures (``producers.py``)
    namespace_counts  each namespace's shown datasets and jobs, kept by triggers
                      (``namespace_counts.py``)

Order independence (the store is a function of the *set* of events):

* The same event twice changes nothing: events are keyed by content hash.
* Each column follows a merge rule (``merge.py``): earliest ``created_at``,
  latest ``updated_at``, and "latest wins" values chosen by (event time, event
  hash) — the hash breaks ties, so equal times give one answer.
* Run state: terminal (COMPLETE/FAIL/ABORT) outranks START/RUNNING, which
  outrank OTHER; within a rank the latest event time wins. A late RUNNING
  never reopens a finished run.
* Several producers' events for one run merge: inputs/outputs are unions,
  facets are latest by event time per name.
* Values derived from other rows (current schema, versions, job versions,
  schema drift, duplicate-work fingerprints) are recomputed from stored facts
  for what each batch touched (``derive.py``).
* The version a run read is resolved at query time (``queries.py``): the
  latest version produced strictly before the read's event time.

Reading (for query code):

* Which version did run R read: ``queries.run_input_versions().where(
  run_inputs.c.run_uuid == R)`` (or the scalar ``queries.input_version_uuid``
  inside a larger select); which run produced it: ``dataset_versions.run_uuid``.
* What R wrote: ``run_outputs.dataset_version_uuid`` (deterministic per run
  and dataset).
* Column edges: ``column_lineage`` rows point source (dataset id, field) ->
  target (dataset id, field); walk upstream from a target with the unique
  index (target first), downstream from a source with
  ``ix_column_lineage_source``. ``target_field = ''`` marks a dataset-level
  (``dataset`` list) edge that affects every field of the target.
* History of facet N of node S: ``event_subjects`` rows for S (by
  ``event_time``) joined to ``events.payload`` on ``event_hash``.

All times are naive UTC (``eventTime`` without a zone is taken as UTC;
nanoseconds are truncated to microseconds).
"""

from __future__ import annotations

from headwater.store import access as _access  # noqa: F401 - its tables join the metadata
from headwater.store import classification as _classification  # noqa: F401 - likewise
from headwater.store import namespace_counts as _namespace_counts  # noqa: F401 - likewise
from headwater.store import producers as _producers  # noqa: F401 - likewise
from headwater.store.store import LOT_EVENTS, RecordResult, Store

__all__ = ["LOT_EVENTS", "RecordResult", "Store"]
