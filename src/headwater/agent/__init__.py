"""headwater's PySpark agent: OpenLineage events from Spark's own plans.

>>> agent = headwater.agent.attach(spark)   # doctest: +SKIP
>>> ...                                     # run the job
>>> agent.close(timeout=5.0)                # or let interpreter exit do it

:func:`attach` is idempotent per SparkSession and never raises: on any problem
it logs and returns a disabled :class:`Agent`. The agent registers a py4j
``QueryExecutionListener`` (:mod:`.listener`), emits the application run's
START at once and its COMPLETE at :meth:`Agent.close`, ``spark.stop()`` or
interpreter exit (FAIL when the interpreter exits on an uncaught exception),
and one child run per action; a Structured Streaming query run is one child run
of its own (:mod:`.streaming`). :class:`Agent` lives in :mod:`.session_agent`;
:mod:`.agent_registry` keeps the agents attached in this process, one per session.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from headwater.agent.agent_registry import last_attached, registry, registry_lock
from headwater.agent.py4j.handles import java_session
from headwater.agent.session_agent import Agent

__all__ = ["Agent", "attach", "stats"]

logger = logging.getLogger(__name__)


def attach(
    spark: Any,
    *,
    config: Any = None,
    emitter: Any = None,
    env: Mapping[str, str] | None = None,
) -> Agent:
    """Attach the agent to ``spark`` (idempotent per SparkSession); never raises.

    ``config`` (an ``AgentConfig``) defaults to the session's ``spark.openlineage.*``
    keys and the ``OPENLINEAGE_*`` environment; ``emitter`` defaults to the one
    that configuration asks for.
    """
    try:
        key = int(java_session(spark).hashCode())
    except Exception as exc:
        logger.warning("headwater agent: not a usable SparkSession (%r); lineage is off", exc)
        return Agent()
    with registry_lock:
        existing = registry.get(key)
        if existing is not None:
            return existing
        agent = Agent()
        agent._key = key
        registry[key] = agent
        last_attached[:] = [agent]
    try:
        if config is None:
            from headwater.agent.config import AgentConfig

            conf = dict(spark.sparkContext.getConf().getAll())
            config = AgentConfig.from_sources(conf, os.environ if env is None else env)
        if getattr(config, "disabled", False):
            logger.info("headwater agent disabled by configuration")
            return agent
        if emitter is None:
            from headwater.agent.emitter import build_emitter

            emitter = build_emitter(config)
        agent._start(spark, config, emitter)
    except Exception as exc:
        logger.warning("headwater agent: attach failed, lineage is off: %r", exc, exc_info=exc)
        agent.enabled = False
        if agent._listener is not None:
            agent._listener.active = False
    return agent


def stats(spark: Any = None) -> dict[str, Any]:
    """The emission figures of the agent attached to ``spark`` (default: the one attached last).

    Counters (``queued``, ``sent``, ``retried``, ``spooled``, ``replayed``,
    ``rejected``, ``dropped``) and timings in milliseconds (``sendMs``,
    ``captureMs``, ``buildMs``: ``count``, ``p50``, ``p95``, ``max``); all zero
    when no agent is attached. Never raises.
    """
    try:
        agent: Agent | None = None
        if spark is not None:
            key = int(java_session(spark).hashCode())
            with registry_lock:
                agent = registry.get(key)
            if agent is None:
                agent = next((a for a in last_attached if a._key == key), None)
        elif last_attached:
            agent = last_attached[0]
        return (agent or Agent()).stats()
    except Exception as exc:
        logger.debug("headwater agent: no figures: %r", exc)
        return Agent().stats()
