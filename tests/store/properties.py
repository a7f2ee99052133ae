"""What the store's property tests share: an emptied store per example, and their settings.

A property runs many examples on one database (the session's SQLite file or
PostgreSQL database), so each example starts from a store whose tables are all
emptied. The examples are derandomized, so every run (CI's included) tries the
same ones and a failure reproduces.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, settings

from headwater.store import Store
from headwater.store import tables as t
from headwater.store.namespace_rules import NamespaceRules

__all__ = ["emptied_store", "store_property"]


@contextmanager
def emptied_store(url: str, rules: NamespaceRules | None = None) -> Iterator[Store]:
    """The store at ``url`` with every table empty, mapping names by ``rules`` if given."""
    store = Store.open(url)
    try:
        with store.engine.begin() as conn:
            for table in reversed(t.metadata.sorted_tables):
                conn.execute(table.delete())
        if rules is not None:
            store.use_namespace_rules(rules)
        yield store
    finally:
        store.close()


def store_property(max_examples: int) -> settings:
    """Settings for a property over stores: no deadline (a PostgreSQL example takes
    its time), derandomized, and the function-scoped database fixture allowed."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
