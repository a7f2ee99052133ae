"""Transports: how OpenLineage events leave the process (http, kafka, file, console)."""

from __future__ import annotations

from headwater.transport.base import BatchFailure, DeliveryError, Transport, TransportBase
from headwater.transport.factory import create_transport, register_transport, transport_types

__all__ = [
    "BatchFailure",
    "DeliveryError",
    "Transport",
    "TransportBase",
    "create_transport",
    "register_transport",
    "transport_types",
]
