"""``proxy_scope`` frees the py4j proxies a block made, without the cyclic collector,
and leaves alone the ones somebody still holds (real SparkSession, real py4j)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from headwater.agent.py4j.proxies import proxy_scope

pytestmark = pytest.mark.spark


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    """Only reference counting frees anything while the test runs."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _used_proxy(spark: Any) -> Any:
    """A fresh JVM object proxy with a method called on it (its cache filled)."""
    proxy = spark._jvm.java.lang.StringBuilder("x")
    assert proxy.length() == 1
    return proxy


def test_without_a_scope_a_used_proxy_waits_for_the_collector(spark: Any, no_cyclic_gc: None) -> None:
    ref = weakref.ref(_used_proxy(spark))
    assert ref() is not None  # kept by its own method cache's cycle
    gc.collect()
    assert ref() is None


def test_a_scope_frees_what_it_made_at_once(spark: Any, no_cyclic_gc: None) -> None:
    with proxy_scope():
        ref = weakref.ref(_used_proxy(spark))
        plan = spark.range(3)._jdf.queryExecution().optimizedPlan()
        plan_ref = weakref.ref(plan)
        assert "Range" in str(plan.getClass().getName())
        del plan
    assert ref() is None
    assert plan_ref() is None


def test_a_proxy_still_held_is_left_usable(spark: Any, no_cyclic_gc: None) -> None:
    with proxy_scope():
        kept = _used_proxy(spark)
    assert kept._methods, "a held proxy keeps its method cache"
    kept.setLength(0)
    assert kept.length() == 0


def test_handed_back_proxies_are_freed_when_the_block_drops_them(
    spark: Any, no_cyclic_gc: None
) -> None:
    holder = {"proxy": _used_proxy(spark)}
    ref = weakref.ref(holder["proxy"])
    with proxy_scope(holder["proxy"]):
        assert holder["proxy"].length() == 1
        holder["proxy"] = None
    assert ref() is None


def test_scopes_nest_and_other_threads_are_not_recorded(spark: Any, no_cyclic_gc: None) -> None:
    import threading

    made_elsewhere: list[Any] = []

    def other_thread() -> None:
        made_elsewhere.append(weakref.ref(_used_proxy(spark)))

    with proxy_scope():
        with proxy_scope():
            inner = weakref.ref(_used_proxy(spark))
        assert inner() is None
        outer = weakref.ref(_used_proxy(spark))
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert outer() is None
    # Made on a thread without a scope: left to the collector, as before.
    assert made_elsewhere[0]() is not None
    gc.collect()
    assert made_elsewhere[0]() is None
