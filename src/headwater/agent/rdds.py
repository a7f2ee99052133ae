"""RDD lineage over py4j: the files an RDD reads, and RDD saves as actions.

An RDD action such as ``saveAsTextFile`` runs no ``QueryExecution``, so the
``QueryExecutionListener`` never hears of it. The OpenLineage listener sees it
as a Spark job and names it after the job's RDD graph. headwater wraps PySpark's
RDD saves instead (:func:`install_rdd_hooks`: ``saveAsTextFile``,
``saveAsPickleFile``, ``saveAsSequenceFile``, ``saveAsHadoopFile`` and
``saveAsNewAPIHadoopFile``): the wrapper notes the start, runs the save
untouched, notes the end (or the exception, which it re-raises unchanged), and
hands both to the agent's worker, which walks the RDD graph over py4j and emits
START and COMPLETE/FAIL.

The job name is the listener's: the application name and the RDD graph's name,
where every RDD is named by ``setName`` or else by its class
(``MapPartitionsRDD`` -> ``map_partitions``), followed by its dependencies'
names unless they already start with its own — so ``sc.parallelize(rows)``
named "list of random words and numbers", mapped and saved as text, becomes
``map_partitions_python_list_of_random_words_and_numbers``.

The RDD graph Spark runs for each wrapped save is known, so the name is derived
without guessing: two ``MapPartitionsRDD`` (text and pickle files) or three
(sequence and Hadoop files, through ``PythonRDD.saveAs*``) over the RDD the
Python side hands to the JVM — the ``PythonRDD`` that pipelines the Python
functions, or, when PySpark finds the data already pickled the way the save
wants it, the RDD's own JVM RDD (see :func:`new_save`). The ``*Dataset`` saves
(``saveAsHadoopDataset``, ``saveAsNewAPIHadoopDataset``) take a Hadoop
configuration instead of a path and run the same graph; their output is the
directory that configuration names for Hadoop's file output formats
(:func:`conf_output_dir`), and a save whose configuration names none (an output
format that writes to a database, say) is run untouched and not reported.
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
from headwater.agent.py4j.handles import java_context, jvm_view, save_input

__all__ = [
    "CONF_SAVES",
    "RddSave",
    "RddSavePhase",
    "conf_output_dir",
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


#: The wrapped saves and how many MapPartitionsRDD Spark puts over the RDD Python hands it.
SAVE_LAYERS = {
    "saveAsTextFile": 2,
    "saveAsPickleFile": 2,
    "saveAsSequenceFile": 3,
    "saveAsHadoopFile": 3,
    "saveAsNewAPIHadoopFile": 3,
    "saveAsHadoopDataset": 3,
    "saveAsNewAPIHadoopDataset": 3,
}

#: The saves whose first argument is a Hadoop configuration (``conf``), not a path.
CONF_SAVES = frozenset({"saveAsHadoopDataset", "saveAsNewAPIHadoopDataset"})

#: Where Hadoop's file output formats read their output directory: the
#: mapreduce name, then the older mapred one it replaced.
OUTPUT_DIR_KEYS = ("mapreduce.output.fileoutputformat.outputdir", "mapred.output.dir")


def conf_output_dir(conf: Any) -> str | None:
    """The output directory a Hadoop configuration names, or ``None``.

    ``conf`` is the dict a ``*Dataset`` save is given or, since PySpark merges
    that dict over it, the SparkContext's JVM ``Configuration``: a key found in
    neither means an output format that is not a file one.
    """
    get = getattr(conf, "get", None)
    if get is None:
        return None
    for key in OUTPUT_DIR_KEYS:
        value = get(key)
        if value is not None and str(value).strip():
            return str(value)
    return None


@dataclass
class RddSave:
    """One RDD save call: what the worker needs to describe it."""

    path: str
    #: The JavaRDD the save's PythonRDD pipelines over (PySpark's ``_prev_jrdd``), or,
    #: when ``python`` is false, the JavaRDD Python hands to the JVM's save itself.
    base: Any
    jsc: Any
    jvm: Any
    method: str = "saveAsTextFile"
    #: Whether a PythonRDD sits between ``base`` and the save's MapPartitionsRDDs.
    python: bool = True
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
        # e.g. saveAsTextFile runs MapPartitions(MapPartitions(PythonRDD(base))): name that graph.
        suffix = _combine("python", [rdd_graph_name(base)]) if save.python else rdd_graph_name(base)
        for _ in range(SAVE_LAYERS.get(save.method, 2)):
            suffix = _combine("map_partitions", [suffix])
        target = save.jvm.org.apache.hadoop.fs.Path(save.path)
        qualified = target.getFileSystem(save.jsc.hadoopConfiguration()).makeQualified(target)
        save.facts = {
            "suffix": suffix,
            "inputs": rdd_input_paths(base),
            "output": str(qualified.toString()),
        }
    return save.facts


_install_lock = threading.Lock()


def _wrap_save(method: str, original: Callable[..., Any], begin: Callable[..., Any],
               end: Callable[[Any, BaseException | None], None]) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(self: Any, path: str, *args: Any, **kwargs: Any) -> Any:
        token = None
        try:
            token = begin(self, path, method, args, kwargs)
        except Exception:
            logger.debug("headwater agent: could not note an RDD save", exc_info=True)
        try:
            result = original(self, path, *args, **kwargs)
        except BaseException as exc:
            if token is not None:
                end(token, exc)
            raise
        if token is not None:
            end(token, None)
        return result

    save.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return save


def _wrap_conf_save(method: str, original: Callable[..., Any], begin: Callable[..., Any],
                    end: Callable[[Any, BaseException | None], None]) -> Callable[..., Any]:
    """Like :func:`_wrap_save` for a save given ``conf`` (positionally or by name)."""
    def begin_with_conf(rdd: Any, conf: Any, method: str, args: tuple[Any, ...],
                        kwargs: dict[str, Any]) -> Any:
        path = conf_output_dir(conf) or conf_output_dir(java_context(rdd.ctx).hadoopConfiguration())
        if path is None:
            logger.debug("headwater agent: %s names no output directory; not reported", method)
            return None
        return begin(rdd, path, method, args, kwargs)

    by_path = _wrap_save(method, original, begin_with_conf, end)

    @functools.wraps(original)
    def save(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            return by_path(self, *args, **kwargs)
        if "conf" in kwargs:
            # PySpark's conf saves take conf first: passed on positionally, the
            # original still receives exactly the caller's arguments.
            rest = dict(kwargs)
            return by_path(self, rest.pop("conf"), **rest)
        return original(self, **kwargs)  # no conf at all: PySpark's own error

    save.__headwater_wrapped__ = True  # type: ignore[attr-defined]
    return save


def install_rdd_hooks(begin: Callable[..., Any], end: Callable[[Any, BaseException | None], None]) -> None:
    """Wrap PySpark's RDD saves (:data:`SAVE_LAYERS`) once per process.

    ``begin(rdd, path, method, args, kwargs)`` returns a token (or ``None`` when
    no agent watches that SparkContext) and ``end(token, error)`` receives it
    back; neither may raise into the job, and the save itself runs exactly as
    PySpark's, with the caller's arguments.
    """
    from pyspark import RDD

    with _install_lock:
        for method in SAVE_LAYERS:
            original = getattr(RDD, method, None)
            if original is None or getattr(original, "__headwater_wrapped__", False):
                continue
            wrap = _wrap_conf_save if method in CONF_SAVES else _wrap_save
            setattr(RDD, method, wrap(method, original, begin, end))


def new_save(
    rdd: Any,
    path: str,
    method: str = "saveAsTextFile",
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
) -> RddSave:
    """An :class:`RddSave` for ``rdd.<method>(path, ...)`` (Python attributes, at most
    the RDD's own JVM RDD, which the save itself would create a moment later)."""
    jsc, jvm = java_context(rdd.ctx), jvm_view(rdd.ctx)
    save = RddSave(path=str(path), base=None, jsc=jsc, jvm=jvm, method=method)
    save.base, save.python = save_input(rdd, method, args, kwargs or {})
    return save
