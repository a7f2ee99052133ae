"""py4j's and PySpark's private internals are touched only in ``headwater.agent.py4j``.

The import contracts keep ``import py4j`` inside that package; this keeps the
private attributes there too, each of which its docstring lists.
"""

from __future__ import annotations

import re
from pathlib import Path

import headwater.agent
import headwater.agent.py4j

AGENT = Path(headwater.agent.__file__).parent
FENCE = AGENT / "py4j"

_NAMES = (
    "(_jsparkSession|_gateway|_gateway_client|_jsc|_jvm|_jrdd|_jrdd_deserializer|_prev_jrdd"
    "|_methods|_callback_server)"
)
#: What the fence reads: private attributes, as ``.name`` or by ``getattr`` (an
#: object's own ``self._jvm`` is not one), and py4j's and PySpark's internal modules.
PRIVATE = re.compile(
    rf"(?<!self)\.{_NAMES}\b|[\"']{_NAMES}[\"']|java_gateway|OUTPUT_CONVERTER|GATEWAY_SERVER_OBJECT_ID"
)


def test_private_internals_are_touched_only_inside_the_fence() -> None:
    found = [
        f"{path.relative_to(AGENT)}:{number}: {line.strip()}"
        for path in sorted(AGENT.rglob("*.py"))
        if FENCE not in path.parents
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert found == []


def test_the_fence_names_each_private_attribute_it_reads() -> None:
    listed = headwater.agent.py4j.__doc__ or ""
    used = {
        match.group(1) or match.group(2) or match.group(0)
        for path in FENCE.glob("*.py")
        if path.name != "__init__.py"
        for match in PRIVATE.finditer(path.read_text())
    }
    assert used and {name for name in used if name not in listed} == set()
