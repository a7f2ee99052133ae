"""Train: a Spark ML pipeline (assembler, scaler, logistic regression) that predicts
repeat buyers; saves the fitted model and the hold-out predictions it was judged on."""

from __future__ import annotations

from pyspark.ml import Pipeline
from pyspark.ml.classification import LogisticRegression
from pyspark.ml.evaluation import BinaryClassificationEvaluator
from pyspark.ml.feature import StandardScaler, VectorAssembler
from pyspark.sql import functions as F

from _common import Paths, parse_args, session

FEATURES = ["orders_before", "spend_before", "avg_order_value", "sessions", "page_views", "cart_adds"]


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_train", paths)
    data = spark.read.parquet(Paths.uri(paths.features / "customer_features"))
    train, holdout = data.randomSplit([0.8, 0.2], seed=7)
    pipeline = Pipeline(stages=[
        VectorAssembler(inputCols=FEATURES, outputCol="raw_features"),
        StandardScaler(inputCol="raw_features", outputCol="features"),
        LogisticRegression(labelCol="bought_again", featuresCol="features", maxIter=20),
    ])
    model = pipeline.fit(train)
    model.write().overwrite().save(str(paths.models / "repeat_buyer"))
    predictions = model.transform(holdout)
    auc = BinaryClassificationEvaluator(labelCol="bought_again").evaluate(predictions)
    (
        predictions.select("customer_id", "bought_again", "prediction")
        .withColumn("holdout_auc", F.lit(auc))
        .write.mode("overwrite")
        .parquet(Paths.uri(paths.models / "repeat_buyer_holdout"))
    )
    spark.stop()


if __name__ == "__main__":
    main()
