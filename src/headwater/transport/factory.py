"""Build a transport from its configuration mapping: a ``type`` -> class registry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from headwater.errors import ConfigError
from headwater.transport.base import Transport
from headwater.transport.console import ConsoleTransport
from headwater.transport.file import FileConfig, FileTransport
from headwater.transport.http import HttpConfig, HttpTransport
from headwater.transport.kafka import KafkaConfig, KafkaTransport

__all__ = ["create_transport", "register_transport", "transport_types"]

_REGISTRY: dict[str, Callable[[Mapping[str, Any]], Transport]] = {
    "console": ConsoleTransport,
    "file": lambda config: FileTransport(FileConfig.from_dict(config)),
    "http": lambda config: HttpTransport(HttpConfig.from_dict(config)),
    "kafka": lambda config: KafkaTransport(KafkaConfig.from_dict(config)),
}


def register_transport(kind: str, builder: Callable[[Mapping[str, Any]], Transport]) -> None:
    """Make ``transport.type=<kind>`` build ``builder(config)``."""
    _REGISTRY[kind] = builder


def transport_types() -> list[str]:
    """The known ``transport.type`` values, sorted."""
    return sorted(_REGISTRY)


def create_transport(config: Mapping[str, Any]) -> Transport:
    """Build the transport ``config["type"]`` names; ConfigError if unknown or malformed."""
    kind = str(config.get("type") or "console")
    builder = _REGISTRY.get(kind)
    if builder is None:
        raise ConfigError(f"transport.type {kind!r} is not one of {', '.join(transport_types())}")
    return builder(config)
