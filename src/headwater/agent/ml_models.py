"""Spark ML models as datasets: the training run, the model's name and version,
and the model as an input of every action that scores with it.

The wrappers of :mod:`.ml_hooks` call :class:`ModelLineage` on the user's
thread; it only notes the call and hands a :class:`ModelStep` to the agent's
capture worker, which does the py4j work and emits in order with the actions.

* **Training.** ``fit`` is a run of its own (``{app}.fit_{estimator}``): START
  when the fit returns, with the training DataFrame's datasets as inputs; its
  output is the model, a dataset of type ``MODEL`` whose schema is the columns
  the model reads (features and label) with column lineage from the training
  data, and whose ``model`` facet holds the algorithm, its stages and
  parameters, the feature and label columns and the metrics evaluators
  computed on its predictions. The COMPLETE waits until the model has a name:
  the path it is saved to first, or, when it is used or the application ends
  before that, its ``uid`` under ``spark-ml://{namespace}``.
* **Saving.** ``save(path)`` names the model by its path (each save a new
  version of that dataset). The writes under that path (the model's metadata
  and data folders) are its internals: no action reports them. A model saved
  again, or loaded and saved, is a ``save_model`` run from the name it had to
  the path.
* **Scoring.** ``transform`` notes the columns a model adds (their expression
  ids in the DataFrame's analyzed plan). An action whose analyzed plan
  carries one of them reads the model: the model is one of its inputs, and an
  output column computed from a prediction has the model's columns among its
  input fields. A model read with ``load(path)`` is named by that path.

The model's dataset and run events are built in :mod:`.ml_model_datasets`, the
columns its predictions reach traced in :mod:`.ml_scoring`.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from headwater import naming
from headwater.agent.actions import column_sources, plan_datasets
from headwater.agent.capture import RelationCache, capture_plan
from headwater.agent.ml_description import describe, model_columns, scoring_model, tuning_metric
from headwater.agent.ml_model_datasets import (
    ModelRecord,
    model_dataset,
    model_run_event,
    spark_type_name,
)
from headwater.agent.ml_scoring import add_prediction_lineage, prediction_reach, scored_column_ids
from headwater.agent.run_model import RunModel, uuid7
from headwater.agent.sources import VisitContext

__all__ = ["ModelLineage", "ModelStep"]

logger = logging.getLogger(__name__)


@dataclass
class ModelStep:
    """A model call noted on the user's thread, for the capture worker."""

    kind: str  # fit, transform, saving, saved, load, evaluate
    when: float
    uid: str = ""
    description: dict[str, Any] | None = None
    path: str | None = None
    frame: Any = None  # the DataFrame's JVM handle: training data, or a transform's result
    added: list[str] = field(default_factory=list)
    error: tuple[str, str | None] | None = None
    start: float = 0.0
    estimator: str = ""
    metric: tuple[str, float] | None = None
    #: Named in the worker's warning when its queue is full.
    func_name: str = "a Spark ML call"


