"""RDD lineage over py4j: the files an RDD reads, and RDD saves as actions.

An RDD action such as ``saveAsTextFile`` runs no ``QueryExecution``, so the
``QueryExecutionListener`` never hears of it. The OpenLineage listener sees it
as a Spark job and names it after the job's RDD graph. headwater wraps PySpark's
``RDD.saveAsTextFile`` instead (:func:`install_rdd_hooks`): the wrapper notes the
start, runs the save untouched, notes the end (or the exception, which it
re-raises unchanged), and hands both to the agent's worker, which walks the RDD
graph over py4j and emits START and COMPLETE/FAIL.

The job name is the listener's: the application name and the RDD graph's name,
where every RDD is named by ``setName`` or else by its class
(``MapPartitionsRDD`` -> ``map_partitions``), followed by its dependencies'
names unless they already start with its own — so ``sc.parallelize(rows)``
named "list of random words and numbers", mapped and saved as text, becomes
``map_partitions_python_list_of_random_words_and_numbers``.

Only ``saveAsTextFile`` is wrapped: the RDD graph Spark runs for it is known
(two ``MapPartitionsRDD`` over the ``PythonRDD`` that pipelines the Python
functions), so the name can be derived without guessing.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from headwater import naming

__all__ = [
    "RddSave",
    "RddSavePhase",
    "install_rdd_hooks",
    "new_save",
    "rdd_graph_name",
    "rdd_input_paths",
    "save_facts",
]

logger = logging.getLogger(__name__)

#: The listener cuts the dependencies' part of a name at this length.
_MAX_DEPENDENCY_NAME = 100
_MAX_RDDS = 500


def rdd_input_paths(rdd: Any, limit: int = 200) -> list[str]:
    """Files or directories an RDD reads, found by walking its dependencies.

    ``HadoopRDD`` names its input directories in its job conf; a ``FileScanRDD``
    names each file, and the directory holding them is the dataset (as the
    OpenLineage listener reports it).
    """
    paths: list[str] = []
    seen: set[int] = set()
    stack = [rdd]
    while stack and len(seen) < limit:
        current = stack.pop()
        ident = int(current.id())
        if ident in seen:
            continue
        seen.add(ident)
        class_name = str(current.getClass().getName())
        if class_name.endswith("HadoopRDD"):
            conf = current.getJobConf()
            dirs = conf.get("mapreduce.input.fileinputformat.inputdir")
            if dirs:
                paths.extend(str(d) for d in str(dirs).split(","))
        elif class_name.endswith("FileScanRDD"):
            partitions = current.filePartitions()
            for i in range(partitions.size()):
                files = partitions.apply(i).files()
                for j in range(len(files)):
                    file_path = str(files[j].filePath().toString())
                    paths.append(file_path.rsplit("/", 1)[0])
        dependencies = current.dependencies()
        for i in range(dependencies.size()):
            stack.append(dependencies.apply(i).rdd())
    unique: list[str] = []
    for path in paths:
        if path not in unique:
            unique.append(path)
    return unique


def _class_part(simple_class_name: str) -> str:
    """``MapPartitionsRDD`` -> ``map_partitions``; ``PythonRDD`` -> ``python``."""
    return naming.normalize_job_name(re.sub(r"RDD\d*$", "", simple_class_name))


def _combine(name: str, dependency_names: list[str]) -> str:
    """An RDD's name followed by its dependencies', unless they start with it already."""
    if not dependency_names:
        return name
    joined = "_".join(dependency_names)[:_MAX_DEPENDENCY_NAME]
    return joined if joined.startswith(name) else f"{name}_{joined}"


def rdd_graph_name(rdd: Any) -> str:
    """The name of ``rdd`` and the RDDs it depends on, as the listener forms it.

    An RDD keeps its ``setName`` name unless that is a path it reads (a
    ``HadoopRDD`` is named after its input, which would put dates in job names)
    or its parent's name (``sc.textFile`` names the mapped RDD after the file too).
    """
    memo: dict[int, str] = {}
    budget = [_MAX_RDDS]

    def name_of(current: Any, depth: int) -> str:
        ident = int(current.id())
        if ident in memo:
            return memo[ident]
        budget[0] -= 1
        simple = str(current.getClass().getSimpleName())
        given = current.name()
        given = str(given) if given is not None else None
        if given is not None and simple == "HadoopRDD":
            dirs = str(current.getJobConf().get("mapreduce.input.fileinputformat.inputdir") or "")
            if any(given in d for d in dirs.split(",") if d):
                given = None
        if given is not None and simple == "MapPartitionsRDD":
            parent = current.prev().name()
            if parent is not None and str(parent) == given:
                given = None
        own = given if given is not None else _class_part(simple)
        names: list[str] = []
        if depth < 200 and budget[0] > 0:
            dependencies = current.dependencies()
            for i in range(int(dependencies.size())):
                names.append(name_of(dependencies.apply(i).rdd(), depth + 1))
        memo[ident] = _combine(own, names)
        return memo[ident]

    return name_of(rdd, 0)


@dataclass
class RddSave:
    """One ``saveAsTextFile`` call: what the worker needs to describe it."""

    path: str
    #: The JavaRDD the save's PythonRDD pipelines over (PySpark's ``_prev_jrdd``).
    base: Any
    jsc: Any
    jvm: Any
    start_time: float = field(default_factory=time.time)
    end_time: float | None = None
    error: tuple[str, str | None] | None = None
    #: Filled by :func:`save_facts` on the worker: job suffix, inputs, output location.
    facts: dict[str, Any] | None = None
    #: The child run's id, chosen when its START is built.
    run_id: str | None = None


@dataclass(frozen=True)
class RddSavePhase:
    """A work item for the agent's worker: the START or the END of an RDD save."""

    save: RddSave
    phase: str  # "START" or "END"


