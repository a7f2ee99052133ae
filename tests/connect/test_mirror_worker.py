"""MirrorMaker 2's MirrorSourceConnector on the real Connect worker (Apache
Kafka's connect-mirror jar): a topic of the session broker mirrored, under the
default replication policy, to ``<alias>.<topic>`` on the same broker (source
and target cluster alike, so one broker serves both ends). The watcher names
the source topic as input and the mirrored one as output."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.connect.helpers import Collected, delete, put, running, unique, wait_state, watcher_for
from tests.support.kafka_topics import create_topic, produce

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_mirror_source_names_source_and_mirrored_topics(
    connect_worker, kafka_bootstrap, tmp_path: Path
):
    from confluent_kafka.admin import AdminClient

    topic = create_topic(kafka_bootstrap, 1, prefix="mm2-in")
    produce(kafka_bootstrap, topic, [(b"k", b"v")])
    name, alias = unique("mm2"), "east"
    put(
        connect_worker.url,
        name,
        {
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": alias,
            "target.cluster.alias": "west",
            "source.cluster.bootstrap.servers": kafka_bootstrap,
            "target.cluster.bootstrap.servers": kafka_bootstrap,
            "topics": topic,
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "sync.topic.acls.enabled": "false",
            "sync.topic.configs.enabled": "false",
            "refresh.topics.interval.seconds": "1",
            "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        },
    )
    try:
        wait_state(connect_worker.url, name, running)
        mirrored = f"{alias}.{topic}"
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        deadline = time.monotonic() + 60
        while mirrored not in admin.list_topics(timeout=10).topics:
            assert time.monotonic() < deadline, f"{mirrored} was never created"
            time.sleep(0.5)
        sent = Collected()
        watcher_for(connect_worker.url, kafka_bootstrap, tmp_path / "s.json", sent).poll()
        (start,) = sent.of(name)
        kafka = f"kafka://{kafka_bootstrap}"
        facet = start["run"]["facets"]["kafkaConnect"]
        assert facet["family"] == "mirrormaker2"
        assert [(d["namespace"], d["name"]) for d in start["inputs"]] == [(kafka, topic)]
        assert [(d["namespace"], d["name"]) for d in start["outputs"]] == [(kafka, mirrored)]
        assert [f["type"] for f in start["outputs"][0]["facets"]["schema"]["fields"]] == [
            "bytes",
            "bytes",
        ]
    finally:
        delete(connect_worker.url, name)
