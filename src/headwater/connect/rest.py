"""A Kafka Connect cluster's REST API, read into plain snapshots.

Three calls per poll: ``GET /`` (the worker's version and its Kafka cluster's
id), ``GET /connectors?expand=status&expand=info`` (every connector's
configuration, type, state and tasks, with each failed task's trace, in one
answer), and ``GET /connectors/<name>/topics`` per connector (the topics it
has actually used, which Connect tracks while ``topic.tracking.enable`` is on).
The configurations come back as stored, secrets included: callers redact them
(:mod:`headwater.connect.redact`) before anything is emitted.

::

    HeadwaterError              (headwater.errors)
    └── ConnectUnavailable      the REST API did not answer, or answered with no JSON
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from headwater.errors import HeadwaterError

__all__ = ["ClusterInfo", "ConnectClient", "ConnectUnavailable", "ConnectorSnapshot", "TaskStatus"]


class ConnectUnavailable(HeadwaterError):
    """The Connect REST API could not be read this time; the next poll tries again."""


@dataclass(frozen=True)
class TaskStatus:
    id: int
    state: str
    worker_id: str | None = None
    trace: str | None = None


@dataclass(frozen=True)
class ConnectorSnapshot:
    """One connector as the REST API shows it at one poll (configuration unredacted)."""

    name: str
    type: str
    config: Mapping[str, str]
    state: str
    worker_id: str | None = None
    trace: str | None = None
    tasks: tuple[TaskStatus, ...] = ()
    active_topics: tuple[str, ...] = ()

    @property
    def connector_class(self) -> str:
        return str(self.config.get("connector.class", ""))


@dataclass(frozen=True)
class ClusterInfo:
    url: str
    version: str | None = None
    kafka_cluster_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def authority(self) -> str:
        """``host:port`` of the REST URL (the port spelled out)."""
        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"{(parts.hostname or 'localhost').lower()}:{port}"


class ConnectClient:
    """Reads one Connect cluster; ``client`` is injectable (``httpx.MockTransport`` in tests)."""

    def __init__(
        self, url: str, *, timeout: float = 10.0, client: httpx.Client | None = None
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise HeadwaterError(f"--connect-url must be http(s)://host:port, got {url!r}")
        self.url = url.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._client.close()

    def _get(self, path: str, params: Any = None) -> Any:
        try:
            answer = self._client.get(self.url + path, params=params)
        except httpx.HTTPError as exc:
            raise ConnectUnavailable(f"{self.url}{path}: {exc}") from exc
        if answer.status_code == 404:
            return None
        if answer.status_code >= 400:
            raise ConnectUnavailable(f"{self.url}{path}: HTTP {answer.status_code}")
        try:
            return answer.json()
        except ValueError as exc:
            raise ConnectUnavailable(f"{self.url}{path}: not JSON") from exc

    def cluster(self) -> ClusterInfo:
        body = self._get("/") or {}
        return ClusterInfo(self.url, body.get("version"), body.get("kafka_cluster_id"), body)

    def connectors(self) -> dict[str, ConnectorSnapshot]:
        """Every connector, by name."""
        body = self._get("/connectors", params=[("expand", "status"), ("expand", "info")])
        if not isinstance(body, dict):
            raise ConnectUnavailable(f"{self.url}/connectors: not a JSON object")
        found: dict[str, ConnectorSnapshot] = {}
        for name, entry in body.items():
            info = entry.get("info") or {}
            status = entry.get("status") or {}
            connector = status.get("connector") or {}
            if not info:
                continue  # created between the two halves of the answer: next poll
            tasks = tuple(
                TaskStatus(
                    int(t.get("id", 0)),
                    str(t.get("state", "UNASSIGNED")),
                    t.get("worker_id"),
                    t.get("trace"),
                )
                for t in status.get("tasks") or []
            )
            found[name] = ConnectorSnapshot(
                name=name,
                type=str(info.get("type") or status.get("type") or "unknown"),
                config={str(k): str(v) for k, v in (info.get("config") or {}).items()},
                state=str(connector.get("state", "UNASSIGNED")),
                worker_id=connector.get("worker_id"),
                trace=connector.get("trace"),
                tasks=tasks,
                active_topics=self._active_topics(name),
            )
        return found

    def _active_topics(self, name: str) -> tuple[str, ...]:
        try:
            body = self._get(f"/connectors/{quote(name, safe='')}/topics")
        except ConnectUnavailable:
            return ()  # topic tracking off (403) or the connector just went: nothing known
        topics = ((body or {}).get(name) or {}).get("topics") or []
        return tuple(sorted(str(t) for t in topics))