def save_facts(save: RddSave) -> dict[str, Any]:
    """Job-name suffix, input paths and the qualified output path of a save (py4j)."""
    if save.facts is None:
        base = save.base.rdd()
        # saveAsTextFile runs MapPartitions(MapPartitions(PythonRDD(base))): name that graph.
        python = _combine("python", [rdd_graph_name(base)])
        suffix = _combine("map_partitions", [_combine("map_partitions", [python])])
        target = save.jvm.org.apache.hadoop.fs.Path(save.path)
        qualified = target.getFileSystem(save.jsc.hadoopConfiguration()).makeQualified(target)
        save.facts = {
            "suffix": suffix,
            "inputs": rdd_input_paths(base),
            "output": str(qualified.toString()),
        }
    return save.facts


def _keep(_: int, rows: Any) -> Any:
    return rows


_install_lock = threading.Lock()


def install_rdd_hooks(begin: Callable[[Any, str], Any], end: Callable[[Any, BaseException | None], None]) -> None:
    """Wrap ``pyspark.RDD.saveAsTextFile`` once per process.

    ``begin(rdd, path)`` returns a token (or ``None`` when no agent watches that
    SparkContext) and ``end(token, error)`` receives it back; neither may raise
    into the job, and the save itself runs exactly as PySpark's.
    """
    from pyspark import RDD

    with _install_lock:
        original = RDD.saveAsTextFile
        if getattr(original, "__headwater_wrapped__", False):
            return

        @functools.wraps(original)
        def saveAsTextFile(self: Any, path: str, compressionCodecClass: str | None = None) -> None:  # noqa: N802,N803
            token = None
            try:
                token = begin(self, path)
            except Exception:
                logger.debug("headwater agent: could not note an RDD save", exc_info=True)
            try:
                original(self, path, compressionCodecClass)
            except BaseException as exc:
                if token is not None:
                    end(token, exc)
                raise
            if token is not None:
                end(token, None)

        saveAsTextFile.__headwater_wrapped__ = True  # type: ignore[attr-defined]
        RDD.saveAsTextFile = saveAsTextFile  # type: ignore[method-assign]


def new_save(rdd: Any, path: str) -> RddSave:
    """An :class:`RddSave` for ``rdd.saveAsTextFile(path)`` (Python attributes only, no py4j)."""
    # PySpark pipelines the save's function with rdd's own Python functions into one
    # PythonRDD over this JavaRDD; asking PySpark which one keeps us off its internals.
    base = rdd.mapPartitionsWithIndex(_keep)._prev_jrdd
    return RddSave(path=str(path), base=base, jsc=rdd.ctx._jsc, jvm=rdd.ctx._jvm)
