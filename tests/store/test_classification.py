"""The classification facts the store keeps and reads, on both databases: each job's
current column edges as of a time, blocks in force as of a time, owners, and the
users' rows a rebuild carries to a new store."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from headwater.errors import NotFoundError, WriteRefused
from headwater.store import Store
from headwater.store import classification as writes
from headwater.store.raw_log import carry
from headwater.store.reads import classification as reads
from tests.api.classification_events import (
    GOLD_CONTACT,
    RAW,
    RAW_EMAIL,
    SILVER_EMAIL,
    SILVER_HASH,
    events,
)
from tests.store.builders import record
from tests.store.dump import dump


def _at(second: int) -> datetime:
    return datetime(2024, 3, 1, 0, 0, second)


def _edges(store: Store, as_of: datetime | None) -> set[tuple[str, str, str, bool]]:
    with store.engine.connect() as conn:
        return {(e.source, e.target, e.transformation_subtype, e.masking)
                for e in reads.column_edges(conn, as_of)}


def test_each_jobs_latest_lineage_as_of_a_time(store: Store) -> None:
    record(store, events())
    silver_copy = (RAW_EMAIL, SILVER_EMAIL, "IDENTITY", False)
    silver_hash = (RAW_EMAIL, SILVER_HASH, "HASH", True)
    gold_v1 = (SILVER_EMAIL, GOLD_CONTACT, "TRANSFORMATION", False)
    assert _edges(store, _at(5)) == set()
    assert {silver_copy, silver_hash} <= _edges(store, _at(15))
    assert gold_v1 not in _edges(store, _at(15))
    assert gold_v1 in _edges(store, _at(30))
    # Gold's second run reads silver's name only: the email edge is retracted from then on.
    now = _edges(store, None)
    assert gold_v1 not in now and silver_copy in now
    assert ("datasetField:file:/silver/customers:name", GOLD_CONTACT, "TRANSFORMATION",
            False) in now
    # The INDIRECT (filter) entry is an edge too; the walk decides it carries nothing.
    with store.engine.connect() as conn:
        kinds = {e.transformation_type for e in reads.column_edges(conn, _at(30))}
    assert kinds == {"DIRECT", "INDIRECT"}


def test_tags_from_schema_fields_as_of_their_time(store: Store) -> None:
    record(store, events())
    with store.engine.connect() as conn:
        assert [(r.tag, r.subject) for r in reads.tag_assignments(conn, None)] == [
            ("PII", RAW_EMAIL)]
        assert reads.tag_assignments(conn, datetime(2024, 2, 1)) == []


def test_blocks_in_force_as_of_a_time(store: Store) -> None:
    record(store, events())
    block = writes.add_block(store.engine, "job:ns:silver", None, None, "PII", "reviewed")
    created = block["createdAt"]
    with pytest.raises(WriteRefused):
        writes.add_block(store.engine, "job:ns:silver", RAW_EMAIL, None, None, None)
    removed = writes.remove_block(store.engine, block["id"])
    with pytest.raises(NotFoundError):
        writes.remove_block(store.engine, block["id"])
    with store.engine.connect() as conn:
        assert reads.blocks(conn, None) == []
        assert [b.id for b in reads.blocks(conn, created)] == [block["id"]]
        assert reads.blocks(conn, removed) == []
        assert reads.blocks(conn, created - timedelta(seconds=1)) == []
        assert [b.removed_at for b in reads.blocks(conn, None, include_removed=True)] == [
            removed]


def test_owners_from_facets_and_api(store: Store) -> None:
    record(store, events())
    writes.put_owner(store.engine, f"dataset:file:{RAW}", "alice", "user")
    writes.put_owner(store.engine, f"dataset:file:{RAW}", "alice", "user")  # harmless twice
    with store.engine.connect() as conn:
        owners = reads.owners_of(conn, [f"dataset:file:{RAW}", "job:ns:gold", "job:ns:none"])
    assert owners == {
        f"dataset:file:{RAW}": [{"name": "alice", "type": "user", "source": "api"},
                                {"name": "team:crm", "type": "team", "source": "facet"}],
        "job:ns:gold": [{"name": "team:gold", "type": "team", "source": "facet"}],
        "job:ns:none": [],
    }


def test_a_rebuild_carries_the_users_classification(store: Store, tmp_path: Path) -> None:
    record(store, events())
    writes.put_definition(store.engine, "PII", False, "reviewed")
    block = writes.add_block(store.engine, "job:ns:silver", RAW_EMAIL, SILVER_EMAIL, None, None)
    writes.remove_block(store.engine, block["id"])
    writes.add_block(store.engine, "job:ns:gold", None, None, "GDPR", "aggregated")
    writes.put_owner(store.engine, "job:ns:gold", "bob", "")
    with Store.open(f"sqlite:///{tmp_path / 'rebuilt.db'}") as target:
        copied = carry(store.engine, target.engine)
        users = ("tag_definitions", "propagation_blocks", "owners", "tag_history")
        assert {name: copied[name] for name in users} == {
            "tag_definitions": 1, "propagation_blocks": 2, "owners": 1, "tag_history": 1}
        before, after = dump(store), dump(target)
        for table in users:
            assert after[table] == before[table] != []


def test_definitions_and_removed_api_tags_as_of_their_time(store: Store) -> None:
    record(store, events())
    writes.put_definition(store.engine, "PII", False, None)
    with store.engine.connect() as conn:
        first = reads.definitions(conn)[0]["updated_at"]
    writes.put_definition(store.engine, "PII", True, "again")
    writes.delete_definition(store.engine, "PII")
    with store.engine.connect() as conn:
        assert reads.propagation_flags(conn, None) == {}
        assert reads.propagation_flags(conn, first) in ({"PII": False}, {"PII": True})
        assert reads.propagation_flags(conn, first - timedelta(seconds=1)) == {}
    from headwater.store import tags as tag_writes

    tag_writes.create_tag(store.engine, "finance", None)
    tag_writes.assign_tag(store.engine, "finance", f"dataset:file:{RAW}")
    with store.engine.connect() as conn:
        [assigned] = [r.created_at for r in reads.tag_assignments(conn, None)
                      if r.tag == "finance"]
    tag_writes.unassign_tag(store.engine, "finance", f"dataset:file:{RAW}")
    with store.engine.connect() as conn:
        assert "finance" not in {r.tag for r in reads.tag_assignments(conn, None)}
        assert "finance" in {r.tag for r in reads.tag_assignments(conn, assigned)}
        assert "finance" not in {r.tag for r in reads.tag_assignments(
            conn, assigned - timedelta(seconds=1))}


def test_a_rebuild_says_it_leaves_api_tags_behind(store: Store) -> None:
    from headwater.store import tags as tag_writes
    from headwater.store.raw_log import outside_log

    record(store, events())
    assert "tags set through the API" not in outside_log(store.engine)
    tag_writes.create_tag(store.engine, "finance", None)
    tag_writes.assign_tag(store.engine, "finance", f"dataset:file:{RAW}")
    assert outside_log(store.engine)["tags set through the API"] == 1
