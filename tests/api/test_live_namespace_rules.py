"""The real ``marquez-python`` client asks a ``headwater serve --namespace-rules`` by the
names producers sent, and gets the datasets the rules made of them; a server started
later with other rules says so in its log."""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
import pytest
from marquez_client import MarquezClient

from tests.cli.test_namespace_rules_cli import RULES
from tests.server.live import running_server, running_server_process
from tests.store.test_namespace_aliases import CONNECT, SPARK, TRINO

pytestmark = [pytest.mark.live, pytest.mark.slow]


def test_marquez_client_asks_by_raw_names(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    db = f"sqlite:///{tmp_path / 'live.db'}"
    with running_server("--db", db, "--namespace-rules", str(rules)) as base_url:
        posted = httpx.post(
            f"{base_url}/api/v1/lineage/batch", json=[CONNECT, SPARK, TRINO], timeout=30
        )
        assert posted.status_code < 300, posted.text
        client = MarquezClient(url=base_url)
        for namespace, name in [
            ("kafka://b2:9092", "orders"),
            ("kafka://b1:9092,b2:9092", "orders"),
            ("kafka://orders-cluster", "orders"),
        ]:
            topic = client.get_dataset(namespace, name)
            assert topic["id"] == {"namespace": "kafka://orders-cluster", "name": "orders"}
        table = client.get_dataset("hive://metastore", "silver.orders")
        assert table["id"] == {"namespace": "s3://lake", "name": "silver/orders"}
        assert [n["name"] for n in client.list_namespaces()["namespaces"]] == [
            "etl",
            "kafka://orders-cluster",
            "s3://lake",
        ]
    rules.write_text(RULES.replace("[paths]\ntrim_trailing_slash = true\n", ""))
    with tempfile.TemporaryFile() as log:
        with running_server_process("--db", db, "--namespace-rules", str(rules), output=log):
            pass
        log.seek(0)
        said = log.read().decode()
    assert "the namespace rules changed since this store was derived" in said
