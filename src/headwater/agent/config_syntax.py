"""The OpenLineage listener's value syntax: lists, tags, booleans, numbers, parent ids, regexes.

Each parser reads one configuration value the way the listener's Java code reads
it, and never raises: a malformed value is logged and the default returned,
because configuration is read inside the user's Spark job.
"""

from __future__ import annotations

import logging
import re

__all__ = [
    "Tag",
    "java_regex",
    "parse_bool",
    "parse_list",
    "parse_number",
    "parse_tags",
    "split_parent_id",
]

logger = logging.getLogger(__name__)


def parse_list(value: str) -> tuple[str, ...]:
    """Parse the listener's list syntax: ``[a;b]`` (brackets optional), blanks dropped."""
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return tuple(item.strip() for item in text.split(";") if item.strip())


#: A tag as the ``tags`` facets carry it: (key, value, source).
Tag = tuple[str, str, str]


def parse_tags(value: str | None) -> tuple[Tag, ...]:
    """Parse the listener's tag syntax: ``key[:value[:source]]`` items separated by ``;``.

    A bare ``key`` means the value ``true``; the source defaults to ``CONFIG``.
    ``spark;team:sales;tier:gold:SERVICE`` gives three tags.
    """
    tags: list[Tag] = []
    for item in parse_list(value or ""):
        key, _, rest = item.partition(":")
        tag_value, _, source = rest.partition(":")
        if not key.strip():
            logger.warning("tag %r has no key; ignored", item)
            continue
        tags.append((key.strip(), tag_value.strip() or "true", source.strip() or "CONFIG"))
    return tuple(tags)


def parse_bool(value: str | None, default: bool, key: str) -> bool:
    """Java's ``Boolean.parseBoolean``: only ``true`` (any case) is true; blank is ``default``."""
    # We also warn on values that are neither, so a typo such as "ture" does not pass silently.
    if value is None or value.strip() == "":
        return default
    lowered = value.strip().lower()
    if lowered == "true":
        return True
    if lowered != "false":
        logger.warning("%s=%r is not true/false; treating it as false", key, value)
    return False


def parse_number(value: str | None, default: float, key: str, *, minimum: float) -> float:
    """A number of at least ``minimum``; ``default`` when blank, malformed or too small."""
    if value is None or value.strip() == "":
        return default
    try:
        number = float(value)
    except ValueError:
        logger.warning("%s=%r is not a number; using %s", key, value, default)
        return default
    if number < minimum:
        logger.warning("%s=%r is below %s; using %s", key, value, minimum, default)
        return default
    return number


def split_parent_id(value: str | None, variable: str) -> tuple[str | None, str | None, str | None]:
    """Split ``{namespace}/{job_name}/{run_id}``; the job name may itself hold slashes."""
    if not value:
        return None, None, None
    namespace, _, rest = value.partition("/")
    job_name, _, run_id = rest.rpartition("/")
    if not namespace or not job_name or not run_id:
        logger.warning("%s=%r is not {namespace}/{job_name}/{run_id}; ignored", variable, value)
        return None, None, None
    return namespace, job_name, run_id


def java_regex(pattern: str) -> str:
    """Java's named groups ``(?<remove>…)`` (the jar's syntax) as Python's ``(?P<remove>…)``."""
    return re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", pattern)
