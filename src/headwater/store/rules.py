"""The merge rule of every table the write path upserts (see ``merge``)."""

from __future__ import annotations

from headwater.store import tables as t
from headwater.store.merge import MergeRule

__all__ = [
    "BY_TABLE",
    "COLUMN_LINEAGE",
    "DATASETS",
    "DATASET_ALIASES",
    "DATASET_SYMLINKS",
    "DATASET_VERSIONS",
    "FACETS",
    "JOBS",
    "JOB_VERSIONS",
    "NAMESPACES",
    "RUNS",
    "RUN_INPUTS",
    "RUN_OUTPUTS",
    "SOURCES",
    "TAGS",
    "TAG_ASSIGNMENTS",
]

NAMESPACES = MergeRule(t.namespaces, ("name",))
SOURCES = MergeRule(
    t.sources, ("name",), guard=("url_time", "url_hash"), guarded=("connection_url",)
)
# Every batch naming a dataset or a job counts its revision (store.revisions).
DATASETS = MergeRule(t.datasets, ("namespace_id", "name"), counted=("revision",))
# A symlink's type is the smallest seen: any fixed choice is order-independent.
DATASET_SYMLINKS = MergeRule(
    t.dataset_symlinks, ("dataset_id", "namespace", "name"), least=("created_at", "type")
)
# A raw name maps to one dataset under one rule set; a rule change is a rebuild.
DATASET_ALIASES = MergeRule(t.dataset_aliases, ("namespace", "name"))
JOBS = MergeRule(t.jobs, ("namespace_id", "name"), counted=("revision",))
JOB_VERSIONS = MergeRule(t.job_versions, ("uuid",))
RUNS = MergeRule(
    t.runs,
    ("uuid",),
    least=("created_at", "started_at"),
    guard=("state_rank", "state_time", "state_hash"),
    guarded=("state", "ended_at"),
)
DATASET_VERSIONS = MergeRule(t.dataset_versions, ("uuid",))
RUN_INPUTS = MergeRule(t.run_inputs, ("run_uuid", "dataset_id"))
RUN_OUTPUTS = MergeRule(t.run_outputs, ("run_uuid", "dataset_id"))
FACETS = MergeRule(
    t.facets,
    ("kind", "subject", "run_uuid", "name"),
    least=(),
    greatest=(),
    guard=("event_time", "event_hash"),
    guarded=("payload",),
)
COLUMN_LINEAGE = MergeRule(
    t.column_lineage,
    (
        "target_dataset_id",
        "target_field",
        "source_dataset_id",
        "source_field",
        "transformation_type",
        "transformation_subtype",
    ),
    guard=("edge_time", "edge_hash"),
    guarded=("description", "masking", "run_uuid"),
)
TAGS = MergeRule(t.tags, ("name",))
TAG_ASSIGNMENTS = MergeRule(
    t.tag_assignments,
    ("tag_id", "subject"),
    guard=("tag_time", "tag_hash"),
    guarded=("value", "source"),
)

#: Each rule by its table's name.
BY_TABLE = {rule.table.name: rule for rule in (
    NAMESPACES, SOURCES, DATASETS, DATASET_SYMLINKS, JOBS, JOB_VERSIONS, RUNS, DATASET_VERSIONS,
    RUN_INPUTS, RUN_OUTPUTS, FACETS, COLUMN_LINEAGE, TAGS, TAG_ASSIGNMENTS, DATASET_ALIASES)}
