"""Node-id parsing, including namespaces that are URIs with ports."""

from __future__ import annotations

import pytest

from headwater.graph import NodeId, NodeType


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dataset:warehouse:gold.revenue", NodeId(NodeType.DATASET, "warehouse", "gold.revenue")),
        ("dataset:file:/tmp/out/x.parquet", NodeId(NodeType.DATASET, "file", "/tmp/out/x.parquet")),
        ("dataset:s3://bucket:data/orders", NodeId(NodeType.DATASET, "s3://bucket", "data/orders")),
        (
            "dataset:postgres://db.local:5432:shop.public.orders",
            NodeId(NodeType.DATASET, "postgres://db.local:5432", "shop.public.orders"),
        ),
        (
            "dataset:kafka://broker:9092:topic1",
            NodeId(NodeType.DATASET, "kafka://broker:9092", "topic1"),
        ),
        ("job:spark:etl.clean", NodeId(NodeType.JOB, "spark", "etl.clean")),
        (
            "datasetField:hdfs://nn:8020:/warehouse/t:col_a",
            NodeId(NodeType.DATASET_FIELD, "hdfs://nn:8020", "/warehouse/t", "col_a"),
        ),
        (
            "run:0176a8c2-fe01-7439-87e6-56a1a1b4029f",
            NodeId(NodeType.RUN, name="0176a8c2-fe01-7439-87e6-56a1a1b4029f"),
        ),
    ],
)
def test_parse_and_format_round_trip(text: str, expected: NodeId) -> None:
    parsed = NodeId.parse(text)
    assert parsed == expected
    assert str(parsed) == text


def test_version_suffix_is_split_off() -> None:
    parsed = NodeId.parse("dataset:ns:orders#b1d626a2-6d3a-475e-9ecf-943176d4a8c6")
    assert parsed.name == "orders"
    assert parsed.version == "b1d626a2-6d3a-475e-9ecf-943176d4a8c6"


@pytest.mark.parametrize(
    "text",
    ["", "orders", "table:ns:orders", "dataset:ns", "dataset::x", "datasetField:ns:t", "run:"],
)
def test_malformed_ids_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        NodeId.parse(text)
