"""``headwater serve`` tunes the garbage collector for ingestion, once per process."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from headwater.server.run import GC_YOUNG_THRESHOLD, app_from_environment, tune_gc


@pytest.fixture
def default_gc() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_a_served_app_raises_the_young_threshold(
        default_gc: None, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEADWATER_DB_URL", f"sqlite:///{tmp_path}/gc.db")
    app_from_environment()
    assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD


def test_a_larger_threshold_chosen_by_the_embedder_is_kept(default_gc: None) -> None:
    gc.set_threshold(GC_YOUNG_THRESHOLD * 2)
    tune_gc()
    assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD * 2