class ModelLineage:
    """The agent's Spark ML side; see the module docstring."""

    def __init__(
        self,
        model: RunModel,
        context: dict[str, Any],
        emit: Callable[[dict[str, Any]], None],
        submit: Callable[[Any], None],
        log_once: Callable[[str, BaseException], None],
        catalog_impl: str = "hive",
        remove_path: Any = None,
    ) -> None:
        self._run_model = model
        self._context = context
        self._emit = emit
        self._submit = submit
        self._log_once = log_once
        self._catalog_impl = catalog_impl
        self._remove_path = remove_path
        self._relations = RelationCache(16)
        self._models: dict[str, ModelRecord] = {}
        #: exprId of a column a model added -> that model's uid (worker thread only).
        self.columns: dict[int, str] = {}
        #: (namespace, name prefix) of the paths models were saved to or loaded from.
        self._internal: list[tuple[str, str]] = []

    # -- the user's thread: note and hand over --------------------------------------------

    def fit_begins(self, estimator: Any, dataset: Any) -> ModelStep:
        return ModelStep(
            "fit", 0.0, start=time.time(), estimator=type(estimator).__name__, frame=dataset._jdf
        )

    def fit_ends(self, step: ModelStep, fitted: Any, error: BaseException | None) -> None:
        step.when = time.time()
        if error is not None:
            text = str(error) or repr(error)
            step.error = (text.split("\n\tat ", 1)[0].strip(), text)
        else:
            # A tuning fit (CrossValidator, TrainValidationSplit) outputs its best model.
            step.uid, step.description = str(scoring_model(fitted).uid), describe(fitted)
            step.metric = tuning_metric(fitted)
        self._submit(step)

    def transformed(self, transformer: Any, dataset: Any, result: Any) -> None:
        from pyspark.ml.base import Model

        if not isinstance(transformer, Model):
            return  # a feature transformer: its columns are in Spark's plan already
        before = set(dataset.columns)
        added = [c for c in result.columns if c not in before]
        self._submit(
            ModelStep(
                "transform",
                time.time(),
                uid=str(scoring_model(transformer).uid),
                description=describe(transformer),
                frame=result._jdf,
                added=added,
            )
        )

    def saving(self, instance: Any, path: str) -> ModelStep:
        from pyspark.ml.base import Model

        step = ModelStep("saving", time.time(), path=str(path))
        if isinstance(instance, Model):
            step.uid, step.description = str(scoring_model(instance).uid), describe(instance)
        self._submit(step)
        return step

    def saved(self, step: ModelStep, error: BaseException | None) -> None:
        if error is None and step.uid:
            self._submit(
                ModelStep(
                    "saved",
                    time.time(),
                    uid=step.uid,
                    path=step.path,
                    description=step.description,
                    start=step.when,
                )
            )

    def loaded(self, instance: Any, path: str) -> None:
        from pyspark.ml.base import Model

        if isinstance(instance, Model):
            uid = str(scoring_model(instance).uid)
            self._submit(
                ModelStep(
                    "load", time.time(), uid=uid, path=str(path), description=describe(instance)
                )
            )

    def evaluated(self, evaluator: Any, dataset: Any, value: Any) -> None:
        name = str(evaluator.getMetricName()) if hasattr(evaluator, "getMetricName") else "metric"
        self._submit(
            ModelStep("evaluate", time.time(), frame=dataset._jdf, metric=(name, float(value)))
        )

    # -- the capture worker -------------------------------------------------------------

    def handle(self, step: ModelStep) -> None:
        handler = {
            "fit": self._fit,
            "transform": self._transform,
            "saving": self._saving,
            "saved": self._saved,
            "load": self._load,
            "evaluate": self._evaluate,
        }[step.kind]
        try:
            handler(step)
        finally:
            step.frame = None

    def _fit(self, step: ModelStep) -> None:
        run_id = uuid7(int(step.start * 1000))
        job = {
            "namespace": self._run_model.namespace,
            "name": self._run_model.action_job_name(f"fit_{step.estimator}", None),
            "facets": self._run_model.job_facets("JOB"),
        }
        inputs: list[dict[str, Any]] = []
        columns: dict[str, str] = {}
        sources: dict[str, Any] = {}
        try:
            plan = capture_plan(
                step.frame.queryExecution().optimizedPlan(), relations=self._relations
            )
            ctx = VisitContext(
                tree=plan.tree,
                node_facts=plan.facts,
                warehouse_uri=self._context.get("warehouse_uri"),
                table_namespace=self._context.get("table_namespace"),
                remove_path=self._remove_path,
            )
            visited, inputs, _ = plan_datasets(ctx, self._run_model, self._catalog_impl)
            schema = json.loads(str(step.frame.schema().json()))
            columns = {
                str(f["name"]): spark_type_name(f.get("type")) for f in schema.get("fields", [])
            }
            sources = column_sources(visited, plan.tree, list(columns))
        except Exception as exc:
            self._log_once("capturing a model's training data", exc)
        self._emit(model_run_event(self._run_model, "START", run_id, job, step.start, inputs, []))
        if step.error is not None or step.description is None:
            self._emit(
                model_run_event(
                    self._run_model, "FAIL", run_id, job, step.when, inputs, [], step.error
                )
            )
            return
        record = self._record(step.uid, step.description)
        if step.metric is not None:
            record.metrics[step.metric[0]] = step.metric[1]
        used = [c for c in model_columns(step.description) if c in columns] or []
        record.fields = [(c, columns[c]) for c in used]
        record.field_lineage = {
            c: [
                {"namespace": ns, "name": name, "field": col, "transformations": [how.to_json()]}
                for (ns, name, col), how in sources.get(c, [])
            ]
            for c in used
        }
        record.fit_run = {"run_id": run_id, "job": job, "when": step.when, "inputs": inputs}

    def _transform(self, step: ModelStep) -> None:
        record = self._record(step.uid, step.description or {})
        self._name(record)
        try:
            output = str(step.frame.queryExecution().analyzed().output().toString())
        except Exception as exc:
            self._log_once("reading a transform's columns", exc)
            return
        for column in step.added:
            for found in re.finditer(re.escape(column) + r"#(\d+)", output):
                self.columns[int(found.group(1))] = record.uid

    def _saving(self, step: ModelStep) -> None:
        namespace, name = naming.dataset_from_location(str(step.path))
        self._internal.append((namespace, name.rstrip("/") + "/"))

    def _saved(self, step: ModelStep) -> None:
        record = self._record(step.uid, step.description or {})
        target = naming.dataset_from_location(str(step.path))
        if record.fit_run is not None:
            record.dataset = target
            self._complete_fit(record)
            return
        source = record.dataset
        record.dataset = target
        run_id = uuid7(int(step.start * 1000))
        job = {
            "namespace": self._run_model.namespace,
            "name": self._run_model.action_job_name("save_model", target[1]),
            "facets": self._run_model.job_facets("JOB"),
        }
        inputs = (
            [model_dataset(self._run_model, record, source, with_schema=False)] if source else []
        )
        outputs = [model_dataset(self._run_model, record, target)]
        self._emit(model_run_event(self._run_model, "START", run_id, job, step.start, inputs, []))
        self._emit(
            model_run_event(self._run_model, "COMPLETE", run_id, job, step.when, inputs, outputs)
        )

    def _load(self, step: ModelStep) -> None:
        record = self._record(step.uid, step.description or {})
        record.dataset = naming.dataset_from_location(str(step.path))
        namespace, name = record.dataset
        self._internal.append((namespace, name.rstrip("/") + "/"))

    def _evaluate(self, step: ModelStep) -> None:
        if not self.columns or step.metric is None:
            return
        try:
            output = str(step.frame.queryExecution().analyzed().output().toString())
        except Exception as exc:
            self._log_once("reading an evaluated DataFrame's columns", exc)
            return
        ids = {int(i) for i in re.findall(r"#(\d+)", output)}
        for uid in {self.columns[i] for i in ids if i in self.columns}:
            self._models[uid].metrics[step.metric[0]] = step.metric[1]

    # -- naming and events --------------------------------------------------------------

    def _record(self, uid: str, description: dict[str, Any]) -> ModelRecord:
        record = self._models.get(uid)
        if record is None:
            record = self._models[uid] = ModelRecord(uid, description)
        elif description:
            # How a tuning search chose the model is known only from the search's
            # model: a later save or use of the best model itself keeps it.
            tuning = record.description.get("tuning")
            if tuning is not None and "tuning" not in description:
                description = {**description, "tuning": tuning}
            record.description = description
        return record

    def _name(self, record: ModelRecord) -> tuple[str, str]:
        """The model's dataset name; an unsaved model is named by its uid, which ends
        the training run's wait."""
        if record.dataset is None:
            record.dataset = (f"spark-ml://{self._run_model.namespace}", record.uid)
        if record.fit_run is not None:
            self._complete_fit(record)
        return record.dataset

    def _complete_fit(self, record: ModelRecord) -> None:
        run = record.fit_run
        record.fit_run = None
        if run is None or record.dataset is None:
            return
        output = model_dataset(self._run_model, record, record.dataset)
        self._emit(
            model_run_event(
                self._run_model,
                "COMPLETE",
                run["run_id"],
                run["job"],
                run["when"],
                run["inputs"],
                [output],
            )
        )

    # -- what actions see ----------------------------------------------------------------

    def is_internal(self, events: list[dict[str, Any]]) -> bool:
        """Whether every dataset an action's events write lies inside a saved or
        loaded model's folder (its metadata and data: the model's internals)."""
        if not self._internal or not events:
            return False
        outputs = [(d["namespace"], d["name"]) for d in events[-1].get("outputs", [])]
        return bool(outputs) and all(
            any(
                ns == namespace and (name + "/").startswith(prefix)
                for namespace, prefix in self._internal
            )
            for ns, name in outputs
        )

    def add_models(
        self, events: list[dict[str, Any]], analyzed_json: str, whole_plan: bool = False
    ) -> None:
        """Add the models an action scored with to its events (see the module docstring).
        ``whole_plan``: the plan is the written query itself (a streaming query's)."""
        ids = scored_column_ids(analyzed_json)
        uids = {self.columns[i] for i in ids if i in self.columns}
        if not uids:
            return
        records = [self._models[uid] for uid in sorted(uids)]
        for record in records:
            self._name(record)
        leaves = {
            i: (*self._models[uid].dataset, uid)  # type: ignore[misc]
            for i, uid in self.columns.items()
            if uid in uids and i in ids
        }
        reached: dict[str, set[str]] = {}
        try:
            reached = prediction_reach(events, analyzed_json, leaves, whole_plan)
        except Exception as exc:
            self._log_once("tracing a model's predictions", exc)
        for event in events:
            event["inputs"] = list(event.get("inputs", [])) + [
                model_dataset(self._run_model, r, r.dataset, with_schema=False)
                for r in records
                if r.dataset
            ]
            for output in event.get("outputs", []):
                add_prediction_lineage(output, reached, records)

    def close(self) -> None:
        """Complete the training runs still waiting for their model's name."""
        for record in list(self._models.values()):
            if record.fit_run is not None:
                try:
                    self._name(record)
                except Exception as exc:
                    self._log_once("ending a model's training run", exc)
