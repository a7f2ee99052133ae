"""A small real OpenLineage HTTP receiver for transport and emitter tests.

It is a genuine HTTP server on 127.0.0.1 (``http.server`` in a thread), not a
mock of headwater: it stands for "some other OpenLineage backend" — with or
without the batch endpoint — and records what arrived.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class LineageServer:
    url: str
    offers_batch: bool
    requests: list[Received] = field(default_factory=list)
    #: statuses to answer with before behaving normally (e.g. [503, 503])
    fail_first: list[int] = field(default_factory=list)

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event received, in order, whether sent singly or in batches."""
        out: list[dict[str, Any]] = []
        for request in self.requests:
            if isinstance(request.body, list):
                out.extend(request.body)
            elif isinstance(request.body, dict):
                out.append(request.body)
        return out


@contextmanager
def lineage_server(*, offers_batch: bool = True) -> Iterator[LineageServer]:
    state = LineageServer(url="", offers_batch=offers_batch)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self.headers.get("Content-Encoding") == "gzip":
                raw = gzip.decompress(raw)
            path = self.path.split("?", 1)[0]
            with lock:
                if state.fail_first:
                    self._answer(state.fail_first.pop(0))
                    return
            if path == "/api/v1/lineage/batch" and not state.offers_batch:
                self._answer(404)
                return
            if path not in ("/api/v1/lineage", "/api/v1/lineage/batch", "/custom/endpoint"):
                self._answer(404)
                return
            body = json.loads(raw)
            if isinstance(body, dict) and body.get("reject"):
                self._answer(400, b'{"error": "no eventTime"}')
                return
            accepted = (
                [e for e in body if not (isinstance(e, dict) and e.get("reject"))]
                if isinstance(body, list)
                else body
            )
            with lock:
                state.requests.append(Received(self.path, dict(self.headers), accepted))
            if isinstance(body, list):
                failed = [
                    {"index": i, "reason": "no eventTime", "retriable": False}
                    for i, event in enumerate(body)
                    if isinstance(event, dict) and event.get("reject")
                ]
                if failed:
                    payload = json.dumps({
                        "status": "partial_success",
                        "summary": {"received": len(body), "successful": len(body) - len(failed),
                                    "failed": len(failed)},
                        "failed_events": failed,
                    }).encode()
                    self._answer(200, payload)
                    return
            self._answer(201 if not isinstance(body, list) else 200,
                         b"" if not isinstance(body, list) else b'{"status":"success","summary":'
                         + f'{{"received":{len(body)},"successful":{len(body)},"failed":0}}}}'.encode())

        def _answer(self, status: int, payload: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
