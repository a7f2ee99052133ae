"""Writes into v2 tables leave Spark's listener thread at once: the state of the table
they wrote is pinned there in a few py4j calls, and the rest is captured later, on
the capture thread, from what was pinned — whatever the job did to the table since.

The capture thread is held back here until the job has committed, altered and
dropped the tables again, so every capture runs against a table that has moved
on; each statement still waits for its own listener callback, as the pin is what
the callback does. A drop needs nothing pinned: it leaves the listener thread
at once too."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent.conftest import ICEBERG_WAREHOUSE
from tests.support.spark_packages import needs_connectors

pytestmark = [pytest.mark.spark, needs_connectors("iceberg")]

NAMESPACE = "ice.pin"
TABLES = ("t", "c")


class HeldCapture:
    """Holds the agent's capture thread at its next action until :meth:`release`, and
    counts the py4j calls each listener callback makes on Spark's listener thread."""

    def __init__(self, spark: Any, agent: Any) -> None:
        self._listener = agent._listener
        self._client = spark.sparkContext._gateway._gateway_client
        self._gate = threading.Event()
        self._on_listener = threading.local()
        #: (optimized plan class, py4j calls) of each listener callback, in order.
        self.callbacks: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        capture_pending = self._listener.capture_pending
        on_action_scoped = self._listener._on_action_scoped
        send_command = self._client.send_command

        def held_capture(pending: Any) -> Any:
            if getattr(self._on_listener, "calls", None) is None:  # not DDL captured at once
                self._gate.wait(120)
            return capture_pending(pending)

        def counted_callback(func_name: str, qe: Any, *rest: Any) -> None:
            self._on_listener.calls = 0
            try:
                on_action_scoped(func_name, qe, *rest)
            finally:
                calls, self._on_listener.calls = self._on_listener.calls, None
                root = str(qe.optimizedPlan().getClass().getSimpleName())  # not counted
                with self._lock:
                    self.callbacks.append((root, calls))

        def counted_send(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._on_listener, "calls", None) is not None:
                self._on_listener.calls += 1
            return send_command(*args, **kwargs)

        self._listener.capture_pending = held_capture
        self._listener._on_action_scoped = counted_callback
        self._client.send_command = counted_send

    def run(self, spark: Any, statement: str, root: str) -> int:
        """Run ``statement``, wait until Spark's listener thread has reported its
        action (optimized plan class ``root``) and answer the py4j calls it made."""
        with self._lock:
            before = len(self.callbacks)
        spark.sql(statement)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with self._lock:
                found = [calls for cls, calls in self.callbacks[before:] if cls == root]
            if found:
                return found[0]
            time.sleep(0.01)
        raise AssertionError(f"Spark never reported {statement!r} as {root}: {self.callbacks[before:]}")

    def release(self) -> None:
        self._gate.set()

    def hold(self) -> None:
        """Hold the capture thread again, from its next action on."""
        self._gate.clear()

    def close(self) -> None:
        self._gate.set()
        for name in ("capture_pending", "_on_action_scoped"):
            delattr(self._listener, name)
        del self._client.send_command


@pytest.fixture
def ice(spark: Any) -> Iterator[Any]:
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {NAMESPACE}")
    for table in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {NAMESPACE}.{table}")
    # These drops (and the last test's) reach listeners through Spark's asynchronous
    # bus: delivered before the test's agent attaches, they are none of its actions.
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    yield spark
    for table in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS {NAMESPACE}.{table}")


@pytest.fixture
def held(ice: Any, lineage: Any) -> Iterator[HeldCapture]:
    holder = HeldCapture(ice, lineage.agent)
    yield holder
    holder.close()


def _snapshots(spark: Any, table: str) -> list[str]:
    rows = spark.sql(f"SELECT snapshot_id FROM {NAMESPACE}.{table}.snapshots ORDER BY committed_at").collect()
    return [str(row[0]) for row in rows]


def _completes(events: list[dict[str, Any]], job_part: str) -> list[dict[str, Any]]:
    return [e for e in events if e["eventType"] == "COMPLETE" and job_part in e["job"]["name"]]


def _version(dataset: dict[str, Any]) -> str | None:
    facet = dataset["facets"].get("version")
    return facet["datasetVersion"] if facet else None


def _columns(dataset: dict[str, Any]) -> list[str]:
    return [f["name"] for f in dataset["facets"]["schema"]["fields"]]


