"""Which database errors mean "unavailable, retry" and which mean "this write is refused"."""

from __future__ import annotations

import os

import pytest
import sqlalchemy as sa

from headwater.errors import StoreError, WriteRefused
from headwater.store import Store
from headwater.store.transactions import write_transaction

_INSERT_TAG = sa.text("INSERT INTO tags (name, created_at, updated_at) "
                      "VALUES (:n, '2024-01-01 00:00:00', '2024-01-01 00:00:00')")


def test_what_was_written_is_refused_not_retried(store: Store) -> None:
    with pytest.raises(WriteRefused):  # a unique key twice
        with write_transaction(store.engine) as conn:
            conn.execute(_INSERT_TAG, {"n": "dup"})
            conn.execute(_INSERT_TAG, {"n": "dup"})
    if store.dialect == "postgresql":
        with pytest.raises(WriteRefused):  # over the btree index row limit, incompressible
            with write_transaction(store.engine) as conn:
                conn.execute(_INSERT_TAG, {"n": os.urandom(4500).hex()})


def test_a_missing_schema_is_unavailable(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE quarantine")
    with pytest.raises(StoreError) as info:
        with write_transaction(store.engine) as conn:
            conn.exec_driver_sql("DELETE FROM quarantine")
    assert not isinstance(info.value, WriteRefused)
