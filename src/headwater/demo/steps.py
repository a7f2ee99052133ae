"""The retail pipeline as an ordered list of steps (one script each)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ML_MODULES", "PIPELINE_JOB", "PIPELINE_NAMESPACE", "STEPS", "Step"]

#: Namespace of every job of the demo, and the orchestrator job the runs hang under.
PIPELINE_NAMESPACE = "retail"
PIPELINE_JOB = "retail_pipeline"

#: pyspark.ml imports these; the ML steps run only where they are installed.
ML_MODULES = ("numpy",)


@dataclass(frozen=True)
class Step:
    """One pipeline step: a script in the pipeline directory."""

    name: str
    script: str
    spark: bool = True  # False: plain Python, no SparkSession, no lineage of its own
    needs: tuple[str, ...] = ()  # importable modules the step requires
    realtime: bool = False  # part of the real-time half: runs against the demo's Kafka broker


STEPS: tuple[Step, ...] = (
    Step("generate raw data", "generate.py", spark=False),
    Step("bronze", "bronze.py"),
    Step("silver", "silver.py"),
    Step("gold revenue_daily", "gold_revenue_daily.py"),
    Step("gold customer_ltv (SQL)", "gold_customer_ltv.py"),
    Step("gold product_performance", "gold_product_performance.py"),
    Step("features", "features.py"),
    Step("train model", "train.py", needs=ML_MODULES),
    Step("batch scoring", "score.py", needs=ML_MODULES),
    # The real-time half: order events into Kafka, a stream into a Delta table,
    # batch gold and features on it, and streaming scoring into a scores topic.
    Step("order events -> Kafka", "orders_producer.py", realtime=True),
    Step("stream orders -> Delta", "stream_orders.py", realtime=True),
    Step("live gold and features", "live_features.py", realtime=True),
    Step("streaming scoring -> Kafka", "score_stream.py", needs=ML_MODULES, realtime=True),
)
