"""HTTP transport: POST events to an OpenLineage endpoint.

Speaks to any OpenLineage backend (``POST {url}/api/v1/lineage`` with one event)
and, when the server offers it, to the batch endpoint of the OpenLineage HTTP
spec (``POST .../lineage/batch`` with a JSON array). Whether batches work is
learnt from the first attempt: 404 or 405 there means "not offered" and the
transport falls back to single POSTs for the rest of its life.

The ``httpx.Client`` is injectable so tests can hand in a FastAPI ``TestClient``
(in-process server) or an ``httpx.MockTransport`` (to simulate failures).
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from headwater.errors import ConfigError
from headwater.transport.base import BatchFailure, DeliveryError, Event, TransportBase

__all__ = ["HttpConfig", "HttpTransport"]

logger = logging.getLogger(__name__)

_DEFAULT_ENDPOINT = "api/v1/lineage"
# Statuses worth retrying: the request may pass later without any change.
_RETRIABLE_STATUSES = frozenset({408, 425, 429})


@dataclass(frozen=True)
class HttpConfig:
    """Settings of the HTTP transport, spelled as the OpenLineage clients spell them."""

    url: str
    endpoint: str | None = None
    api_key: str | None = None
    timeout: float = 5.0
    compression: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    url_params: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> HttpConfig:
        """Build from a transport mapping (``url``, ``endpoint``, ``auth``, ``timeoutInMillis`` …)."""
        url = str(config.get("url") or "").strip()
        if not url or urlsplit(url).scheme not in ("http", "https"):
            raise ConfigError(f"transport.url must be an http(s) URL, got {url!r}")
        auth = config.get("auth")
        api_key = None
        if isinstance(auth, Mapping):
            api_key = auth.get("apiKey") or auth.get("api_key")
        api_key = api_key or config.get("apiKey") or config.get("api_key")
        timeout = 5.0
        try:
            if config.get("timeoutInMillis") not in (None, ""):
                timeout = float(config["timeoutInMillis"]) / 1000.0
            elif config.get("timeout") not in (None, ""):
                timeout = float(config["timeout"])
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"transport.timeoutInMillis is not a number: {exc}") from exc
        compression = config.get("compression")
        if compression not in (None, "", "gzip"):
            raise ConfigError(f"transport.compression must be gzip, got {compression!r}")
        headers = config.get("headers") or {}
        url_params = config.get("urlParams") or config.get("url_params") or {}
        if not isinstance(headers, Mapping) or not isinstance(url_params, Mapping):
            raise ConfigError("transport.headers and transport.urlParams must be key/value maps")
        return cls(
            url=url,
            endpoint=str(config["endpoint"]) if config.get("endpoint") else None,
            api_key=str(api_key) if api_key else None,
            timeout=timeout,
            compression=compression or None,
            headers={str(k): str(v) for k, v in headers.items()},
            url_params={str(k): str(v) for k, v in url_params.items()},
        )

    @property
    def lineage_url(self) -> str:
        """The single-event endpoint: ``url`` + ``endpoint`` (default ``api/v1/lineage``)."""
        parts = urlsplit(self.url)
        if self.endpoint is None:
            if parts.path not in ("", "/"):
                return self.url  # the URL already names the endpoint
            endpoint = _DEFAULT_ENDPOINT
        else:
            endpoint = self.endpoint
        if endpoint.startswith("/"):
            path = endpoint
        else:
            path = parts.path.rstrip("/") + "/" + endpoint
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))

    @property
    def batch_url(self) -> str:
        """The batch endpoint beside the lineage endpoint: ``…/lineage/batch``."""
        parts = urlsplit(self.lineage_url)
        path = parts.path.rstrip("/") + "/batch"
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


class HttpTransport(TransportBase):
    """POST events with httpx; batch when the server offers it."""

    def __init__(self, config: HttpConfig, client: httpx.Client | None = None) -> None:
        self.config = config
        # An injected client keeps its own timeout (a TestClient refuses per-request ones).
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=config.timeout)
        #: None until the first batch attempt tells us; then True or False for good.
        self.batch_supported: bool | None = None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self.config.headers}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        if self.config.compression == "gzip":
            headers["Content-Encoding"] = "gzip"
        return headers

    def _post(self, url: str, payload: Any) -> httpx.Response:
        body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        if self.config.compression == "gzip":
            body = gzip.compress(body)
        try:
            return self._client.post(
                url,
                content=body,
                headers=self._headers(),
                params=dict(self.config.url_params) or None,
            )
        except httpx.HTTPError as exc:
            raise DeliveryError(f"POST {url} failed: {exc!r}", retriable=True) from exc

    @staticmethod
    def _raise_for_status(response: httpx.Response) -> None:
        status = response.status_code
        if status < 300:
            return
        retriable = status >= 500 or status in _RETRIABLE_STATUSES
        detail = response.text[:300]
        raise DeliveryError(f"HTTP {status} from {response.request.url}: {detail}", retriable=retriable)

    def emit(self, event: Event) -> None:
        self._raise_for_status(self._post(self.config.lineage_url, event))

    def emit_batch(self, events: Sequence[Event]) -> list[BatchFailure]:
        if self.batch_supported is False or (len(events) == 1 and self.batch_supported is None):
            # One event needs no batch; and probing with it would cost a round trip.
            return super().emit_batch(events)
        response = self._post(self.config.batch_url, list(events))
        if self.batch_supported is None:
            if response.status_code in (404, 405):
                logger.info("%s offers no batch endpoint; sending events one by one",
                            self.config.batch_url)
                self.batch_supported = False
                return super().emit_batch(events)
            if response.status_code < 300:
                self.batch_supported = True
        self._raise_for_status(response)
        return self._batch_failures(response, len(events))

    @staticmethod
    def _batch_failures(response: httpx.Response, count: int) -> list[BatchFailure]:
        if response.status_code == 204 or not response.content:
            return []
        try:
            body = response.json()
        except ValueError:
            return []
        failed = body.get("failed_events") if isinstance(body, dict) else None
        failures: list[BatchFailure] = []
        for item in failed if isinstance(failed, list) else ():
            try:
                index = int(item["index"])
            except (KeyError, TypeError, ValueError):
                continue
            if 0 <= index < count:
                failures.append(
                    BatchFailure(index, str(item.get("reason", "")), bool(item.get("retriable")))
                )
        return failures

    def close(self, timeout: float) -> None:
        if self._owns_client:
            self._client.close()
