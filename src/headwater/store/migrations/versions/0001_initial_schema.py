"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 08:33:23.589378
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('event_subjects',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('event_time', sa.DateTime(), nullable=False),
    sa.Column('event_hash', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_event_subjects'))
    )
    with op.batch_alter_table('event_subjects', schema=None) as batch_op:
        batch_op.create_index('ix_event_subjects_subject_event_time', ['subject', 'event_time'], unique=False)

    op.create_table('events',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('event_hash', sa.String(length=64), nullable=False),
    sa.Column('event_time', sa.DateTime(), nullable=False),
    sa.Column('event_type', sa.Text(), nullable=True),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('run_uuid', sa.Text(), nullable=True),
    sa.Column('job_namespace', sa.Text(), nullable=True),
    sa.Column('job_name', sa.Text(), nullable=True),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('received_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_events')),
    sa.UniqueConstraint('event_hash', name=op.f('uq_events_event_hash'))
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_events_event_time'), ['event_time'], unique=False)
        batch_op.create_index(batch_op.f('ix_events_run_uuid'), ['run_uuid'], unique=False)

    op.create_table('facets',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('run_uuid', sa.Text(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('payload', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('event_time', sa.DateTime(), nullable=False),
    sa.Column('event_hash', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_facets')),
    sa.UniqueConstraint('kind', 'subject', 'run_uuid', 'name', name=op.f('uq_facets_kind_subject_run_uuid_name'))
    )
    op.create_table('namespaces',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_namespaces')),
    sa.UniqueConstraint('name', name=op.f('uq_namespaces_name'))
    )
    op.create_table('sources',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('connection_url', sa.Text(), nullable=True),
    sa.Column('url_time', sa.DateTime(), nullable=False),
    sa.Column('url_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sources')),
    sa.UniqueConstraint('name', name=op.f('uq_sources_name'))
    )
    op.create_table('tags',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tags')),
    sa.UniqueConstraint('name', name=op.f('uq_tags_name'))
    )
    op.create_table('datasets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('namespace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('source_name', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('fields', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('lifecycle_state', sa.Text(), nullable=True),
    sa.Column('current_version_uuid', sa.String(length=36), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['namespace_id'], ['namespaces.id'], name=op.f('fk_datasets_namespace_id_namespaces')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_datasets')),
    sa.UniqueConstraint('namespace_id', 'name', name=op.f('uq_datasets_namespace_id_name'))
    )
    op.create_table('jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('namespace_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('current_version_uuid', sa.String(length=36), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['namespace_id'], ['namespaces.id'], name=op.f('fk_jobs_namespace_id_namespaces')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs')),
    sa.UniqueConstraint('namespace_id', 'name', name=op.f('uq_jobs_namespace_id_name'))
    )
    op.create_table('tag_assignments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tag_id', sa.Integer(), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('value', sa.Text(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('tag_time', sa.DateTime(), nullable=False),
    sa.Column('tag_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['tag_id'], ['tags.id'], name=op.f('fk_tag_assignments_tag_id_tags')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tag_assignments')),
    sa.UniqueConstraint('tag_id', 'subject', name=op.f('uq_tag_assignments_tag_id_subject'))
    )
    with op.batch_alter_table('tag_assignments', schema=None) as batch_op:
        batch_op.create_index('ix_tag_assignments_subject', ['subject'], unique=False)

    op.create_table('column_lineage',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('source_dataset_id', sa.Integer(), nullable=False),
    sa.Column('source_field', sa.Text(), nullable=False),
    sa.Column('target_dataset_id', sa.Integer(), nullable=False),
    sa.Column('target_field', sa.Text(), nullable=False),
    sa.Column('transformation_type', sa.Text(), nullable=False),
    sa.Column('transformation_subtype', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('masking', sa.Boolean(), nullable=True),
    sa.Column('run_uuid', sa.Text(), nullable=True),
    sa.Column('edge_time', sa.DateTime(), nullable=False),
    sa.Column('edge_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['source_dataset_id'], ['datasets.id'], name=op.f('fk_column_lineage_source_dataset_id_datasets')),
    sa.ForeignKeyConstraint(['target_dataset_id'], ['datasets.id'], name=op.f('fk_column_lineage_target_dataset_id_datasets')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_column_lineage')),
    sa.UniqueConstraint('target_dataset_id', 'target_field', 'source_dataset_id', 'source_field', 'transformation_type', 'transformation_subtype', name=op.f('uq_column_lineage_target_dataset_id_target_field_source_dataset_id_source_field_transformation_type_transformation_subtype'))
    )
    with op.batch_alter_table('column_lineage', schema=None) as batch_op:
        batch_op.create_index('ix_column_lineage_source', ['source_dataset_id', 'source_field'], unique=False)

    op.create_table('dataset_symlinks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dataset_id', sa.Integer(), nullable=False),
    sa.Column('namespace', sa.Text(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('type', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_dataset_symlinks_dataset_id_datasets')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dataset_symlinks')),
    sa.UniqueConstraint('dataset_id', 'namespace', 'name', name=op.f('uq_dataset_symlinks_dataset_id_namespace_name'))
    )
    with op.batch_alter_table('dataset_symlinks', schema=None) as batch_op:
        batch_op.create_index('ix_dataset_symlinks_namespace_name', ['namespace', 'name'], unique=False)

    op.create_table('dataset_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('dataset_id', sa.Integer(), nullable=False),
    sa.Column('run_uuid', sa.Text(), nullable=True),
    sa.Column('fields', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('lifecycle_state', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_dataset_versions_dataset_id_datasets')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dataset_versions')),
    sa.UniqueConstraint('uuid', name=op.f('uq_dataset_versions_uuid'))
    )
    with op.batch_alter_table('dataset_versions', schema=None) as batch_op:
        batch_op.create_index('ix_dataset_versions_dataset_id_updated_at', ['dataset_id', 'updated_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_dataset_versions_run_uuid'), ['run_uuid'], unique=False)

    op.create_table('fields',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dataset_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('type', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_fields_dataset_id_datasets')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_fields')),
    sa.UniqueConstraint('dataset_id', 'name', name=op.f('uq_fields_dataset_id_name'))
    )
    op.create_table('job_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('location', sa.Text(), nullable=True),
    sa.Column('inputs', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('outputs', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_job_versions_job_id_jobs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_job_versions')),
    sa.UniqueConstraint('uuid', name=op.f('uq_job_versions_uuid'))
    )
    with op.batch_alter_table('job_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_job_versions_job_id'), ['job_id'], unique=False)

    op.create_table('run_inputs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_uuid', sa.Text(), nullable=False),
    sa.Column('dataset_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_run_inputs_dataset_id_datasets')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_run_inputs')),
    sa.UniqueConstraint('run_uuid', 'dataset_id', name=op.f('uq_run_inputs_run_uuid_dataset_id'))
    )
    with op.batch_alter_table('run_inputs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_run_inputs_dataset_id'), ['dataset_id'], unique=False)

    op.create_table('run_outputs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_uuid', sa.Text(), nullable=False),
    sa.Column('dataset_id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_uuid', sa.String(length=36), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_id'], ['datasets.id'], name=op.f('fk_run_outputs_dataset_id_datasets')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_run_outputs')),
    sa.UniqueConstraint('run_uuid', 'dataset_id', name=op.f('uq_run_outputs_run_uuid_dataset_id'))
    )
    with op.batch_alter_table('run_outputs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_run_outputs_dataset_id'), ['dataset_id'], unique=False)

    op.create_table('runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.Text(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('job_version_uuid', sa.String(length=36), nullable=True),
    sa.Column('state', sa.String(length=16), nullable=True),
    sa.Column('state_rank', sa.SmallInteger(), nullable=False),
    sa.Column('state_time', sa.DateTime(), nullable=False),
    sa.Column('state_hash', sa.String(length=64), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=True),
    sa.Column('ended_at', sa.DateTime(), nullable=True),
    sa.Column('nominal_start_time', sa.DateTime(), nullable=True),
    sa.Column('nominal_end_time', sa.DateTime(), nullable=True),
    sa.Column('parent_run_uuid', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_runs_job_id_jobs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_runs')),
    sa.UniqueConstraint('uuid', name=op.f('uq_runs_uuid'))
    )
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.create_index('ix_runs_job_id_created_at', ['job_id', 'created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_runs_job_version_uuid'), ['job_version_uuid'], unique=False)
        batch_op.create_index(batch_op.f('ix_runs_parent_run_uuid'), ['parent_run_uuid'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_runs_parent_run_uuid'))
        batch_op.drop_index(batch_op.f('ix_runs_job_version_uuid'))
        batch_op.drop_index('ix_runs_job_id_created_at')

    op.drop_table('runs')
    with op.batch_alter_table('run_outputs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_run_outputs_dataset_id'))

    op.drop_table('run_outputs')
    with op.batch_alter_table('run_inputs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_run_inputs_dataset_id'))

    op.drop_table('run_inputs')
    with op.batch_alter_table('job_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_job_versions_job_id'))

    op.drop_table('job_versions')
    op.drop_table('fields')
    with op.batch_alter_table('dataset_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dataset_versions_run_uuid'))
        batch_op.drop_index('ix_dataset_versions_dataset_id_updated_at')

    op.drop_table('dataset_versions')
    with op.batch_alter_table('dataset_symlinks', schema=None) as batch_op:
        batch_op.drop_index('ix_dataset_symlinks_namespace_name')

    op.drop_table('dataset_symlinks')
    with op.batch_alter_table('column_lineage', schema=None) as batch_op:
        batch_op.drop_index('ix_column_lineage_source')

    op.drop_table('column_lineage')
    with op.batch_alter_table('tag_assignments', schema=None) as batch_op:
        batch_op.drop_index('ix_tag_assignments_subject')

    op.drop_table('tag_assignments')
    op.drop_table('jobs')
    op.drop_table('datasets')
    op.drop_table('tags')
    op.drop_table('sources')
    op.drop_table('namespaces')
    op.drop_table('facets')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_events_run_uuid'))
        batch_op.drop_index(batch_op.f('ix_events_event_time'))

    op.drop_table('events')
    with op.batch_alter_table('event_subjects', schema=None) as batch_op:
        batch_op.drop_index('ix_event_subjects_subject_event_time')

    op.drop_table('event_subjects')
