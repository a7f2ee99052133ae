"""RDD saves (no QueryExecution) as actions: saveAsTextFile on a real SparkSession."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark


def test_save_as_text_file_is_a_child_run_named_after_its_rdd_graph(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    rdd = spark.sparkContext.parallelize([("ann", 31), ("bob", 42)])
    rdd.setName("people by age")
    rdd.map(lambda row: f"{row[0]},{row[1]}").saveAsTextFile(str(tmp_path / "people") + "/")
    events = [e for e in lineage.action_events() if e["job"]["facets"]["jobType"]["jobType"] == "RDD_JOB"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert {e["run"]["runId"] for e in events} == {events[0]["run"]["runId"]}
    app = lineage.agent.model.app_name
    assert events[0]["job"]["name"] == f"{app}.map_partitions_python_people_by_age"
    for event in events:
        assert event["inputs"] == []  # parallelize reads no dataset
        assert [(o["namespace"], o["name"]) for o in event["outputs"]] == [("file", str(tmp_path / "people"))]
        assert event["run"]["facets"]["parent"]["run"]["runId"] == lineage.agent.model.app_run_id
    # The written files are really there: the wrapper ran PySpark's own save.
    assert sorted(p.name for p in (tmp_path / "people").glob("part-*"))


def test_text_file_inputs_and_a_failed_save(spark: Any, lineage: Any, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    out = tmp_path / "copy"
    spark.sparkContext.textFile(str(source)).map(str.upper).saveAsTextFile(str(out))
    with pytest.raises(Exception, match="already exists"):
        # The exception reaches the job unchanged; the run ends in FAIL.
        spark.sparkContext.textFile(str(source)).saveAsTextFile(str(out))
    events = [e for e in lineage.action_events() if e["job"]["facets"]["jobType"]["jobType"] == "RDD_JOB"]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "START", "FAIL"]
    app = lineage.agent.model.app_name
    # textFile names both its RDDs after the file; the listener falls back to class names.
    assert events[0]["job"]["name"] == f"{app}.map_partitions_python_map_partitions_hadoop"
    assert [(i["namespace"], i["name"]) for i in events[1]["inputs"]] == [("file", str(source))]
    assert "already exists" in events[3]["run"]["facets"]["errorMessage"]["message"]


def _rdd_runs(lineage: Any) -> list[dict[str, Any]]:
    return [e for e in lineage.action_events() if e["job"]["facets"]["jobType"]["jobType"] == "RDD_JOB"]


def test_pickle_sequence_and_hadoop_saves_are_child_runs(spark: Any, lineage: Any, tmp_path: Path) -> None:
    sc = spark.sparkContext
    source = tmp_path / "words.txt"
    source.write_text("a 1\nb 2\n")
    pairs = sc.textFile(str(source)).map(lambda line: tuple(line.split(" ")))
    pairs.saveAsPickleFile(str(tmp_path / "pickled"))
    pairs.saveAsSequenceFile(str(tmp_path / "sequence"))
    pairs.saveAsHadoopFile(str(tmp_path / "hadoop"), "org.apache.hadoop.mapred.TextOutputFormat")
    pairs.saveAsNewAPIHadoopFile(
        str(tmp_path / "new_api"), "org.apache.hadoop.mapreduce.lib.output.SequenceFileOutputFormat",
        "org.apache.hadoop.io.Text", "org.apache.hadoop.io.Text",
    )
    events = _rdd_runs(lineage)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"] * 4
    app = lineage.agent.model.app_name
    outputs = []
    for start, end in zip(events[::2], events[1::2], strict=True):
        assert start["run"]["runId"] == end["run"]["runId"]
        # The Python functions run in one PythonRDD over the text file's two RDDs.
        assert end["job"]["name"] == f"{app}.map_partitions_python_map_partitions_hadoop"
        assert [(i["namespace"], i["name"]) for i in end["inputs"]] == [("file", str(source))]
        outputs.append([(o["namespace"], o["name"]) for o in end["outputs"]])
    assert outputs == [[("file", str(tmp_path / name))] for name in ("pickled", "sequence", "hadoop", "new_api")]
    # Each save really ran, with the caller's arguments.
    assert sorted(sc.pickleFile(str(tmp_path / "pickled")).collect()) == [("a", "1"), ("b", "2")]
    assert sorted(sc.sequenceFile(str(tmp_path / "sequence")).collect()) == [("a", "1"), ("b", "2")]
    lines = [line for p in (tmp_path / "hadoop").glob("part-*") for line in p.read_text().splitlines()]
    assert sorted(lines) == ["a\t1", "b\t2"]
    assert sorted(sc.sequenceFile(str(tmp_path / "new_api")).collect()) == [("a", "1"), ("b", "2")]


def test_a_save_over_data_already_pickled_names_no_python_step(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    sc = spark.sparkContext
    sc.parallelize([(1, "x"), (2, "y")]).saveAsPickleFile(str(tmp_path / "p"), 0)
    # pickleFile gives an RDD already in the serializer saveAsSequenceFile wants: PySpark
    # hands its own JVM RDD to the save, with no PythonRDD in between.
    sc.pickleFile(str(tmp_path / "p")).saveAsSequenceFile(str(tmp_path / "s"))
    with pytest.raises(Exception, match="already exists"):
        sc.pickleFile(str(tmp_path / "p")).saveAsSequenceFile(str(tmp_path / "s"))
    events = _rdd_runs(lineage)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "START", "COMPLETE", "START", "FAIL"]
    app = lineage.agent.model.app_name
    assert events[1]["job"]["name"] == f"{app}.map_partitions_python_parallel_collection"
    assert events[3]["job"]["name"] == f"{app}.map_partitions_hadoop"
    assert [(i["namespace"], i["name"]) for i in events[3]["inputs"]] == [("file", str(tmp_path / "p"))]
    assert "already exists" in events[5]["run"]["facets"]["errorMessage"]["message"]
    assert sorted(sc.sequenceFile(str(tmp_path / "s")).collect()) == [(1, "x"), (2, "y")]


def test_hadoop_dataset_saves_report_the_directory_their_conf_names(
    spark: Any, lineage: Any, tmp_path: Path
) -> None:
    sc = spark.sparkContext
    source = tmp_path / "words.txt"
    source.write_text("a 1\nb 2\n")
    pairs = sc.textFile(str(source)).map(lambda line: tuple(line.split(" ")))
    text = {"mapreduce.job.output.key.class": "org.apache.hadoop.io.Text",
            "mapreduce.job.output.value.class": "org.apache.hadoop.io.Text"}
    # As PySpark's own examples call them: conf by name, the new API's directory key ...
    pairs.saveAsNewAPIHadoopDataset(conf={
        **text, "mapreduce.job.outputformat.class":
            "org.apache.hadoop.mapreduce.lib.output.TextOutputFormat",
        "mapreduce.output.fileoutputformat.outputdir": str(tmp_path / "new_api")})
    # ... and positionally, with the old API's format and directory keys.
    pairs.saveAsHadoopDataset({
        **text, "mapred.output.format.class": "org.apache.hadoop.mapred.TextOutputFormat",
        "mapred.output.dir": str(tmp_path / "old_api")})
    # An output format that writes no files names no directory: run, not reported.
    pairs.saveAsNewAPIHadoopDataset({
        **text, "mapreduce.job.outputformat.class":
            "org.apache.hadoop.mapreduce.lib.output.NullOutputFormat"})
    with pytest.raises(Exception, match="already exists"):
        pairs.saveAsNewAPIHadoopDataset(conf={
            **text, "mapreduce.job.outputformat.class":
                "org.apache.hadoop.mapreduce.lib.output.TextOutputFormat",
            "mapreduce.output.fileoutputformat.outputdir": str(tmp_path / "new_api")})
    events = _rdd_runs(lineage)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "START", "COMPLETE",
                                                "START", "FAIL"]
    app = lineage.agent.model.app_name
    for event in events:
        # The same RDD graph as saveAsHadoopFile's (PythonRDD.saveAs*).
        assert event["job"]["name"] == f"{app}.map_partitions_python_map_partitions_hadoop"
    assert [(i["namespace"], i["name"]) for i in events[1]["inputs"]] == [("file", str(source))]
    assert [[(o["namespace"], o["name"]) for o in e["outputs"]] for e in events[1::2]] == [
        [("file", str(tmp_path / "new_api"))], [("file", str(tmp_path / "old_api"))],
        [("file", str(tmp_path / "new_api"))]]
    assert "already exists" in events[5]["run"]["facets"]["errorMessage"]["message"]
    for name in ("new_api", "old_api"):
        lines = [line for p in (tmp_path / name).glob("part-*") for line in p.read_text().splitlines()]
        assert sorted(lines) == ["a\t1", "b\t2"]
