"""The store's tables, as SQLAlchemy Core metadata (the single source of truth).

The Alembic chain in ``migrations/`` must produce exactly this schema; a test
compares them. Conventions, so read queries can rely on them:

* Every time is a naive ``DateTime`` in UTC, taken from OpenLineage
  ``eventTime`` (never from the wall clock, except ``events.received_at``).
* ``created_at``/``updated_at`` on a derived row are the earliest/latest event
  time that mentioned it, so they do not depend on arrival order.
* Run identity is the OpenLineage ``runId`` (``runs.uuid``); tables that point at
  a run carry ``run_uuid`` rather than a surrogate id.
* Facets live in ``facets`` (latest per subject and name); their history is
  the raw log, indexed by node in ``event_subjects``. ``subject`` is a
  headwater node id (``dataset:{ns}:{name}``, ``job:{ns}:{name}``,
  ``run:{uuid}``) or, for ``kind='dataset_version'``, the version's uuid.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

__all__ = [
    "FACET_KINDS",
    "column_fingerprints",
    "column_lineage",
    "dataset_drifts",
    "dataset_symlinks",
    "dataset_versions",
    "datasets",
    "drift_outbox",
    "event_subjects",
    "events",
    "facets",
    "fields",
    "job_current_io",
    "job_declaration_history",
    "job_declarations",
    "job_declared_io",
    "job_declared_io_history",
    "job_versions",
    "jobs",
    "metadata",
    "namespaces",
    "record_epoch",
    "run_inputs",
    "run_outputs",
    "runs",
    "schema_contracts",
    "sources",
    "tag_assignments",
    "tags",
]

#: Values of ``facets.kind``: run/job/dataset facets, a dataset version's facets as
#: written by its run, and the per-run ``inputFacets``/``outputFacets``.
FACET_KINDS = ("dataset", "dataset_version", "input", "job", "output", "run")

# JSON on both databases; JSONB on PostgreSQL so read queries can index into it.
JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _times() -> list[sa.Column[object]]:
    return [
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    ]


# Append-only raw log: the canonical JSON of every distinct event ever received.
events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("event_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("event_time", sa.DateTime(), nullable=False, index=True),
    sa.Column("event_type", sa.Text(), nullable=True),
    sa.Column("kind", sa.String(8), nullable=False),  # run | job | dataset
    sa.Column("run_uuid", sa.Text(), nullable=True, index=True),
    sa.Column("job_namespace", sa.Text(), nullable=True),
    sa.Column("job_name", sa.Text(), nullable=True),
    sa.Column("payload", sa.Text(), nullable=False),  # canonical JSON the hash is taken of
    sa.Column("received_at", sa.DateTime(), nullable=False),
)

namespaces = sa.Table(
    "namespaces",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("name", sa.Text(), nullable=False, unique=True),
    *_times(),
    # Set by the Marquez API only (PUT /api/v1/namespaces/{ns}); events carry neither.
    sa.Column("owner_name", sa.Text(), nullable=True),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("deleted_at", sa.DateTime(), nullable=True),  # soft delete: see store.admin
    sa.Index("ix_namespaces_deleted_at", "deleted_at"),
)

# From the ``dataSource`` dataset facet; a dataset without one belongs to a
# source named after its namespace (as Marquez does).
sources = sa.Table(
    "sources",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("name", sa.Text(), nullable=False, unique=True),
    sa.Column("connection_url", sa.Text(), nullable=True),
    sa.Column("url_time", sa.DateTime(), nullable=False),
    sa.Column("url_hash", sa.String(64), nullable=False),
    *_times(),
    # Set by the Marquez API only (PUT /api/v1/sources/{source}); else derived from the URL.
    sa.Column("type", sa.Text(), nullable=True),
    sa.Column("description", sa.Text(), nullable=True),
)

datasets = sa.Table(
    "datasets",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("namespace_id", sa.ForeignKey("namespaces.id"), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    # Derived from the latest facets (see ``facets``) after every write.
    sa.Column("source_name", sa.Text(), nullable=True),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("fields", JSONType, nullable=True),  # schema facet ``fields`` as sent
    sa.Column("lifecycle_state", sa.Text(), nullable=True),
    sa.Column("current_version_uuid", sa.String(36), nullable=True),
    *_times(),
    sa.UniqueConstraint("namespace_id", "name"),
    # Soft delete (Marquez's DELETE): hidden while updated_at <= deleted_at; see store.admin.
    sa.Column("deleted_at", sa.DateTime(), nullable=True),
    sa.Index("ix_datasets_deleted_at", "deleted_at"),
    # Counts the writes that may change the dataset's record (store.revisions).
    sa.Column("revision", sa.BigInteger(), nullable=False, server_default="0"),
)

dataset_symlinks = sa.Table(
    "dataset_symlinks",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("namespace", sa.Text(), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=False),
    *_times(),
    sa.UniqueConstraint("dataset_id", "namespace", "name"),
    sa.Index("ix_dataset_symlinks_namespace_name", "namespace", "name"),
)

# The names events gave a dataset before the namespace rules mapped them
# (store/namespace_rules.py): reads asked by such a name answer with the dataset.
dataset_aliases = sa.Table(
    "dataset_aliases",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("namespace", sa.Text(), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False, index=True),
    *_times(),
    sa.UniqueConstraint("namespace", "name"),
)

# The namespace rules the derived tables follow (one row; none: names as sent).
namespace_rules_applied = sa.Table(
    "namespace_rules_applied",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("rules", sa.Text(), nullable=False),
    sa.Column("applied_at", sa.DateTime(), nullable=False),
)

# Current fields of each dataset: a function of ``datasets.fields``.
fields = sa.Table(
    "fields",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("type", sa.Text(), nullable=True),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.UniqueConstraint("dataset_id", "name"),
)

jobs = sa.Table(
    "jobs",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("namespace_id", sa.ForeignKey("namespaces.id"), nullable=False),
    sa.Column("name", sa.Text(), nullable=False),
    # The job version of the job's latest run (by run created_at, then uuid).
    sa.Column("current_version_uuid", sa.String(36), nullable=True),
    *_times(),
    sa.UniqueConstraint("namespace_id", "name"),
    # Soft delete (Marquez's DELETE): hidden while updated_at <= deleted_at; see store.admin.
    sa.Column("deleted_at", sa.DateTime(), nullable=True),
    sa.Index("ix_jobs_deleted_at", "deleted_at"),
    # Counts the writes that may change the job's record (store.revisions).
    sa.Column("revision", sa.BigInteger(), nullable=False, server_default="0"),
)

# One row (id 1): counts the writes outside the event write path that may change
# any dataset's or job's record (store.revisions).
record_epoch = sa.Table(
    "record_epoch",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
    sa.Column("epoch", sa.BigInteger(), nullable=False),
)

# A job version is the job plus the sorted input and output dataset node ids
# and source-code location of a run; runs with the same shape share it.
job_versions = sa.Table(
    "job_versions",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("job_id", sa.ForeignKey("jobs.id"), nullable=False, index=True),
    sa.Column("location", sa.Text(), nullable=True),
    sa.Column("inputs", JSONType, nullable=False),
    sa.Column("outputs", JSONType, nullable=False),
    *_times(),
)

# The inputs and outputs of each job's current version (its latest run's), one
# row per (job, direction, dataset): the table-lineage walk finds a dataset's
# producing and reading jobs here instead of through every run.
# ``direction`` is 'input' or 'output'. Kept by ``store.current_io`` whenever
# ``jobs.current_version_uuid`` changes.
job_current_io = sa.Table(
    "job_current_io",
    metadata,
    sa.Column("job_id", sa.ForeignKey("jobs.id"), primary_key=True),
    sa.Column("direction", sa.String(6), primary_key=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), primary_key=True),
    # The jobs that read or write a dataset, answered from the index alone.
    sa.Index("ix_job_current_io_dataset_id_direction_job_id", "dataset_id", "direction", "job_id"),
)

# Static lineage: the inputs and outputs a JobEvent declares for a job (a BI
# dashboard reading a gold table runs under no producer). ``job_declarations``
# holds each job's latest declaring event by (event time, hash); its datasets
# are in ``job_declared_io``, and ``store.current_io`` adds them to the job's
# ``job_current_io`` rows. Kept by ``store.declared_io``.
job_declarations = sa.Table(
    "job_declarations",
    metadata,
    sa.Column("job_id", sa.ForeignKey("jobs.id"), primary_key=True),
    sa.Column("declared_time", sa.DateTime(), nullable=False),
    sa.Column("declared_hash", sa.String(64), nullable=False),
)

job_declared_io = sa.Table(
    "job_declared_io",
    metadata,
    sa.Column("job_id", sa.ForeignKey("jobs.id"), primary_key=True),
    sa.Column("direction", sa.String(6), primary_key=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), primary_key=True),
)

# Every declaration, for answers as of a time: one row per (job, declaring
# event) and its datasets; the one in force at T is the job's greatest
# (declared_time, declared_hash) at or before T. Kept by ``store.declared_io``.
job_declaration_history = sa.Table(
    "job_declaration_history",
    metadata,
    sa.Column("job_id", sa.ForeignKey("jobs.id"), primary_key=True),
    sa.Column("declared_hash", sa.String(64), primary_key=True),
    sa.Column("declared_time", sa.DateTime(), nullable=False),
)
job_declared_io_history = sa.Table(
    "job_declared_io_history",
    metadata,
    sa.Column("job_id", sa.ForeignKey("jobs.id"), primary_key=True),
    sa.Column("declared_hash", sa.String(64), primary_key=True),
    sa.Column("direction", sa.String(6), primary_key=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Index("ix_job_declared_io_history_dataset_id_direction", "dataset_id", "direction"),
)
runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("uuid", sa.Text(), nullable=False, unique=True),
    sa.Column("job_id", sa.ForeignKey("jobs.id"), nullable=False),
    sa.Column("job_version_uuid", sa.String(36), nullable=True, index=True),
    # State = the winner among the run's events by (state_rank, state_time,
    # state_hash): rank 2 terminal (COMPLETE/FAIL/ABORT), 1 START/RUNNING,
    # 0 OTHER or no eventType. So a terminal state is never reopened.
    sa.Column("state", sa.String(16), nullable=True),
    sa.Column("state_rank", sa.SmallInteger(), nullable=False),
    sa.Column("state_time", sa.DateTime(), nullable=False),
    sa.Column("state_hash", sa.String(64), nullable=False),
    sa.Column("started_at", sa.DateTime(), nullable=True),  # earliest START
    sa.Column("ended_at", sa.DateTime(), nullable=True),  # time of the terminal state
    sa.Column("nominal_start_time", sa.DateTime(), nullable=True),
    sa.Column("nominal_end_time", sa.DateTime(), nullable=True),
    sa.Column("parent_run_uuid", sa.Text(), nullable=True),
    *_times(),
    # A job's runs in page order, newest first: (created_at, uuid) read off the index.
    sa.Index("ix_runs_job_id_created_at", "job_id", "created_at", "uuid"),
    # A run's children in page order (GET /api/v1/jobs/runs/{id}/children), and any
    # look-up by parent: a narrower index on parent_run_uuid would add only writes.
    # Partial: most runs have no parent, so they write no entry, and SQLite's ANALYZE
    # does not count them as one value (which made its planner scan runs instead).
    sa.Index(
        "ix_runs_parent_run_uuid_created_at",
        "parent_run_uuid",
        "created_at",
        "uuid",
        postgresql_where=sa.text("parent_run_uuid IS NOT NULL"),
        sqlite_where=sa.text("parent_run_uuid IS NOT NULL"),
    ),
    # Retention's pages of runs last updated before its cutoff.
    sa.Index("ix_runs_updated_at_uuid", "updated_at", "uuid"),
)

# A dataset version per (dataset, producing run); a DatasetEvent makes a
# version of its own (run_uuid NULL). ``created_at`` is the version's time: the
# latest event time of the producing run that lists it as an output.
dataset_versions = sa.Table(
    "dataset_versions",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("run_uuid", sa.Text(), nullable=True, index=True),
    sa.Column("fields", JSONType, nullable=True),
    sa.Column("lifecycle_state", sa.Text(), nullable=True),
    *_times(),
    sa.Index("ix_dataset_versions_dataset_id_updated_at", "dataset_id", "updated_at"),
)

# Schema drift: one row per pair of consecutive schema-bearing versions of a
# dataset whose schemas differ (``graph.drift``), the pair's changes as a JSON
# list of ``Change.as_dict()``. Versions are ordered as ``current_version_uuid``
# orders them, by (``updated_at``, ``uuid``); versions without a schema facet
# are skipped. ``changed_at`` is the newer version's ``updated_at`` (its
# ``createdAt`` in the versions API). Derived by ``store.drift``.
dataset_drifts = sa.Table(
    "dataset_drifts",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("version_uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("previous_version_uuid", sa.String(36), nullable=False),
    sa.Column("changed_at", sa.DateTime(), nullable=False),
    sa.Column("breaking", sa.Boolean(), nullable=False),
    sa.Column("changes", JSONType, nullable=False),
    # Newest first, everywhere or for one dataset.
    sa.Index("ix_dataset_drifts_changed_at", "changed_at"),
    sa.Index("ix_dataset_drifts_dataset_id_changed_at", "dataset_id", "changed_at"),
)

# Contract drift: per (dataset, consumer job), the consumer's latest
# ``declaredSchema`` input facet on the dataset (latest by the facet's event
# time, then run uuid) against the dataset's latest schema-bearing version
# (``graph.contract``). A row exists for every job that declares a schema for
# a dataset (so a new version of the dataset finds its consumers by index);
# ``differs`` marks the rows the drift feed lists. ``changed_at`` is the later
# of ``declared_at`` and ``written_at`` (the moment both facts exist).
# Derived by ``store.contract``.
schema_contracts = sa.Table(
    "schema_contracts",
    metadata,
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("job_id", sa.ForeignKey("jobs.id"), primary_key=True),
    sa.Column("run_uuid", sa.Text(), nullable=False),
    sa.Column("declared_at", sa.DateTime(), nullable=False),
    sa.Column("declared", JSONType, nullable=False),
    sa.Column("version_uuid", sa.String(36), nullable=True),
    sa.Column("written_at", sa.DateTime(), nullable=True),
    sa.Column("changed_at", sa.DateTime(), nullable=False),
    sa.Column("differs", sa.Boolean(), nullable=False),
    sa.Column("breaking", sa.Boolean(), nullable=False),
    sa.Column("changes", JSONType, nullable=False),
    # The feed: differing rows newest first.
    sa.Index("ix_schema_contracts_differs_changed_at", "differs", "changed_at"),
)

# Drifts waiting for the webhook (server/drift_webhook.py): one row per drift whose
# row was written or changed, keyed ``version:{version uuid}`` or
# ``contract:{dataset id}:{job id}``, written in the transaction that wrote the
# drift (so none is lost between commit and delivery) and deleted once
# delivered or given up. An operational queue, not derived state: its times are
# the wall clock's.
drift_outbox = sa.Table(
    "drift_outbox",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("drift_key", sa.Text(), nullable=False, unique=True),
    sa.Column("enqueued_at", sa.DateTime(), nullable=False),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("next_attempt_at", sa.DateTime(), nullable=False),
    sa.Column("last_error", sa.Text(), nullable=True),
    # The worker's scan: due rows, oldest first.
    sa.Index("ix_drift_outbox_next_attempt_at", "next_attempt_at"),
)

# What a run read. The version it read is not stored: it is the latest version
# of the dataset created strictly before ``created_at`` (the earliest event of
# the run listing the input) by another run -- see ``queries.run_input_versions``.
run_inputs = sa.Table(
    "run_inputs",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("run_uuid", sa.Text(), nullable=False),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    *_times(),
    sa.UniqueConstraint("run_uuid", "dataset_id"),
    # Readers of a dataset within a time window (run-level lineage downstream of a
    # version); it also serves a dataset's readers at any time and the foreign key.
    sa.Index("ix_run_inputs_dataset_id_created_at", "dataset_id", "created_at"),
)

run_outputs = sa.Table(
    "run_outputs",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("run_uuid", sa.Text(), nullable=False),
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False, index=True),
    sa.Column("dataset_version_uuid", sa.String(36), nullable=False),
    *_times(),
    sa.UniqueConstraint("run_uuid", "dataset_id"),
)


# Latest facet per (kind, subject, run_uuid, name) by (event_time, event_hash).
facets = sa.Table(
    "facets",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("subject", sa.Text(), nullable=False),
    sa.Column("run_uuid", sa.Text(), nullable=False),  # '' unless input/output/job-in-run
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("payload", JSONType, nullable=False),
    sa.Column("event_time", sa.DateTime(), nullable=False),
    sa.Column("event_hash", sa.String(64), nullable=False),
    sa.UniqueConstraint("kind", "subject", "run_uuid", "name"),
    # Retention deletes a run's facets by run_uuid, the third column of the key.
    sa.Index("ix_facets_run_uuid", "run_uuid"),
)

# Facet history, as an index into the raw log: one row per (event, node it
# mentions). The history of facet N of node S is facet N inside
# ``events.payload`` of S's events, in ``event_time`` order. Not copying
# payloads (or writing one row per facet) keeps the write path's bytes and
# rows per event small. ``subject`` is a run, job or dataset node id.
event_subjects = sa.Table(
    "event_subjects",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("subject", sa.Text(), nullable=False),
    sa.Column("event_time", sa.DateTime(), nullable=False),
    sa.Column("event_hash", sa.String(64), nullable=False),
    # Rows are written once, with their event (the log dedupes events), so no
    # unique index is paid for.
    sa.Index("ix_event_subjects_subject_event_time", "subject", "event_time"),
    # Retention deletes the rows of a run's events by hash; without it each of its
    # transactions reads the whole table.
    sa.Index("ix_event_subjects_event_hash", "event_hash"),
)

# Column-level lineage from the ``columnLineage`` facet: one edge per source
# field, target field and transformation. ``target_field`` is '' for the
# facet's dataset-level ``dataset`` entries (they affect every field).
column_lineage = sa.Table(
    "column_lineage",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("source_dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("source_field", sa.Text(), nullable=False),
    sa.Column("target_dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("target_field", sa.Text(), nullable=False),
    sa.Column("transformation_type", sa.Text(), nullable=False),  # '' if not given
    sa.Column("transformation_subtype", sa.Text(), nullable=False),
    # The latest assertion of the edge (by edge_time, edge_hash) supplies these.
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("masking", sa.Boolean(), nullable=True),
    sa.Column("run_uuid", sa.Text(), nullable=True),
    sa.Column("edge_time", sa.DateTime(), nullable=False),
    sa.Column("edge_hash", sa.String(64), nullable=False),
    *_times(),
    sa.UniqueConstraint(
        "target_dataset_id",
        "target_field",
        "source_dataset_id",
        "source_field",
        "transformation_type",
        "transformation_subtype",
    ),
    sa.Index("ix_column_lineage_source", "source_dataset_id", "source_field"),
)

# Duplicate work, write side: one row per output column of a job (``job_id``
# writes ``field`` of ``dataset_id``) with the digests of its fingerprint
# (``graph.duplicates``), recomputed from ``column_lineage`` for the targets a
# batch's edges touch (``store.fingerprints``), so it is a function of the stored
# edges whatever order events arrive in. A column's job is the job of the run that
# last asserted each of its edges, as the edges are read. ``key_hash`` (the value
# part's digest) is indexed: candidate pairs of jobs are the rows sharing one.
column_fingerprints = sa.Table(
    "column_fingerprints",
    metadata,
    sa.Column("dataset_id", sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("field", sa.Text(), nullable=False),
    sa.Column("job_id", sa.ForeignKey("jobs.id"), nullable=False),
    sa.Column("key_hash", sa.BigInteger(), nullable=False),
    sa.Column("print_hash", sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint("dataset_id", "field", "job_id"),
    sa.Index("ix_column_fingerprints_key_hash_job_id", "key_hash", "job_id"),
    sa.Index("ix_column_fingerprints_job_id", "job_id"),
)

tags = sa.Table(
    "tags",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("name", sa.Text(), nullable=False, unique=True),
    sa.Column("description", sa.Text(), nullable=True),
    *_times(),
)

# A tag on a node id (dataset, datasetField, job); from ``tags`` facets
# ({key, value, source}) and schema field ``tags``.
tag_assignments = sa.Table(
    "tag_assignments",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("tag_id", sa.ForeignKey("tags.id"), nullable=False),
    sa.Column("subject", sa.Text(), nullable=False),
    sa.Column("value", sa.Text(), nullable=True),
    sa.Column("source", sa.Text(), nullable=True),
    sa.Column("tag_time", sa.DateTime(), nullable=False),
    sa.Column("tag_hash", sa.String(64), nullable=False),
    *_times(),
    sa.UniqueConstraint("tag_id", "subject"),
    sa.Index("ix_tag_assignments_subject", "subject"),
)

# Events the write path refused (the parser or, isolated, the database), kept
# because most producers keep nothing of what a server rejects. One row per
# distinct payload; a producer re-sending it bumps ``times_seen``.
quarantine = sa.Table(
    "quarantine",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
    sa.Column("payload_hash", sa.String(64), nullable=False, unique=True),
    # The value as received, as JSON text: NUL characters stay escaped (\u0000),
    # so any refused event fits a text column on both databases.
    sa.Column("payload", sa.Text(), nullable=False),
    sa.Column("reason", sa.Text(), nullable=False),
    sa.Column("field", sa.Text(), nullable=True),
    sa.Column("status", sa.Integer(), nullable=False),  # the HTTP status the producer got
    sa.Column("times_seen", sa.Integer(), nullable=False),
    sa.Column("first_received_at", sa.DateTime(), nullable=False),
    sa.Column("last_received_at", sa.DateTime(), nullable=False, index=True),
)