def test_each_write_reports_its_own_snapshot_after_the_table_moved_on(ice, lineage, held):
    table = f"{NAMESPACE}.t"
    held.run(ice, f"CREATE TABLE {table} (id long, v string) USING iceberg", "CreateTable")
    held.run(ice, f"INSERT INTO {table} VALUES (1, 'a')", "AppendData")
    held.run(ice, f"INSERT INTO {table} VALUES (2, 'b')", "AppendData")
    merge = f"MERGE INTO {table} t USING (SELECT 1 AS id, 'z' AS v) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.v = s.v"
    held.run(ice, merge, "ReplaceData")
    snapshots = _snapshots(ice, "t")
    assert len(snapshots) == 3
    held.run(ice, f"ALTER TABLE {table} ADD COLUMN extra int", "AddColumns")
    held.run(ice, f"INSERT INTO {table} VALUES (3, 'c', 7)", "AppendData")
    held.run(ice, f"DROP TABLE {table}", "DropTable")
    held.release()
    events = lineage.action_events()

    appends = _completes(events, ".append_data.ice_pin_t")
    assert [_version(e["outputs"][0]) for e in appends[:2]] == snapshots[:2]
    # The later INSERT wrote the altered table: its own schema, its own snapshot.
    assert _columns(appends[2]["outputs"][0]) == ["id", "v", "extra"]
    assert _version(appends[2]["outputs"][0]) not in snapshots
    (merge,) = [e for e in events if e["eventType"] == "COMPLETE" and "replace_data" in e["job"]["name"]]
    (written,) = merge["outputs"]
    assert _version(written) == snapshots[2]
    (target,) = [d for d in merge["inputs"] if d["name"] == written["name"]]
    assert _version(target) == snapshots[1]  # the MERGE read the snapshot before its own
    # A table dropped before its writes were captured is still named at its location.
    assert written["name"] == f"{ICEBERG_WAREHOUSE}/pin/t"
    (create,) = _completes(events, ".create_table.pin_t")
    assert _columns(create["outputs"][0]) == ["id", "v"]
    assert _version(create["outputs"][0]) is None


def test_a_create_as_select_reports_the_table_it_created_after_it_changed(ice, lineage, held):
    held.run(ice, f"CREATE TABLE {NAMESPACE}.c USING iceberg AS SELECT 1L AS id, 'a' AS v", "CreateTableAsSelect")
    created = _snapshots(ice, "c")
    held.run(ice, f"ALTER TABLE {NAMESPACE}.c DROP COLUMN v", "DropColumns")
    held.run(ice, f"INSERT INTO {NAMESPACE}.c VALUES (2)", "AppendData")
    held.release()
    events = lineage.action_events()
    (ctas,) = _completes(events, ".atomic_create_table_as_select.pin_c")
    output = ctas["outputs"][0]
    assert output["name"] == f"{ICEBERG_WAREHOUSE}/pin/c"
    assert _columns(output) == ["id", "v"]
    assert _version(output) == created[-1]


def test_an_alter_reports_the_table_it_left_after_the_job_changed_and_dropped_it(
    ice, lineage, held
):
    table = f"{NAMESPACE}.t"
    create = f"CREATE TABLE {table} (id long, v string, w string) USING iceberg"
    held.run(ice, create, "CreateTable")
    held.run(ice, f"INSERT INTO {table} VALUES (1, 'a', 'b')", "AppendData")
    (snapshot,) = _snapshots(ice, "t")
    held.run(ice, f"ALTER TABLE {table} DROP COLUMN v", "DropColumns")
    orc = f"ALTER TABLE {table} SET TBLPROPERTIES ('write.format.default'='orc')"
    held.run(ice, orc, "SetTableProperties")
    held.run(ice, f"ALTER TABLE {table} ADD COLUMNS (x int)", "AddColumns")
    held.run(ice, f"INSERT INTO {table} VALUES (2, 'c', 3)", "AppendData")
    held.run(ice, f"DROP TABLE {table}", "DropTable")
    held.release()
    events = lineage.action_events()
    alters = [d for e in _completes(events, ".alter_table.pin_t") for d in e["outputs"]]
    # Each ALTER reports the schema and file format it left, and the snapshot then
    # current (an ALTER commits none), not the table after the later INSERT and DROP.
    assert [(_columns(d), d["facets"]["storage"]["fileFormat"]) for d in alters] == [
        (["id", "w"], "parquet"),
        (["id", "w"], "orc"),
        (["id", "w", "x"], "orc"),
    ]
    assert [_version(d) for d in alters] == [snapshot] * 3
    for dataset in alters:
        assert dataset["name"] == f"{ICEBERG_WAREHOUSE}/pin/t"
        assert dataset["facets"]["storage"]["storageLayer"] == "iceberg"
        catalog = dataset["facets"]["catalog"]
        assert (catalog["name"], catalog["type"], catalog["warehouseUri"]) == (
            "ice",
            "hadoop",
            ICEBERG_WAREHOUSE,
        )
        assert dataset["facets"]["symlinks"]["identifiers"] == [
            {"namespace": f"file:{ICEBERG_WAREHOUSE}", "name": "pin.t", "type": "TABLE"}
        ]


