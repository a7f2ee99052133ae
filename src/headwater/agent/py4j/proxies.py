"""Free the py4j proxies a capture makes as soon as nothing holds them.

py4j's ``JavaObject`` caches each method asked of it (``_methods``), and each
cached ``JavaMember`` points back at its object: a proxy used for a call sits in
a reference cycle, which only Python's cyclic collector frees. A capture
allocates enough Python objects that its proxies reach the collector's oldest
generation while still in use, so they are freed only at a full collection,
seconds later. Until then py4j does not tell the JVM to drop them, and the JVM
keeps each action's ``QueryExecution`` and plans alive long enough to promote
them to its old generation: with the agent attached, the driver promoted 63 MiB
per benchmark run instead of 26 and ran 7 concurrent marking cycles instead of
0.5 (G1 logs, ``benchmarks/agent_overhead.py``'s workload).

:func:`proxy_scope` records the proxies py4j makes on the current thread while it
is open. On exit, each one that nothing outside its own method cache refers to
has that cache cleared: the cycle is gone and reference counting frees it at
once. A proxy someone still holds (a pending action handed to the worker, a
cache) is left alone, so no other thread can be using a proxy whose cache is
cleared under it.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

__all__ = ["proxy_scope"]

logger = logging.getLogger(__name__)

_local = threading.local()
_install_lock = threading.Lock()
_installed = False


def _install() -> bool:
    """Wrap py4j's converter for object references (once per process); False if absent."""
    global _installed
    if _installed:  # every scope asks: no lock once done
        return True
    with _install_lock:
        if _installed:
            return True
        try:
            from py4j import protocol

            original = protocol.OUTPUT_CONVERTER[protocol.REFERENCE_TYPE]
        except Exception:  # another py4j: the cyclic collector frees the proxies
            logger.debug("py4j reference converter not found", exc_info=True)
            return False

        def convert(target_id: str, gateway_client: Any) -> Any:
            proxy = original(target_id, gateway_client)
            made = getattr(_local, "made", None)
            if made is not None:  # only threads inside a scope pay the append
                made.append(proxy)
            return proxy

        protocol.OUTPUT_CONVERTER[protocol.REFERENCE_TYPE] = convert
        _installed = True
        return True


def _release(proxy: Any) -> None:
    """Clear ``proxy``'s method cache if nothing but that cache holds it."""
    methods = getattr(proxy, "_methods", None)
    if type(methods) is not dict:
        return
    # References: getrefcount's argument, this parameter and the caller's local,
    # plus one per cached JavaMember (its ``container``). Any more means someone
    # else holds the proxy and may be using it.
    if sys.getrefcount(proxy) - 3 <= len(methods):
        methods.clear()


class proxy_scope:  # noqa: N801 -- used as a context manager, like contextlib's
    """Release the py4j proxies made on this thread inside the block, and
    ``handed_back`` (proxies made elsewhere whose last user is this block: drop
    your own references to them inside the block)."""

    def __init__(self, *handed_back: Any) -> None:
        self._handed_back = list(handed_back)
        self._outer: list[Any] | None = None
        self._active = False

    def __enter__(self) -> proxy_scope:
        self._active = _install()
        if self._active:
            self._outer = getattr(_local, "made", None)
            _local.made = []
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if not self._active:
            self._handed_back.clear()
            return
        made, _local.made = _local.made, self._outer
        candidates = made + self._handed_back
        made.clear()
        self._handed_back.clear()
        while candidates:
            proxy = candidates.pop()
            try:
                _release(proxy)
            except Exception:  # never let freeing memory break a capture
                logger.debug("releasing a py4j proxy failed", exc_info=True)
            del proxy
