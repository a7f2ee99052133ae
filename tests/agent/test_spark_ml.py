"""Spark ML models as datasets, on a real SparkSession: a pipeline's training run
outputs its model (named by the path it is saved to, or by its uid until then),
the saved model's folders are no datasets of their own, and every action that
scores with a model (fitted here or loaded) reads it, with the prediction's
column lineage naming the model's columns and the features."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import Lineage

pytestmark = [pytest.mark.spark]

FEATURES = ["visits", "spend"]


def _training_data(spark: Any, path: Path) -> None:
    rows = [(i, float(i % 7), float(i * 3 % 11), 1.0 if i % 3 == 0 else 0.0) for i in range(60)]
    spark.createDataFrame(rows, "customer_id int, visits double, spend double, bought double").write.parquet(
        str(path)
    )


def _pipeline() -> Any:
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.feature import VectorAssembler

    return Pipeline(
        stages=[
            VectorAssembler(inputCols=FEATURES, outputCol="features"),
            LogisticRegression(labelCol="bought", featuresCol="features", maxIter=5),
        ]
    )


def _named(datasets: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(d["namespace"], d["name"]) for d in datasets]


def _runs(events: list[dict[str, Any]], job_part: str) -> list[list[dict[str, Any]]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if job_part in event["job"]["name"]:
            runs.setdefault(event["run"]["runId"], []).append(event)
    return list(runs.values())


def _input_fields(output: dict[str, Any], column: str) -> list[tuple[str, str, str]]:
    fields = output["facets"]["columnLineage"]["fields"][column]["inputFields"]
    return sorted((f["namespace"], f["name"], f["field"]) for f in fields)


def test_training_saving_and_scoring_make_the_model_a_dataset(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    from pyspark.ml.evaluation import BinaryClassificationEvaluator

    data, model_path, scored = tmp_path / "customers", tmp_path / "models" / "buyer", tmp_path / "scored"
    _training_data(spark, data)
    before = len(lineage.events())
    training = spark.read.parquet(str(data))
    model = _pipeline().fit(training)
    model.write().overwrite().save(str(model_path))
    predictions = model.transform(training)
    auc = BinaryClassificationEvaluator(labelCol="bought").evaluate(predictions)
    predictions.select("customer_id", "prediction").write.parquet(str(scored))
    events = lineage.events()[before:]

    # One training run, its model named by the path it was saved to.
    (fit,) = _runs(events, ".fit_pipeline")
    assert [e["eventType"] for e in fit] == ["START", "COMPLETE"]
    assert _named(fit[0]["inputs"]) == [("file", str(data))]
    (trained,) = fit[-1]["outputs"]
    assert (trained["namespace"], trained["name"]) == ("file", str(model_path))
    assert trained["facets"]["datasetType"]["datasetType"] == "MODEL"
    facet = trained["facets"]["model"]
    assert facet["algorithm"] == "pyspark.ml.pipeline.PipelineModel"
    assert [s["algorithm"].rsplit(".", 1)[-1] for s in facet["stages"]] == [
        "VectorAssembler", "LogisticRegressionModel"
    ]
    assert facet["stages"][1]["parameters"]["maxIter"] == 5
    assert facet["featureColumns"] == FEATURES and facet["labelColumn"] == "bought"
    assert facet["uid"] == model.uid
    assert [f["name"] for f in trained["facets"]["schema"]["fields"]] == [*FEATURES, "bought"]
    assert _input_fields(trained, "spend") == [("file", str(data), "spend")]

    # The model's metadata and data folders are its internals, no datasets.
    written = {d["name"] for e in events for d in e["outputs"]}
    assert not [n for n in written if n.startswith(f"{model_path}/")], written

    # Scoring reads the model; the prediction comes from the model and the features.
    (score,) = [e for e in events if e["eventType"] == "COMPLETE" and _named(e["outputs"]) == [("file", str(scored))]]
    assert sorted(_named(score["inputs"])) == sorted([("file", str(data)), ("file", str(model_path))])
    read_model = next(d for d in score["inputs"] if d["name"] == str(model_path))
    assert read_model["facets"]["model"]["metrics"] == {"areaUnderROC": pytest.approx(auc)}
    (output,) = score["outputs"]
    assert _input_fields(output, "prediction") == sorted(
        [("file", str(data), c) for c in FEATURES]
        + [("file", str(model_path), c) for c in (*FEATURES, "bought")]
    )
    assert _input_fields(output, "customer_id") == [("file", str(data), "customer_id")]


def test_a_loaded_model_is_read_by_the_job_that_scores_with_it(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    from pyspark.ml import PipelineModel

    data, model_path, scored = tmp_path / "customers", tmp_path / "model", tmp_path / "scores"
    _training_data(spark, data)
    _pipeline().fit(spark.read.parquet(str(data))).save(str(model_path))
    before = len(lineage.events())
    loaded = PipelineModel.load(str(model_path))
    scores = loaded.transform(spark.read.parquet(str(data))).selectExpr(
        "customer_id", "CAST(prediction AS INT) AS predicted"
    )
    scores.write.parquet(str(scored))
    events = lineage.events()[before:]
    (score,) = [e for e in events if e["eventType"] == "COMPLETE"]
    assert sorted(_named(score["inputs"])) == sorted([("file", str(data)), ("file", str(model_path))])
    model_input = next(d for d in score["inputs"] if d["name"] == str(model_path))
    assert model_input["facets"]["datasetType"]["datasetType"] == "MODEL"
    assert model_input["facets"]["model"]["featureColumns"] == FEATURES
    (output,) = score["outputs"]
    assert ("file", str(model_path), "visits") in _input_fields(output, "predicted")
    assert ("file", str(data), "spend") in _input_fields(output, "predicted")
    # Loading reads the model's folders: no run of its own either.
    assert [e for e in events if e not in [score] and e["eventType"] == "COMPLETE"] == []


def test_a_model_used_before_it_is_saved_is_named_by_its_uid_then_saved(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    data, model_path = tmp_path / "customers", tmp_path / "later"
    _training_data(spark, data)
    before = len(lineage.events())
    model = _pipeline().fit(spark.read.parquet(str(data)))
    model.transform(spark.read.parquet(str(data))).select("customer_id", "prediction").write.parquet(
        str(tmp_path / "early")
    )
    model.save(str(model_path))
    events = lineage.events()[before:]
    in_memory = (f"spark-ml://{lineage.agent.model.namespace}", model.uid)
    (fit,) = _runs(events, ".fit_pipeline")
    assert _named(fit[-1]["outputs"]) == [in_memory]
    (save,) = _runs(events, ".save_model")
    assert [e["eventType"] for e in save] == ["START", "COMPLETE"]
    assert _named(save[-1]["inputs"]) == [in_memory]
    assert _named(save[-1]["outputs"]) == [("file", str(model_path))]
    early = [e for e in events if e["eventType"] == "COMPLETE" and e["outputs"]
             and e["outputs"][0]["name"] == str(tmp_path / "early")]
    assert in_memory in _named(early[0]["inputs"])


def test_a_failed_fit_is_a_failed_training_run_and_the_job_sees_its_error(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    from pyspark.ml.classification import LogisticRegression

    data = tmp_path / "customers"
    _training_data(spark, data)
    before = len(lineage.events())
    with pytest.raises(Exception, match="no_such_column"):
        LogisticRegression(featuresCol="no_such_column", labelCol="bought").fit(spark.read.parquet(str(data)))
    (fit,) = _runs(lineage.events()[before:], ".fit_logistic_regression")
    assert [e["eventType"] for e in fit] == ["START", "FAIL"]
    assert "no_such_column" in fit[-1]["run"]["facets"]["errorMessage"]["message"]


def test_a_streaming_query_that_scores_with_a_model_reads_it(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    data, model_path, scored = tmp_path / "customers", tmp_path / "model", tmp_path / "stream_scores"
    _training_data(spark, data)
    model = _pipeline().fit(spark.read.parquet(str(data)))
    model.save(str(model_path))
    before = len(lineage.events())
    stream = spark.readStream.schema(spark.read.parquet(str(data)).schema).parquet(str(data))
    query = (
        model.transform(stream)
        .selectExpr("customer_id", "prediction")
        .writeStream.format("parquet")
        .option("path", str(scored))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    events = [e for e in lineage.events()[before:] if e["job"]["facets"]["jobType"]["processingType"] == "STREAMING"]
    start = events[0]
    assert sorted(_named(start["inputs"])) == sorted([("file", str(data)), ("file", str(model_path))])
    (output,) = events[-1]["outputs"]
    assert ("file", str(model_path), "spend") in _input_fields(output, "prediction")
    assert ("file", str(data), "spend") in _input_fields(output, "prediction")


@pytest.mark.parametrize("search", ["CrossValidator", "TrainValidationSplit"])
def test_a_tuning_search_outputs_its_best_model_with_the_evaluator_metric(
    spark: Any, lineage: Lineage, tmp_path: Path, search: str
) -> None:
    from pyspark.ml import tuning
    from pyspark.ml.evaluation import BinaryClassificationEvaluator

    data, model_path, scored = tmp_path / "customers", tmp_path / "best", tmp_path / "scored"
    _training_data(spark, data)
    pipeline = _pipeline()
    regression = pipeline.getStages()[1]
    grid = tuning.ParamGridBuilder().addGrid(regression.regParam, [0.0, 0.5]).build()
    split = {"numFolds": 2} if search == "CrossValidator" else {"trainRatio": 0.7}
    estimator = getattr(tuning, search)(
        estimator=pipeline, estimatorParamMaps=grid, seed=3,
        evaluator=BinaryClassificationEvaluator(labelCol="bought"), **split,
    )
    before = len(lineage.events())
    training = spark.read.parquet(str(data))
    searched = estimator.fit(training)
    searched.bestModel.write().overwrite().save(str(model_path))
    searched.transform(training).select("customer_id", "prediction").write.parquet(str(scored))
    events = lineage.events()[before:]

    # One training run (the candidates' fits are the search's own work), its output
    # the best model, named by the path it was saved to.
    (fit,) = _runs(events, ".fit_")
    assert [e["eventType"] for e in fit] == ["START", "COMPLETE"]
    assert _named(fit[0]["inputs"]) == [("file", str(data))]
    (best,) = fit[-1]["outputs"]
    assert (best["namespace"], best["name"]) == ("file", str(model_path))
    facet = best["facets"]["model"]
    assert facet["uid"] == searched.bestModel.uid
    assert facet["algorithm"] == "pyspark.ml.pipeline.PipelineModel"
    candidates = list(searched.avgMetrics if search == "CrossValidator"
                      else searched.validationMetrics)
    assert facet["tuning"]["algorithm"] == f"pyspark.ml.tuning.{search}Model"
    assert facet["tuning"]["metricName"] == "areaUnderROC"
    assert facet["tuning"]["candidateMetrics"] == pytest.approx(candidates)
    assert facet["metrics"] == {"areaUnderROC": pytest.approx(max(candidates))}
    # No candidate became a model dataset of its own.
    named = {(d["namespace"], d["name"]) for e in events for d in e["inputs"] + e["outputs"]}
    assert not [
        (ns, n) for ns, n in named if ns.startswith("spark-ml") or n.startswith(f"{model_path}/")
    ], named

    # Scoring with the search's model reads the best model.
    (score,) = [e for e in events if e["eventType"] == "COMPLETE" and _named(e["outputs"]) == [("file", str(scored))]]
    assert sorted(_named(score["inputs"])) == sorted([("file", str(data)), ("file", str(model_path))])


def test_a_saved_cross_validator_model_is_the_best_model_loaded_back_for_scoring(
    spark: Any, lineage: Lineage, tmp_path: Path
) -> None:
    from pyspark.ml import tuning
    from pyspark.ml.evaluation import BinaryClassificationEvaluator

    data, model_path, scored = tmp_path / "customers", tmp_path / "searched", tmp_path / "scored"
    _training_data(spark, data)
    pipeline = _pipeline()
    grid = tuning.ParamGridBuilder().addGrid(pipeline.getStages()[1].regParam, [0.0]).build()
    search = tuning.CrossValidator(
        estimator=pipeline, estimatorParamMaps=grid, numFolds=2, seed=3,
        evaluator=BinaryClassificationEvaluator(labelCol="bought"),
    )
    before = len(lineage.events())
    searched = search.fit(spark.read.parquet(str(data)))
    searched.save(str(model_path))
    saved = lineage.events()[before:]
    loaded = tuning.CrossValidatorModel.load(str(model_path))
    scores = loaded.transform(spark.read.parquet(str(data))).select("customer_id", "prediction")
    scores.write.parquet(str(scored))
    events = lineage.events()[before:]

    # The search's training run outputs its best model under the path the search's
    # model was saved to: a new version of that model dataset, written by the run.
    (fit,) = _runs(saved, ".fit_cross_validator")
    assert [e["eventType"] for e in fit] == ["START", "COMPLETE"]
    (model,) = fit[-1]["outputs"]
    assert (model["namespace"], model["name"]) == ("file", str(model_path))
    assert model["facets"]["datasetType"]["datasetType"] == "MODEL"
    assert model["facets"]["model"]["uid"] == searched.bestModel.uid
    tuned = model["facets"]["model"]["tuning"]
    assert tuned["algorithm"] == "pyspark.ml.tuning.CrossValidatorModel"
    # Its metadata and best-model folders are its internals: no dataset, no run.
    named = {(d["namespace"], d["name"]) for e in events for d in e["inputs"] + e["outputs"]}
    assert not [
        (ns, n) for ns, n in named if ns.startswith("spark-ml") or n.startswith(f"{model_path}/")
    ], named
    assert {e["job"]["name"].rsplit(".", 1)[-1] for e in saved} == {"fit_cross_validator"}

    # Loaded back, the search's model scores as the model dataset at that path.
    (score,) = [
        e for e in events
        if e["eventType"] == "COMPLETE" and _named(e["outputs"]) == [("file", str(scored))]
    ]
    assert sorted(_named(score["inputs"])) == [("file", str(data)), ("file", str(model_path))]
    read_model = next(d for d in score["inputs"] if d["name"] == str(model_path))
    assert read_model["facets"]["model"]["uid"] == loaded.bestModel.uid == searched.bestModel.uid
    (output,) = score["outputs"]
    assert ("file", str(model_path), "visits") in _input_fields(output, "prediction")
    assert ("file", str(data), "spend") in _input_fields(output, "prediction")
