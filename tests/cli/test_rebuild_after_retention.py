"""``rebuild --from-raw`` after retention: every table of the rebuilt store equals the pruned
store's but for what deleted events had set, as docs/server.md states it, and the rebuilt
store keeps the retention floor (an old event sent to it is still refused). The nights
carry changing job owners and declarations, an input's changing owners and assertions, and
an owner the API took off, so their histories compare too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.events import parse_event
from headwater.store import Store
from headwater.store.classification import delete_owner, put_owner
from headwater.store.retention import prune
from tests.server.test_retention import KEEP, NOW
from tests.store.dump import dump
from tests.store.ownership_nights import OWNED_JOB, owned_nights

# What a deleted event may have set and a rebuild cannot know: the first-seen time of
# the rows every run touches (docs/server.md, "Rebuild after retention").
FIRST_SEEN = {"namespaces", "sources", "datasets", "jobs", "job_versions"}


def _without_first_seen(tables: dict[str, list[str]]) -> dict[str, list[str]]:
    out = {}
    for name, rows in tables.items():
        if name in FIRST_SEEN:
            rows = sorted(
                json.dumps(
                    {k: v for k, v in json.loads(r).items() if k != "created_at"}, sort_keys=True
                )
                for r in rows
            )
        out[name] = rows
    return out


# From night 11 the input facets in force at the cutoff were sent before a schema change,
# so retention keeps a version whose next kept one has another schema (ownership_nights).
@pytest.mark.parametrize("facets_from", [17, 11])
def test_rebuild_after_retention_differs_only_in_first_seen_times(
    tmp_path: Path, facets_from: int
) -> None:
    url = f"sqlite:///{tmp_path / 'headwater.db'}"
    nights = owned_nights(facets_from)
    with Store.open(url) as store:
        store.record([parse_event(e) for night in nights for e in night])
        put_owner(store.engine, OWNED_JOB, "alice", "user")
        delete_owner(store.engine, OWNED_JOB, "alice", "user")
        put_owner(store.engine, OWNED_JOB, "bob", "user")
        done = prune(store.engine, KEEP, now=NOW, settle=0)
        assert done.runs > 0
        pruned = dump(store)
    histories = (
        "job_ownership_history",
        "job_declaration_history",
        "owner_history",
        "owners",
        "dataset_facet_history",
    )
    assert all(pruned[name] for name in histories)
    # FORCE_COLOR makes rich take stderr for a terminal, where the progress bar shows.
    result = CliRunner().invoke(
        main, ["rebuild", "--from-raw", "--db", url], env={"FORCE_COLOR": "1", "COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    kept = len(pruned["events"])
    assert "rebuilding" in result.stderr and f"{kept}/{kept}" in result.stderr
    assert f"carried over: the retention floor {(NOW - KEEP).isoformat()}Z" in result.output
    [built] = tmp_path.glob("headwater.rebuilt-*.db")
    with Store.open(f"sqlite:///{built}") as rebuilt:
        again = dump(rebuilt)
        # The first-seen times are the only difference, and they do differ here.
        assert again != pruned
        assert _without_first_seen(again) == _without_first_seen(pruned)
        [refused] = rebuilt.record([parse_event(nights[0][0])])
        assert refused.field == "eventTime"
