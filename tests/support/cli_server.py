"""Point the CLI's ``--url`` mode at an in-process app instead of a socket."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.client import Client

__all__ = ["serve_cli_from"]


def serve_cli_from(monkeypatch: pytest.MonkeyPatch, app_client: TestClient, url: str) -> None:
    """Make the CLI's query client send to ``app_client`` whenever ``--url`` is ``url``."""

    def client(base_url: str, **options: Any) -> Client:
        assert base_url == url, f"the CLI asked {base_url}, not {url}"
        return Client("http://testserver", token=options.get("token"), http=app_client)

    monkeypatch.setattr("headwater.cli.querying.Client", client)
