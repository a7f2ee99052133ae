"""The transport mapping, resolved from the OpenLineage listener's sources.

``spark.openlineage.transport.*`` keys (nested on dots; ``headers.``, ``urlParams.``
and ``properties.`` keep their dotted names), ``OPENLINEAGE__TRANSPORT__*``
variables (``__`` between levels, ``_`` between words: ``AUTH__API_KEY`` is
``auth.apiKey``) and the short ``OPENLINEAGE_URL`` / ``_ENDPOINT`` / ``_API_KEY``
variables. SparkConf wins; when SparkConf and the environment name different
transport types, SparkConf's transport is taken whole. With nothing set the
result is the console transport, as for the listener.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["resolve_transport"]


def _camel(segment: str) -> str:
    head, *tail = segment.lower().split("_")
    return head + "".join(part.capitalize() for part in tail)


def _put(tree: dict[str, Any], path: list[str], value: str) -> None:
    """Set ``value`` at ``path`` in ``tree``, making the levels on the way; a path
    through a level that already holds a value is left out."""
    node = tree
    for part in path[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            return
        node = child
    node[path[-1]] = value


def _env_tree(env: Mapping[str, str]) -> dict[str, Any]:
    """``OPENLINEAGE__TRANSPORT__AUTH__API_KEY=x`` -> ``{"transport": {"auth": {"apiKey": "x"}}}``."""
    tree: dict[str, Any] = {}
    for name, value in env.items():
        if not name.startswith("OPENLINEAGE__") or value == "":
            continue
        path = [_camel(part) for part in name[len("OPENLINEAGE__") :].split("__") if part]
        if not path:
            continue
        _put(tree, path, value)
    return tree


def _spark_transport(spark_conf: Mapping[str, str]) -> dict[str, Any]:
    """Nest ``spark.openlineage.transport.*`` keys; headers/urlParams keep their dotted names."""
    prefix = "spark.openlineage.transport."
    tree: dict[str, Any] = {}
    for key, value in spark_conf.items():
        if not key.startswith(prefix) or value.strip() == "":
            continue
        rest = key[len(prefix) :]
        for flat in ("headers.", "urlParams.", "properties."):
            if rest.startswith(flat):
                path = [flat[:-1], rest[len(flat) :]]
                break
        else:
            path = rest.split(".")
        _put(tree, path, value)
    return tree


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def resolve_transport(spark_conf: Mapping[str, str], env: Mapping[str, str]) -> dict[str, Any]:
    """The transport mapping (always with a ``type``) for a SparkConf and an environment."""
    from_spark = _spark_transport(spark_conf)
    from_env: dict[str, Any] = {}
    if env.get("OPENLINEAGE_URL"):
        from_env = {"type": "http", "url": env["OPENLINEAGE_URL"]}
        if env.get("OPENLINEAGE_ENDPOINT"):
            from_env["endpoint"] = env["OPENLINEAGE_ENDPOINT"]
        if env.get("OPENLINEAGE_API_KEY"):
            from_env["auth"] = {"type": "api_key", "apiKey": env["OPENLINEAGE_API_KEY"]}
    nested_env = _env_tree(env).get("transport")
    if isinstance(nested_env, Mapping):
        # OPENLINEAGE__TRANSPORT__* refine the OPENLINEAGE_URL transport, or replace it
        # when they name another type.
        same_type = nested_env.get("type") in (None, from_env.get("type"))
        from_env = _merge(from_env, nested_env) if same_type else dict(nested_env)
    if from_spark.get("type") and from_env.get("type") and from_spark["type"] != from_env["type"]:
        transport = from_spark  # a different transport in SparkConf replaces the env one whole
    else:
        transport = _merge(from_env, from_spark)
    # The listener's older flat spelling: transport.apiKey means an api_key auth block.
    api_key = transport.pop("apiKey", None)
    if api_key and "auth" not in transport:
        transport["auth"] = {"type": "api_key", "apiKey": api_key}
    if not transport.get("type"):
        transport = {**transport, "type": "http" if transport.get("url") else "console"}
    return transport
