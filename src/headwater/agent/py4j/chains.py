"""Chains of JVM getters run in one py4j call: ``a.b().c().d()`` as one round trip.

Each py4j call costs a round trip and, when it returns an object, a proxy that
py4j later tells the JVM to drop (a second round trip, on its finalizer thread).
A capture asks a few fixed chains on every action — an insert's output path as
text, the executed write's metrics, the SQL text — so each is built once as a
single ``scala.Function1`` from method handles (``MethodHandles.filterReturnValue``
composes the getters, ``MethodHandleProxies`` makes the function): calling its
``apply`` runs the whole chain in the JVM and returns only the end value. No
code of headwater's is loaded into the JVM.

A :class:`JvmChain` is built on first use from its object's py4j connection,
its classes found by the JVM's application class loader, or, for a chain over a
connector's classes (which ``spark.jars.packages`` adds to a class loader of
their own), by the class loader of the first object it is applied to. If
the JVM cannot build it (another Spark or Scala version renamed a method), it
raises :class:`ChainUnavailable` from then on without trying again, and callers
fall back to asking step by step. An exception inside the chain (a null, a
target of another class) is raised as py4j raises it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Bound", "ChainUnavailable", "JvmChain", "Step", "chained", "class_name", "java_array", "jvm_of"]

logger = logging.getLogger(__name__)

#: A value bound to a method parameter: its declared class and the value (a str,
#: or a callable that makes the JVM value from the ``jvm`` view).
Bound = tuple[str, Any]
#: One getter: the class (or interface) declaring it, its name, its bound arguments.
Step = tuple[str, str, tuple[Bound, ...]]


class ChainUnavailable(Exception):
    """The JVM cannot build this chain; ask step by step instead."""


def jvm_of(target: Any) -> Any:
    """The py4j ``jvm`` view of the connection ``target`` (a JVM object proxy) came by."""
    from py4j.java_gateway import JVMView
    from py4j.protocol import DEFAULT_JVM_ID, DEFAULT_JVM_NAME

    return JVMView(target._gateway_client, jvm_name=DEFAULT_JVM_NAME, id=DEFAULT_JVM_ID)


def java_array(jvm: Any, element_class: str, values: list[Any]) -> Any:
    """A JVM array of ``element_class`` holding ``values``."""
    array = jvm.java.lang.reflect.Array.newInstance(jvm.java.lang.Class.forName(element_class), len(values))
    for index, value in enumerate(values):
        array[index] = value
    return array


def _build(jvm: Any, steps: tuple[Step, ...], loader: Any = None) -> Any:
    """The ``scala.Function1`` that applies ``steps`` in order to its argument, their
    classes loaded by ``loader`` when given."""
    for_name = jvm.java.lang.Class.forName
    handles = jvm.java.lang.invoke.MethodHandles
    lookup = handles.publicLookup()
    to_object = jvm.java.lang.invoke.MethodType.methodType(
        for_name("java.lang.Object"), for_name("java.lang.Object")
    )

    def step_class(name: str) -> Any:
        return for_name(name) if loader is None else for_name(name, False, loader)

    chain = None
    for class_name, method_name, bound in steps:
        parameters = java_array(jvm, "java.lang.Class", [for_name(cls) for cls, _ in bound])
        method = step_class(class_name).getMethod(method_name, parameters)
        handle = lookup.unreflect(method)
        if bound:
            values = [value(jvm) if callable(value) else value for _, value in bound]
            handle = handles.insertArguments(handle, 1, java_array(jvm, "java.lang.Object", values))
        handle = handle.asType(to_object)
        chain = handle if chain is None else handles.filterReturnValue(chain, handle)
    return jvm.java.lang.invoke.MethodHandleProxies.asInterfaceInstance(for_name("scala.Function1"), chain)


class JvmChain:
    """``steps`` applied to a JVM object in one py4j call: ``chain(target)``."""

    def __init__(self, *steps: Step, target_loader: bool = False) -> None:
        """``target_loader``: find the steps' classes with the class loader of the
        object the chain is first applied to (a connector's classes)."""
        self._steps = steps
        self._target_loader = target_loader
        self._function: Any = None
        self._client: Any = None
        self._unavailable = False
        self._lock = threading.Lock()

    def _function_for(self, target: Any) -> Any:
        client = getattr(target, "_gateway_client", None)
        if self._unavailable or client is None:
            raise ChainUnavailable(self._steps[0][1])
        with self._lock:
            # Built per py4j client: a new gateway (rare) has none of the old objects.
            if self._function is None or self._client is not client:
                try:
                    loader = target.getClass().getClassLoader() if self._target_loader else None
                    self._function = _build(jvm_of(target), self._steps, loader)
                    self._client = client
                except Exception as exc:
                    logger.debug("JVM chain %s is not available", self._steps, exc_info=True)
                    self._unavailable = True
                    raise ChainUnavailable(self._steps[0][1]) from exc
            return self._function

    def __call__(self, target: Any) -> Any:
        return self._function_for(target).apply(target)

    def ready(self, target: Any) -> bool:
        """Whether the chain is built for ``target``'s connection, so that calling it
        costs one round trip (building it costs a few dozen)."""
        return self._function is not None and self._client is getattr(target, "_gateway_client", None)

    def prepare(self, target: Any) -> None:
        """Build the chain for ``target``'s connection now, if the JVM can."""
        try:
            self._function_for(target)
        except ChainUnavailable:
            pass


def chained(chain: JvmChain, fallback: Callable[[Any], Any], target: Any, build: bool = True) -> Any:
    """``chain(target)``, or ``fallback(target)`` (step by step) when the JVM cannot build
    it — or, with ``build`` false, when it is not built yet: a thread that must stay
    quick (Spark's listener thread) leaves the building to another."""
    if not build and not chain.ready(target):
        return fallback(target)
    try:
        return chain(target)
    except ChainUnavailable:
        return fallback(target)


_CLASS_NAME = JvmChain(("java.lang.Object", "getClass", ()), ("java.lang.Class", "getName", ()))


def class_name(value: Any, build: bool = True) -> str:
    """A JVM object's class name, in one py4j call once the chain is built (see
    :func:`chained` for ``build``)."""
    return str(chained(_CLASS_NAME, lambda v: v.getClass().getName(), value, build))
