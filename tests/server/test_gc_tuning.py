"""The app's start-up tunes the garbage collector for ingestion, once per process."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from headwater.config import Settings
from headwater.server.app import GC_YOUNG_THRESHOLD, create_app, tune_gc
from headwater.store import Store


@pytest.fixture
def default_gc() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def test_app_start_up_raises_the_young_threshold(default_gc: None, store: Store) -> None:
    with TestClient(create_app(Settings(), store)):
        assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD


def test_a_larger_threshold_chosen_by_the_embedder_is_kept(default_gc: None) -> None:
    gc.set_threshold(GC_YOUNG_THRESHOLD * 2)
    tune_gc()
    assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD * 2
