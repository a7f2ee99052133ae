"""The OpenLineage listener's ``openlineage.yml``, read as ``spark.openlineage.*`` keys.

A user switching from the OpenLineage jar may keep its settings in that file;
:func:`read_openlineage_yml` turns its tree into the flat keys SparkConf would
carry, so the configuration reads both alike. Never raises: a missing, unreadable
or malformed file is logged and ignored.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["read_openlineage_yml"]

logger = logging.getLogger(__name__)

_OL = "spark.openlineage."


def _flatten(tree: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """A YAML tree as ``spark.openlineage.*`` keys: lists as ``[a;b]``, booleans lower-case."""
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = prefix + str(key)
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        elif isinstance(value, list):
            flat[name] = "[" + ";".join(str(item) for item in value) + "]"
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        elif value is not None:
            flat[name] = str(value)
    return flat


def read_openlineage_yml(env: Mapping[str, str]) -> dict[str, str]:
    """The listener's ``openlineage.yml`` as ``spark.openlineage.*`` keys, if there is one.

    Looked for where the listener looks: ``OPENLINEAGE_CONFIG``, then ``./openlineage.yml``,
    then ``~/.openlineage/openlineage.yml``.
    """
    named = env.get("OPENLINEAGE_CONFIG")
    candidates = (
        [named]
        if named
        else [
            "openlineage.yml",
            os.path.join(os.path.expanduser("~"), ".openlineage", "openlineage.yml"),
        ]
    )
    path = next((c for c in candidates if os.path.isfile(c)), None)
    if path is None:
        if named:
            logger.warning("OPENLINEAGE_CONFIG=%r is not a file; ignored", named)
        return {}
    try:
        import yaml  # optional: only needed by users who keep an openlineage.yml
    except ImportError:
        logger.warning("%s found but PyYAML is not installed; ignored (pip install pyyaml)", path)
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            tree = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        logger.warning("cannot read %s (%s); ignored", path, exc)
        return {}
    if not isinstance(tree, Mapping):
        logger.warning("%s is not a YAML mapping; ignored", path)
        return {}
    return _flatten(tree, _OL)
