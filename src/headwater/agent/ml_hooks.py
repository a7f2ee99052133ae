"""Wrappers around ``pyspark.ml``: where Python sees a model being fitted, used,
saved, loaded and evaluated.

Spark's plans hold no model identity (a model's ``transform`` adds UDF
expressions that name no model), so the agent learns about models from the
Python calls that make and use them:

* ``Estimator.fit(dataset)``: the training DataFrame and the fitted model;
* ``Transformer.transform(dataset)``: the columns a model adds to a DataFrame;
* ``MLWriter.save(path)`` and ``JavaMLWriter.save(path)``: where a model (or a
  stage, or an estimator) is saved, and so which writes are its internals;
* ``MLReadable.load(path)``: a model read back from a path;
* ``Evaluator.evaluate(dataset)``: a metric computed on a model's predictions.

Only the outermost call on a thread counts: a ``Pipeline``'s fit fits its
stages, a ``PipelineModel``'s transform and save run its stages' own. A
tuning search (``CrossValidator``, ``TrainValidationSplit``) fits and
evaluates its candidates on a thread pool: while one runs, no fit, and no
transform or evaluation, is noted anywhere in the process; its own fit outputs
the best model, with the evaluator's metric. Each
wrapper runs PySpark's method untouched with the caller's arguments and returns
its result or raises its exception unchanged; what the agent does with the
call (:class:`~headwater.agent.ml_models.ModelLineage`) never raises into it.

``JavaMLWriter`` keeps no reference to the instance it writes (only its Java
writer), so its ``__init__`` is wrapped to note it (``_headwater_instance``).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["install_ml_hooks", "saved_instance"]

logger = logging.getLogger(__name__)

_install_lock = threading.Lock()
_depth = threading.local()
#: Tuning fits (CrossValidator, TrainValidationSplit) under way in the process: their
#: candidates are fitted and evaluated on pool threads, whose own depth is 0.
_tuning = {"fits": 0}
_tuning_lock = threading.Lock()

#: ``spark_context -> ModelLineage | None``: the lineage of the agent watching it.
Finder = Callable[[Any], Any]


@contextmanager
def _outermost(kind: str) -> Iterator[bool]:
    """Whether this is the outermost ``kind`` call on this thread, for its duration."""
    depth = getattr(_depth, kind, 0)
    setattr(_depth, kind, depth + 1)
    try:
        yield depth == 0
    finally:
        setattr(_depth, kind, depth)


def _inside(kind: str) -> bool:
    """Whether a ``kind`` call is under way on this thread, or, for a fit, a tuning
    search anywhere in the process (its candidates run on a pool's threads)."""
    return getattr(_depth, kind, 0) > 0 or (kind == "fit" and _tuning["fits"] > 0)


@contextmanager
def _tuning_search(estimator: Any) -> Iterator[None]:
    """Counts ``estimator``'s fit as a tuning search for its duration, if it is one."""
    tuning = hasattr(estimator, "getEstimatorParamMaps")
    if tuning:
        with _tuning_lock:
            _tuning["fits"] += 1
    try:
        yield
    finally:
        if tuning:
            with _tuning_lock:
                _tuning["fits"] -= 1


def _context_of(frame: Any) -> Any:
    try:
        return frame.sparkSession.sparkContext
    except Exception:
        return None


def _lineage(find: Finder, frame: Any) -> Any:
    try:
        context = _context_of(frame)
        return find(context) if context is not None else None
    except Exception:
        logger.debug("no model lineage for this DataFrame", exc_info=True)
        return None


def _quietly(what: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception:
        logger.debug("headwater agent: %s failed", what, exc_info=True)
        return None


def _wrap_fit(original: Callable[..., Any], find: Finder) -> Callable[..., Any]:
    @functools.wraps(original)
    def fit(self: Any, dataset: Any, params: Any = None) -> Any:
        with _outermost("fit") as outermost:
            outermost = outermost and _tuning["fits"] == 0
            lineage = _lineage(find, dataset) if outermost and not isinstance(params, (list, tuple)) else None
            token = _quietly("noting a fit", lambda: lineage.fit_begins(self, dataset)) if lineage else None
            try:
                if outermost:
                    with _tuning_search(self):
                        model = original(self, dataset, params)
                else:
                    model = original(self, dataset, params)
            except BaseException as exc:
                if token is not None:
                    _quietly("noting a failed fit", functools.partial(lineage.fit_ends, token, None, exc))
                raise
            if token is not None:
                _quietly("noting a fitted model", lambda: lineage.fit_ends(token, model, None))
            return model

    fit.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return fit


def _wrap_scoring(
    original: Callable[..., Any], find: Finder, kind: str, note: str
) -> Callable[..., Any]:
    """Wrap a ``transform`` or ``evaluate``: after the outermost call outside a fit,
    call the agent's ``note`` (``transformed``, ``evaluated``) with the instance,
    the dataset and the answer.

    Inside a fit (a pipeline's stages, a tuning search's candidates) a transform is
    the estimator's own work, not scoring, and an evaluation is recorded as the
    search's metric.
    """

    @functools.wraps(original)
    def scoring(self: Any, dataset: Any, params: Any = None) -> Any:
        with _outermost(kind) as outermost:
            answer = original(self, dataset, params)
            if outermost and not _inside("fit"):
                lineage = _lineage(find, dataset)
                if lineage is not None:
                    noted = getattr(lineage, note)
                    _quietly(f"noting {kind}", lambda: noted(self, dataset, answer))
            return answer

    scoring.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return scoring


def saved_instance(writer: Any) -> Any:
    """The ML instance a writer saves (``instance`` on Python writers)."""
    return getattr(writer, "instance", None) or getattr(writer, "_headwater_instance", None)


def _wrap_save(original: Callable[..., Any], find: Finder) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(self: Any, path: str) -> Any:
        with _outermost("save") as outermost:
            lineage = None
            if outermost:
                session = getattr(self, "sparkSession", None)
                context = getattr(session, "sparkContext", None)
                lineage = _quietly("finding the agent", lambda: find(context)) if context else None
            token = None
            if lineage is not None:
                token = _quietly("noting a save", lambda: lineage.saving(saved_instance(self), path))
            try:
                result = original(self, path)
            except BaseException as exc:
                if token is not None:
                    _quietly("noting a failed save", functools.partial(lineage.saved, token, exc))
                raise
            if token is not None:
                _quietly("noting a save", lambda: lineage.saved(token, None))
            return result

    save.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return save


def _wrap_java_writer_init(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def __init__(self: Any, instance: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        original(self, instance, *args, **kwargs)
        try:
            self._headwater_instance = instance
        except Exception:
            logger.debug("could not note the instance a writer saves", exc_info=True)

    __init__.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return __init__


def _wrap_load(original: Callable[..., Any], find: Finder) -> Any:
    function = original.__func__  # a classmethod, bound to MLReadable

    @functools.wraps(function)
    def load(cls: Any, path: str) -> Any:
        with _outermost("load") as outermost:
            instance = function(cls, path)
            if outermost:
                from pyspark import SparkContext

                context = SparkContext._active_spark_context
                lineage = _quietly("finding the agent", lambda: find(context)) if context else None
                if lineage is not None:
                    _quietly("noting a load", lambda: lineage.loaded(instance, path))
            return instance

    load.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return classmethod(load)


def _replace(owner: Any, name: str, wrap: Callable[[Any], Any]) -> None:
    original = owner.__dict__.get(name)
    if original is None:
        return
    inner = getattr(original, "__func__", original)
    if getattr(inner, "__headwater_wrapped__", False):
        return
    setattr(owner, name, wrap(original))


def install_ml_hooks(find: Finder) -> None:
    """Wrap ``pyspark.ml``'s fit, transform, save, load and evaluate once per process.

    ``find(spark_context)`` returns the :class:`~headwater.agent.ml_models.ModelLineage`
    of the agent watching that SparkContext, or ``None``; the calls made on it
    never reach the user's code.
    """
    from pyspark.ml import base, evaluation, util

    with _install_lock:
        _replace(base.Estimator, "fit", lambda f: _wrap_fit(f, find))
        _replace(
            base.Transformer,
            "transform",
            lambda f: _wrap_scoring(f, find, "transform", "transformed"),
        )
        _replace(util.MLWriter, "save", lambda f: _wrap_save(f, find))
        _replace(util.JavaMLWriter, "save", lambda f: _wrap_save(f, find))
        _replace(util.JavaMLWriter, "__init__", _wrap_java_writer_init)
        _replace(util.MLReadable, "load", lambda f: _wrap_load(f, find))
        _replace(
            evaluation.Evaluator,
            "evaluate",
            lambda f: _wrap_scoring(f, find, "evaluate", "evaluated"),
        )
