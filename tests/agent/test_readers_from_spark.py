"""Who read a dataset, from a real Spark session: the agent configured to capture
read-only actions reports a ``collect`` as a run reading the dataset, and
``/api/v2/datasets/{nodeId}/readers`` lists it as read-only with the Spark user."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import create_app
from headwater.store import Store
from tests.agent.conftest import Lineage


def test_a_collect_is_a_read_only_reader_with_its_user(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "customers"
    spark.createDataFrame([(1, "a@x")], ["id", "email"]).write.parquet(str(data))
    tracker = Lineage(spark, tmp_path / "events.jsonl", capture_read_only_actions=True)
    try:
        spark.read.parquet(str(data)).selectExpr("upper(email) AS e").collect()
        spark.read.parquet(str(data)).write.parquet(str(tmp_path / "copy"))
        events = tracker.events()
    finally:
        tracker.close()
    store = Store.open(f"sqlite:///{tmp_path / 'lineage.db'}", migrate=True)
    try:
        with TestClient(create_app(Settings(), store)) as client:
            assert client.post("/api/v1/lineage/batch", json=events).status_code < 300
            node = f"dataset:file:{data}"
            response = client.get(f"/api/v2/datasets/{quote(node, safe='')}/readers")
    finally:
        store.close()
    assert response.status_code == 200, response.text
    body = response.json()
    user = spark.sparkContext.sparkUser()
    # The copy (newest) wrote a dataset; the collect wrote nothing.
    assert [(r["readOnly"], r["sparkUser"]) for r in body["readers"]] == [
        (False, user),
        (True, user),
    ]
    assert body["users"] == [user]
    assert all(r["parentRunId"] for r in body["readers"])