@needs_connectors("delta")
def test_a_delta_create_and_alter_report_the_version_and_schema_they_left(ice, lineage, held):
    ice.sql("DROP TABLE IF EXISTS pin_delta")
    try:
        held.run(ice, "CREATE TABLE pin_delta (id BIGINT, v STRING) USING delta", "CreateTable")
        held.run(ice, "INSERT INTO pin_delta VALUES (1, 'a')", "AppendData")
        held.run(ice, "ALTER TABLE pin_delta SET TBLPROPERTIES ('note'='x')", "SetTableProperties")
        held.run(ice, "ALTER TABLE pin_delta ADD COLUMNS (x INT)", "AddColumns")
        held.run(ice, "INSERT INTO pin_delta VALUES (2, 'b', 3)", "AppendData")
        held.release()
        events = lineage.action_events()
    finally:
        ice.sql("DROP TABLE IF EXISTS pin_delta")
    # A Delta table loaded after its command reads its snapshot only when first asked:
    # the state each command left is the snapshot held when Spark reported it.
    (create,) = _completes(events, ".create_table.default_pin_delta")
    assert (_columns(create["outputs"][0]), _version(create["outputs"][0])) == (["id", "v"], "0")
    alters = [e["outputs"][0] for e in _completes(events, ".alter_table.default_pin_delta")]
    assert [(_columns(d), _version(d)) for d in alters] == [
        (["id", "v"], "2"),
        (["id", "v", "x"], "3"),
    ]


def test_the_listener_thread_makes_a_few_py4j_calls_per_v2_write(ice, lineage, held):
    table = f"{NAMESPACE}.t"
    held.run(ice, f"CREATE TABLE {table} (id long, v string) USING iceberg", "CreateTable")
    held.run(ice, f"INSERT INTO {table} VALUES (1, 'a')", "AppendData")
    held.release()
    lineage.events()  # the capture thread has built the chains the listener thread uses
    insert = held.run(ice, f"INSERT INTO {table} VALUES (2, 'b')", "AppendData")
    insert_select = held.run(ice, f"INSERT INTO {table} SELECT id + 10, v FROM {table}", "AppendData")
    create = held.run(ice, f"CREATE TABLE {NAMESPACE}.c (id long) USING iceberg", "CreateTable")
    ctas = held.run(ice, f"CREATE OR REPLACE TABLE {NAMESPACE}.c USING iceberg AS SELECT * FROM {table}",
                    "ReplaceTableAsSelect")
    # The optimized plan and its class (three calls), the written table and its
    # class (three), the format's pin (one); a create also loads its table (four).
    # An atomic RTAS pins the staged table its write (reported just before) held:
    # its identifier (two) instead of a catalog load.
    assert insert <= 7 and insert_select <= 7, held.callbacks
    assert create <= 11 and ctas <= 7, held.callbacks
    events = lineage.action_events()
    assert len(_completes(events, ".append_data.ice_pin_t")) == 3
    (replaced,) = _completes(events, ".atomic_replace_table_as_select.pin_c")
    assert _version(replaced["outputs"][0]) == _snapshots(ice, "c")[-1]


def test_a_drop_leaves_the_listener_thread_at_once_and_reports_the_dropped_table(ice, lineage, held, tmp_path):
    ice.sql("DROP TABLE IF EXISTS pin_dropped")
    ice.sql("CREATE TABLE pin_dropped (a int) USING parquet")
    held.run(ice, f"CREATE TABLE {NAMESPACE}.t (id long) USING iceberg", "CreateTable")
    held.release()
    lineage.events()  # the capture thread has built the chains the listener thread uses
    held.hold()
    session_drop = held.run(ice, "DROP TABLE pin_dropped", "DropTable")
    iceberg_drop = held.run(ice, f"DROP TABLE {NAMESPACE}.t", "DropTable")
    # The same names again, with other columns, before the drops are captured.
    ice.sql("CREATE TABLE pin_dropped (b string, c string) USING parquet")
    held.release()
    assert session_drop <= 3 and iceberg_drop <= 3, held.callbacks
    drops = [e for e in lineage.action_events() if e["eventType"] == "COMPLETE" and ".drop_table." in e["job"]["name"]]
    by_name = {e["outputs"][0]["name"].rsplit("/", 1)[-1]: e["outputs"][0] for e in drops}
    assert set(by_name) == {"pin_dropped", "t"}
    for output in by_name.values():
        assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"
        assert not output["facets"].get("schema", {}).get("fields")
    assert by_name["t"]["name"] == f"{ICEBERG_WAREHOUSE}/pin/t"
    ice.sql("DROP TABLE IF EXISTS pin_dropped")
