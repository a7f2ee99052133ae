"""Score: load the saved repeat-buyer model and score every customer (batch inference)."""

from __future__ import annotations

from pyspark.ml import PipelineModel
from pyspark.ml.functions import vector_to_array
from pyspark.sql import functions as F

from _common import Paths, parse_args, session


def main() -> None:
    paths = parse_args(__doc__.splitlines()[0])
    spark = session("retail_score", paths)
    model = PipelineModel.load(str(paths.models / "repeat_buyer"))
    features = spark.read.parquet(Paths.uri(paths.features / "customer_features"))
    scores = model.transform(features).select(
        "customer_id",
        vector_to_array("probability")[1].alias("repeat_probability"),
        F.col("prediction").cast("int").alias("predicted_repeat"),
    )
    scores.write.mode("overwrite").parquet(Paths.uri(paths.gold / "repeat_buyer_scores"))
    spark.stop()


if __name__ == "__main__":
    main()
