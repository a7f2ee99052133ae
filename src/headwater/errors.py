"""The headwater exception tree.

Every error headwater raises on purpose derives from :class:`HeadwaterError`;
foreign exceptions (SQLAlchemy, httpx, py4j) are translated at the boundary
of the module that calls the foreign library.

::

    HeadwaterError
    ├── ConfigError            a setting is missing or malformed
    ├── EventError             an OpenLineage event is invalid (carries the field)
    ├── StoreError             the database is unavailable or at the wrong revision
    ├── WriteRefused           the database refused what was written (not retriable)
    ├── NotFoundError          a namespace/dataset/job/run id that does not exist
    ├── TransportError         an event could not be delivered
    └── ClientError            headwater.client could not do what was asked
                               (its subclasses: headwater.client.errors)
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "EventError",
    "HeadwaterError",
    "NotFoundError",
    "StoreError",
    "TransportError",
    "WriteRefused",
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
    """The database is unavailable (retry later) or not at the expected revision."""


class WriteRefused(HeadwaterError):
    """The database refused a write because of what it holds; sending it again fails again."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFoundError(HeadwaterError):
    """A namespace, dataset, job or run that does not exist."""


class TransportError(HeadwaterError):
    """An event could not be delivered to its backend."""
