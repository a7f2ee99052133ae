"""The agent's and the events package's public names: complete, sorted, importable."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

MODULES = [
    "headwater.naming",
    "headwater.events",
    "headwater.events.facets",
    "headwater.events.model",
    "headwater.events.serde",
    "headwater.agent",
    "headwater.agent.actions",
    "headwater.agent.agent_registry",
    "headwater.agent.capture",
    "headwater.agent.columns",
    "headwater.agent.emission",
    "headwater.agent.expressions",
    "headwater.agent.facets",
    "headwater.agent.jvm",
    "headwater.agent.listener",
    "headwater.agent.plan",
    "headwater.agent.py4j",
    "headwater.agent.py4j.chains",
    "headwater.agent.py4j.connection",
    "headwater.agent.py4j.handles",
    "headwater.agent.py4j.proxies",
    "headwater.agent.rdds",
    "headwater.agent.run_model",
    "headwater.agent.session",
    "headwater.agent.session_agent",
    "headwater.agent.stream_events",
    "headwater.agent.streaming",
    "headwater.agent.sources",
    # Every source family module, found rather than listed: a new one is checked too.
    *(
        f"headwater.agent.sources.{info.name}"
        for info in pkgutil.iter_modules(importlib.import_module("headwater.agent.sources").__path__)
    ),
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported == sorted(exported)
    assert [n for n in exported if not hasattr(module, n)] == []


def test_agent_sources_import_neither_the_server_nor_pyspark_at_module_level() -> None:
    # The agent follows the data flow (agent -> events, transport) and imports
    # pyspark lazily, inside attach(), so a client install stays light.
    from pathlib import Path

    import headwater.agent as agent_module

    package = Path(agent_module.__file__).parent
    for path in [*package.rglob("*.py"), package.parent / "events" / "model.py"]:
        text = path.read_text()
        assert "headwater.server" not in text and "headwater.store" not in text, path
        assert "\nimport pyspark" not in text and "\nfrom pyspark" not in text, path
