"""Every API operation, as a function that builds a :class:`~headwater.client.call.Call`."""

from headwater.client.operations import headwater, marquez

__all__ = ["headwater", "marquez"]
