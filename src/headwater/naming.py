"""Dataset namespaces and names, by the OpenLineage naming table.

A storage location becomes ``(namespace, name)``:

* ``file:/tmp/x`` or ``/tmp/x`` -> ``("file", "/tmp/x")``
* ``s3a://bucket/key`` (also s3n, s3) -> ``("s3://bucket", "key")``
* ``gs://bucket/key`` -> ``("gs://bucket", "key")``
* ``hdfs://host:port/path`` -> ``("hdfs://host:port", "/path")``
* ``abfss://container@account.dfs.core.windows.net/path`` -> namespace up to the host
* anything else ``scheme://authority/path`` -> ``("scheme://authority", "/path")``
* a Kafka bootstrap list ``SASL_SSL://b1:9092,b2:9092`` -> namespace ``kafka://b1:9092``
  (:func:`kafka_namespace`; every producer of Kafka lineage names topics with it)

Partition directories at the end of a written path (``k=v`` and date-like
``2024-01-31`` / ``20240131``) are trimmed so every partition of one table is
one dataset, as the OpenLineage Spark listener does.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = [
    "dataset_from_location",
    "kafka_namespace",
    "normalize_job_name",
    "remove_path_pattern",
    "trim_partition_dirs",
    "trim_path_suffix",
]

_S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
_KEY_VALUE_DIR = re.compile(r"^[^=/]+=[^/]*$")
_DATE_DIR = re.compile(r"^(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}/\d{2}/\d{2})$")


def dataset_from_location(location: str) -> tuple[str, str]:
    """``(namespace, name)`` for a storage URI or an absolute local path."""
    location = location.strip()
    if location.startswith("/"):
        return "file", _clean_path(location)
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        return "file", _clean_path(parts.path or location)
    if scheme in _S3_SCHEMES:
        return f"s3://{parts.netloc}", parts.path.lstrip("/").rstrip("/")
    if scheme in ("gs", "wasbs", "abfs", "abfss", "hdfs") or parts.netloc:
        name = _clean_path(parts.path) if parts.path else "/"
        if scheme in ("gs",):
            name = name.lstrip("/")
        return f"{scheme}://{parts.netloc}", name
    # scheme:opaque (no authority), e.g. "jdbc:..." — keep the text after the scheme.
    return scheme, location[len(scheme) + 1 :]


def kafka_namespace(bootstrap_servers: str | None) -> str | None:
    """``kafka://host:port`` of the first of ``bootstrap_servers`` (a listener
    prefix such as ``SASL_SSL://`` is dropped), ``None`` when none is given."""
    if not bootstrap_servers:
        return None
    first = bootstrap_servers.split(",", 1)[0].strip()
    first = first.split("://", 1)[-1].strip().rstrip("/")
    return f"kafka://{first}" if first else None


def _clean_path(path: str) -> str:
    # Collapse "//" runs and drop a trailing slash (except for the root).
    cleaned = re.sub(r"/{2,}", "/", path)
    if len(cleaned) > 1:
        cleaned = cleaned.rstrip("/")
    return cleaned


def trim_partition_dirs(name: str) -> str:
    """Drop trailing ``k=v`` and date-named directories from a dataset name."""
    parts = name.split("/")
    while len(parts) > 2 and (_KEY_VALUE_DIR.match(parts[-1]) or _DATE_DIR.match(parts[-1])):
        parts.pop()
    return "/".join(parts)


def remove_path_pattern(name: str, pattern: re.Pattern[str] | None) -> str:
    """Apply ``spark.openlineage.dataset.removePath.pattern``: drop its ``remove`` group."""
    if pattern is None:
        return name
    match = pattern.search(name)
    if match is None:
        return name
    try:
        start, end = match.span("remove")
    except IndexError:
        return name
    return name[:start] + name[end:]


def trim_path_suffix(name: str) -> str:
    """The job-name suffix for an output: the last two path elements joined by ``_``."""
    if name.rfind("/") > 0:
        parts = [p for p in name.split("/")]
        if len(parts) >= 2:
            return f"{parts[-2]}_{parts[-1]}"
    return name


def normalize_job_name(text: str) -> str:
    """``InsertIntoHadoopFsRelationCommand`` -> ``insert_into_hadoop_fs_relation_command``.

    Word breaks come from camel case, acronyms and digits; accents are dropped and
    every run of other characters becomes one underscore, matching the job names
    the OpenLineage Spark listener forms.
    """
    import unicodedata

    trimmed = re.sub(r"^\W+", "", text)
    trimmed = re.sub(r"\W+$", "", trimmed)
    decomposed = unicodedata.normalize("NFKD", trimmed)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", plain)
    spaced = re.sub(r"(?<!^)([A-Z])([a-z])", r" \1\2", spaced)
    spaced = re.sub(r"(\d)(?=\D)", r"\1 ", spaced)
    return re.sub(r"[^a-zA-Z0-9]+", "_", spaced.lower())
