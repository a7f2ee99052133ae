"""The HTTP transport against a real HTTP server on 127.0.0.1, and failure paths via MockTransport."""

from __future__ import annotations

import httpx
import pytest

from headwater.errors import ConfigError
from headwater.transport.base import DeliveryError
from headwater.transport.http import HttpConfig, HttpTransport
from tests.transport.lineage_server import lineage_server


def _event(i: int) -> dict[str, object]:
    return {"eventType": "COMPLETE", "run": {"runId": f"run-{i}"}, "n": i}


def test_single_post_goes_to_url_plus_default_endpoint() -> None:
    with lineage_server() as server:
        transport = HttpTransport(HttpConfig.from_dict({"url": server.url}))
        transport.emit(_event(1))
        transport.close(1)
    assert [r.path for r in server.requests] == ["/api/v1/lineage"]
    assert server.events == [_event(1)]
    assert server.requests[0].headers["Content-Type"] == "application/json"


def test_batch_endpoint_is_used_when_the_server_offers_it() -> None:
    with lineage_server(offers_batch=True) as server:
        transport = HttpTransport(HttpConfig.from_dict({"url": server.url}))
        failures = transport.emit_batch([_event(i) for i in range(5)])
        transport.emit_batch([_event(i) for i in range(5, 7)])
        transport.close(1)
    assert failures == []
    assert transport.batch_supported is True
    assert [r.path for r in server.requests] == ["/api/v1/lineage/batch"] * 2
    assert server.events == [_event(i) for i in range(7)]


def test_falls_back_to_single_posts_when_batch_is_404() -> None:
    with lineage_server(offers_batch=False) as server:
        transport = HttpTransport(HttpConfig.from_dict({"url": server.url}))
        transport.emit_batch([_event(i) for i in range(3)])
        transport.emit_batch([_event(i) for i in range(3, 5)])
        transport.close(1)
    assert transport.batch_supported is False
    # One probe to the batch endpoint (refused, recorded nowhere), then single posts only.
    assert [r.path for r in server.requests] == ["/api/v1/lineage"] * 5
    assert server.events == [_event(i) for i in range(5)]


def test_partial_batch_failure_reports_the_refused_events() -> None:
    events = [_event(0), {**_event(1), "reject": True}, _event(2)]
    with lineage_server() as server:
        transport = HttpTransport(HttpConfig.from_dict({"url": server.url}))
        failures = transport.emit_batch(events)
    assert [(f.index, f.retriable) for f in failures] == [(1, False)]
    assert failures[0].reason == "no eventTime"


def test_gzip_auth_headers_url_params_and_custom_endpoint() -> None:
    with lineage_server() as server:
        config = HttpConfig.from_dict({
            "url": server.url,
            "endpoint": "/custom/endpoint",
            "auth": {"type": "api_key", "apiKey": "s3cret"},
            "compression": "gzip",
            "headers": {"X-Team": "data"},
            "urlParams": {"tenant": "t1"},
            "timeoutInMillis": "2500",
        })
        assert config.timeout == 2.5
        HttpTransport(config).emit(_event(1))
    request = server.requests[0]
    assert request.path == "/custom/endpoint?tenant=t1"
    assert request.headers["Authorization"] == "Bearer s3cret"
    assert request.headers["Content-Encoding"] == "gzip"
    assert request.headers["X-Team"] == "data"
    assert request.body == _event(1)


@pytest.mark.parametrize(
    ("url", "endpoint", "expected"),
    [
        ("http://h:5000", None, "http://h:5000/api/v1/lineage"),
        ("http://h:5000/", None, "http://h:5000/api/v1/lineage"),
        ("http://h:5000/api/v1/lineage", None, "http://h:5000/api/v1/lineage"),
        ("http://h:5000/base", "api/v1/lineage", "http://h:5000/base/api/v1/lineage"),
        ("http://h:5000/base", "/api/v1/lineage", "http://h:5000/api/v1/lineage"),
    ],
)
def test_lineage_url_joins_url_and_endpoint(url: str, endpoint: str | None, expected: str) -> None:
    config = HttpConfig.from_dict({"url": url, "endpoint": endpoint})
    assert config.lineage_url == expected
    assert config.batch_url == expected + "/batch"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({}, "transport.url"),
        ({"url": "ftp://x"}, "transport.url"),
        ({"url": "http://x", "timeoutInMillis": "soon"}, "transport.timeoutInMillis"),
        ({"url": "http://x", "compression": "zstd"}, "transport.compression"),
    ],
)
def test_bad_config_names_the_key(config: dict[str, str], field: str) -> None:
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        HttpConfig.from_dict(config)


def _mock(handler: httpx.MockTransport) -> HttpTransport:
    return HttpTransport(HttpConfig.from_dict({"url": "http://backend.invalid"}),
                         client=httpx.Client(transport=handler))


@pytest.mark.parametrize(("status", "retriable"), [(500, True), (503, True), (429, True),
                                                    (400, False), (401, False), (422, False)])
def test_status_codes_map_to_retriable_or_not(status: int, retriable: bool) -> None:
    transport = _mock(httpx.MockTransport(lambda request: httpx.Response(status, text="nope")))
    with pytest.raises(DeliveryError) as caught:
        transport.emit(_event(1))
    assert caught.value.retriable is retriable
    assert str(status) in str(caught.value)


def test_unreachable_server_is_a_retriable_failure() -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago and now refuses
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    transport = HttpTransport(HttpConfig.from_dict({"url": f"http://127.0.0.1:{port}"}))
    with pytest.raises(DeliveryError) as caught:
        transport.emit_batch([_event(1), _event(2)])
    assert caught.value.retriable is True
    transport.close(1)


def test_timeout_is_a_retriable_failure() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("took too long", request=request)

    with pytest.raises(DeliveryError) as caught:
        _mock(httpx.MockTransport(slow)).emit(_event(1))
    assert caught.value.retriable is True
