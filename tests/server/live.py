"""Start a real ``headwater serve`` process on 127.0.0.1 and a free port, for live tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import httpx

__all__ = ["free_port", "running_server", "running_server_process"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(*args: str, env: dict[str, str] | None = None,
                   startup_timeout: float = 60.0) -> Iterator[str]:
    """Run ``headwater serve ARGS --host 127.0.0.1 --port <free>``; yield its base URL.

    Stops it with SIGINT (a clean uvicorn shutdown) and fails if it does not exit.
    """
    with running_server_process(*args, env=env, startup_timeout=startup_timeout) as (url, _):
        yield url


@contextmanager
def running_server_process(
    *args: str, env: dict[str, str] | None = None, startup_timeout: float = 60.0,
    output: IO[bytes] | None = None, cli_args: tuple[str, ...] = (),
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """:func:`running_server`, yielding the process too; its output goes to ``output``.

    ``cli_args`` go before ``serve`` (``-vv``).
    """
    port = free_port()
    command = [sys.executable, "-m", "headwater", *cli_args, "serve", "--host", "127.0.0.1",
               "--port", str(port), *args]
    # The server's output goes to a file, not a pipe: nobody reads a pipe while
    # the server runs, and a full one would block the server mid-request.
    own_output = output is None
    if output is None:
        output = tempfile.TemporaryFile()
    process = subprocess.Popen(
        command,
        env={**os.environ, **(env or {})},
        stdout=output,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                output.seek(0)
                raise AssertionError(f"headwater serve exited early:\n{output.read().decode()}")
            try:
                if httpx.get(f"{base_url}/api/v1/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("headwater serve did not become healthy in time")
            time.sleep(0.1)
        yield base_url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if own_output:
            output.close()
