"""What the ``model`` facet says about a Spark ML model, read from its Python object:
algorithm, stages, parameters, and the columns it reads.

Pure Python over ``pyspark.ml`` params (a Java-backed model's params are copied
to Python when it is wrapped), so no py4j call is made here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["describe", "model_columns", "scoring_model", "tuning_metric"]

#: Params naming the columns a stage reads, and those naming what it writes.
_READS = ("inputCol", "inputCols", "featuresCol", "labelCol", "weightCol")
_WRITES = ("outputCol", "outputCols", "predictionCol", "probabilityCol", "rawPredictionCol")


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def _class_name(instance: Any) -> str:
    return f"{type(instance).__module__}.{type(instance).__name__}"


def _set_params(instance: Any) -> dict[str, Any]:
    """The params set on ``instance`` (explicitly or by fitting), by name."""
    found: dict[str, Any] = {}
    for param in getattr(instance, "params", []):
        try:
            if instance.isSet(param):
                found[param.name] = _plain(instance.getOrDefault(param))
        except Exception:
            continue
    return found


def _column_params(stage: Any, names: tuple[str, ...]) -> list[str]:
    columns: list[str] = []
    for name in names:
        try:
            if not stage.hasParam(name):
                continue
            value = stage.getOrDefault(name)
        except Exception:
            continue
        if isinstance(value, str):
            columns.append(value)
        elif isinstance(value, (list, tuple)):
            columns.extend(str(v) for v in value)
    return columns


def scoring_model(instance: Any) -> Any:
    """The model that scores for ``instance``: a tuning model's (``CrossValidatorModel``,
    ``TrainValidationSplitModel``) best model, else the instance itself."""
    best = getattr(instance, "bestModel", None)
    return instance if best is None else best


def tuning_metric(instance: Any) -> tuple[str, float] | None:
    """A tuning model's evaluator metric and the best model's value of it: the best
    of the averages over folds (``avgMetrics``) or of the validation metrics."""
    if getattr(instance, "bestModel", None) is None:
        return None
    values = getattr(instance, "avgMetrics", None) or getattr(instance, "validationMetrics", None)
    evaluator = instance.getEvaluator()
    if not values or evaluator is None:
        return None
    larger = bool(evaluator.isLargerBetter())
    best = max(values) if larger else min(values)
    return str(evaluator.getMetricName()), float(best)


def _tuning(instance: Any) -> dict[str, Any]:
    """How a tuning model chose its best model: the search, its evaluator and the metrics."""
    tuning: dict[str, Any] = {"algorithm": _class_name(instance)}
    evaluator = instance.getEvaluator()
    if evaluator is not None:
        tuning["evaluator"] = _class_name(evaluator)
        tuning["metricName"] = str(evaluator.getMetricName())
        tuning["largerIsBetter"] = bool(evaluator.isLargerBetter())
    for name in ("numFolds", "trainRatio", "seed"):
        if instance.hasParam(name) and instance.isDefined(instance.getParam(name)):
            tuning[name] = _plain(instance.getOrDefault(name))
    values = getattr(instance, "avgMetrics", None) or getattr(instance, "validationMetrics", None)
    if values:
        tuning["candidateMetrics"] = [float(v) for v in values]
    return tuning


def describe(instance: Any) -> dict[str, Any]:
    """The ``model`` facet's description of a fitted model (or a pipeline of them); of a
    tuning model, its best model's, with how the search chose it (``tuning``)."""
    best = scoring_model(instance)
    if best is not instance:
        description = describe(best)
        try:
            description["tuning"] = _tuning(instance)
        except Exception:
            pass
        return description
    stages = getattr(instance, "stages", None)
    parts = list(stages) if isinstance(stages, (list, tuple)) else [instance]
    reads: list[str] = []
    writes: set[str] = set()
    label = None
    for stage in parts:
        for column in _column_params(stage, _READS):
            if column not in writes and column not in reads:
                reads.append(column)
        writes.update(_column_params(stage, _WRITES))
        labels = _column_params(stage, ("labelCol",))
        label = labels[0] if labels else label
    description: dict[str, Any] = {"algorithm": _class_name(instance)}
    if isinstance(stages, (list, tuple)):
        description["stages"] = [
            {"uid": str(s.uid), "algorithm": _class_name(s), "parameters": _set_params(s)}
            for s in parts
        ]
    else:
        description["parameters"] = _set_params(instance)
    description["featureColumns"] = [c for c in reads if c != label]
    if label is not None:
        description["labelColumn"] = label
    return description


def model_columns(description: dict[str, Any]) -> list[str]:
    """The columns a described model reads: its features, then its label."""
    columns = list(description.get("featureColumns", []))
    label = description.get("labelColumn")
    return columns + ([label] if label else [])
