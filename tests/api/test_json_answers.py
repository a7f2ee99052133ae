"""Answers written by ``headwater.server.json_answers`` (no response-model pass): the
same JSON the model pass writes, and valid against the route's response model."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient

from headwater.server.lineage_responses import LineageGraph
from tests.graph.retail import NS


def _record(client: TestClient, node: dict[str, Any]) -> dict[str, Any]:
    kind, namespace, name = node["id"].split(":", 2)
    path = "datasets" if kind == "dataset" else "jobs"
    answer = client.get(
        f"/api/v1/namespaces/{quote(namespace, safe='')}/{path}/{quote(name, safe='')}"
    )
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_v1_lineage_nodes_are_the_records_the_model_pass_writes(retail: TestClient) -> None:
    answer = retail.get(
        "/api/v1/lineage", params={"nodeId": f"dataset:{NS}:gold.revenue", "depth": 20}
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    LineageGraph.model_validate(body)
    nodes = body["graph"]
    assert {n["type"] for n in nodes} == {"DATASET", "JOB"} and len(nodes) > 4
    for node in nodes:
        # The dataset and job reads answer through their response models: a lineage
        # node's record is the same JSON, datetimes and nulls included.
        assert node["data"] == _record(retail, node), node["id"]
