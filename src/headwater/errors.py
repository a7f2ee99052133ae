"""The headwater exception tree.

Every error headwater raises on purpose derives from :class:`HeadwaterError`;
foreign exceptions (SQLAlchemy, httpx, py4j) are translated at the boundary
of the module that calls the foreign library.

::

    HeadwaterError
    ├── ConfigError            a setting is missing or malformed
    ├── EventError             an OpenLineage event is invalid (carries the field)
    ├── StoreError             the database failed or is at the wrong revision
    ├── NotFoundError          a namespace/dataset/job/run id that does not exist
    └── TransportError         an event could not be delivered
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "EventError",
    "HeadwaterError",
    "NotFoundError",
    "StoreError",
    "TransportError",
]


class HeadwaterError(Exception):
    """Base of every error headwater raises on purpose."""


class ConfigError(HeadwaterError):
    """A setting is missing or malformed."""


class EventError(HeadwaterError):
    """An OpenLineage event is invalid; ``field`` names the offending location."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class StoreError(HeadwaterError):
    """The database failed or is not at the expected revision."""


class NotFoundError(HeadwaterError):
    """A namespace, dataset, job or run that does not exist."""


class TransportError(HeadwaterError):
    """An event could not be delivered to its backend."""
