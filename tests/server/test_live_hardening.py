"""A real ``headwater serve`` on 127.0.0.1 under slow clients, too many connections and a
foreign Host header.

The attacking sockets connect from other loopback addresses (127.0.0.2 and up: all of
127.0.0.0/8 is the loopback interface on Linux), so the server sees them as other
clients than the health checks sent from 127.0.0.1, as it would see an attacker.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import statistics
import time
from pathlib import Path

import httpx
import pytest

from tests.server.live import running_server, running_server_process

pytestmark = pytest.mark.live

STALLED = 1_000
SOURCES = [f"127.0.0.{n}" for n in range(2, 12)]  # 100 connections from each
TIMEOUT = 3.0
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "server"


def _connect(port: int, source: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    return sock


def _open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _health_seconds(url: str) -> float:
    started = time.monotonic()
    answer = httpx.get(f"{url}/api/v1/health", timeout=10.0)
    assert answer.status_code == 200, answer.text
    return time.monotonic() - started


def _wait_closed(socks: dict[socket.socket, float], limit: float
                 ) -> tuple[dict[socket.socket, bytes], dict[socket.socket, float]]:
    """Read every socket until the server closes it: what each got and how long it was held
    after its last send; fails past ``limit``."""
    got: dict[socket.socket, bytes] = {s: b"" for s in socks}
    selector = selectors.DefaultSelector()
    for sock in socks:
        selector.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    closed_at: dict[socket.socket, float] = {}
    while len(closed_at) < len(socks) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.2):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            if data:
                got[sock] += data
            else:
                closed_at[sock] = time.monotonic()
                selector.unregister(sock)
    selector.close()
    assert len(closed_at) == len(socks), f"{len(socks) - len(closed_at)} still open"
    late = {s: closed_at[s] - socks[s] for s in socks}
    assert max(late.values()) <= limit, max(late.values())
    return got, late


def test_stalled_connections_neither_slow_health_nor_outlive_the_deadlines(
    tmp_path: Path,
) -> None:
    output = (tmp_path / "server.log").open("w+b")
    with running_server_process(
        "--data-dir", str(tmp_path / "hw"), "--header-timeout", str(TIMEOUT),
        "--body-timeout", str(TIMEOUT), output=output,
    ) as (url, process):
        port = int(url.rsplit(":", 1)[1])
        for _ in range(3):
            _health_seconds(url)
        before = _open_descriptors(process.pid)
        socks: dict[socket.socket, float] = {}
        kinds: dict[socket.socket, str] = {}
        for n in range(STALLED):
            sock = _connect(port, SOURCES[n % len(SOURCES)])
            kind = ("idle", "headers", "body")[n % 3]
            if kind == "headers":  # half a request line and one header, then nothing
                sock.send(b"POST /api/v1/lineage HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            elif kind == "body":  # whole headers, 10 of the 100,000 bytes declared
                sock.send(b"POST /api/v1/lineage HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                          b'{"eventTy')
            socks[sock] = time.monotonic()
            kinds[sock] = kind
        time.sleep(0.5)
        held = _open_descriptors(process.pid)
        assert held >= before + STALLED * 0.95, (before, held)  # the server holds them all
        latencies = [_health_seconds(url) for _ in range(10)]
        assert max(latencies) < 1.0, latencies
        got, got_late = _wait_closed(socks, TIMEOUT + 2.0)
        for sock, data in got.items():
            assert data.startswith(b"HTTP/1.1 408 "), (kinds[sock], data[:200])
            sock.close()
        time.sleep(0.3)
        after = _open_descriptors(process.pid)
        assert after <= before + 5, (before, held, after)
        assert _health_seconds(url) < 1.0
        # The request tasks waiting for a body heard the client was gone: no tracebacks.
        output.seek(0)
        log = output.read().decode(errors="replace")
        assert "Traceback" not in log and "unhandled error" not in log, log[-3000:]
        # The figures docs/server.md quotes, for a person to read after a run.
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "stalled_connections.json").write_text(json.dumps({
            "stalled": STALLED, "timeout_s": TIMEOUT,
            "health_ms_median": round(statistics.median(latencies) * 1000, 1),
            "health_ms_max": round(max(latencies) * 1000, 1),
            "descriptors_before_held_after": [before, held, after],
            "slowest_close_after_last_send_s": round(max(got_late.values()), 2),
        }, indent=2))


def test_one_client_address_holds_at_most_its_cap(tmp_path: Path) -> None:
    with running_server("--data-dir", str(tmp_path / "hw"), "--max-client-connections", "20",
                        "--header-timeout", "5") as url:
        port = int(url.rsplit(":", 1)[1])
        socks = {_connect(port, "127.0.0.2"): time.monotonic() for _ in range(30)}
        time.sleep(0.5)
        assert _health_seconds(url) < 1.0  # another address is not capped
        refused = _readable(list(socks))
        assert len(refused) == 10
        got, _ = _wait_closed({s: socks[s] for s in refused}, 1.0)
        for data in got.values():
            assert data.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in data
            assert b"--max-client-connections" in data
        for sock in socks:
            sock.close()
        # Closed connections count no more: the address may connect again.
        time.sleep(0.3)
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as client:
            assert client.get(f"{url}/api/v1/health").status_code == 200


def _readable(socks: list[socket.socket]) -> list[socket.socket]:
    """The sockets with something to read (an answer or the close) right now."""
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        return [key.fileobj for key, _ in selector.select(timeout=0)]  # type: ignore[misc]


def test_a_slow_but_steady_upload_within_the_deadline_is_stored(tmp_path: Path) -> None:
    from tests.server.events import run_event

    body = httpx.Request("POST", "http://x", json=run_event()).content
    with running_server("--data-dir", str(tmp_path / "hw"), "--body-timeout", "3") as url:
        port = int(url.rsplit(":", 1)[1])
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"POST /api/v1/lineage HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode())
        for piece in (body[: len(body) // 2], body[len(body) // 2:]):
            time.sleep(1.0)
            sock.sendall(piece)
        sock.settimeout(5)
        answer = sock.recv(4096)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 200 "), answer


@pytest.mark.parametrize(("args", "host", "status"), [
    ((), "evil.example", 400),                         # a DNS-rebinding page's name
    ((), "evil.example:{port}", 400),
    ((), "localhost:{port}", 200),
    ((), "127.0.0.1:{port}", 200),
    ((), "[::1]:{port}", 200),
    (("--allowed-host", "127.0.0.1", "--allowed-host", ".example.com"), "lineage.example.com", 200),
    (("--allowed-host", "127.0.0.1", "--allowed-host", ".example.com"), "example.com:80", 200),
    (("--allowed-host", "127.0.0.1", "--allowed-host", ".example.com"), "localhost", 400),
    (("--allowed-host", "*"), "anything.example", 200),
])
def test_the_host_header_must_name_this_server(tmp_path: Path, args: tuple[str, ...],
                                                 host: str, status: int) -> None:
    with running_server("--data-dir", str(tmp_path / "hw"), *args) as url:
        port = url.rsplit(":", 1)[1]
        for path in ("/api/v1/health", "/api/v1/namespaces", "/"):
            answer = httpx.get(f"{url}{path}", headers={"Host": host.format(port=port)})
            assert answer.status_code == (status if status == 400 else answer.status_code)
            if status == 400:
                assert answer.json()["field"] == "Host"
                assert "--allowed-host" in answer.json()["error"]
                assert answer.headers["x-frame-options"] == "DENY"
            else:
                assert answer.status_code == 200, (path, answer.text)
