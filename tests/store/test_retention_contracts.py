"""Retention and schema contracts, on both databases: when retention deletes the version a
contract row compares against, or the run whose declaration it holds, while an older one
stays, the row is the one a rebuild from the raw events left derives (against the older
version, or with the older declaration), in the deleting transaction, without notifying
the drift webhook (the data did not change)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from headwater.store import Store, raw_log
from headwater.store.retention import prune
from tests.server.test_retention import KEEP, NOW
from tests.store.builders import dataset, facet, record, run_event
from tests.store.dump import dump
from tests.store.properties import emptied_store
from tests.store.test_retention_drift import _clear_outbox, _queued

A = [("id", "long")]
B = [("id", "long"), ("amount", "double")]
SHARED = ("file", "/shared")


def _run_id(number: int) -> str:
    return str(uuid.UUID(int=number))


def _run(
    job: str,
    days_ago: float,
    number: int,
    *,
    writes: list[tuple[str, str]] | None = None,
    declares: list[tuple[str, str]] | None = None,
    reads: bool = False,
    side_output: bool = False,
) -> list[dict[str, Any]]:
    """A run's START and COMPLETE: writing /shared (with schema ``writes``, or none), or
    reading it (declaring ``declares``, if given), and writing /side-<job> if asked."""
    at = NOW - timedelta(days=days_ago)
    inputs, outputs = [], []
    if reads:
        read = dataset(*SHARED)
        if declares is not None:
            declared = [{"name": n, "type": ty} for n, ty in declares]
            read["inputFacets"] = {"declaredSchema": facet(fields=declared)}
        inputs.append(read)
    else:
        outputs.append(dataset(*SHARED, writes))
    if side_output:
        outputs.append(dataset("file", f"/side-{job}", A))
    return [
        run_event(
            kind,
            (at + timedelta(minutes=m)).isoformat() + "Z",
            _run_id(number),
            job=job,
            inputs=inputs,
            outputs=outputs,
        )
        for kind, m in (("START", 0), ("COMPLETE", 5))
    ]


def _written(days_ago: float) -> str:
    """A version's ``updated_at`` as dumped: its run's COMPLETE."""
    return str(NOW - timedelta(days=days_ago) + timedelta(minutes=5))


def _contracts(store: Store) -> list[dict[str, Any]]:
    return [json.loads(row) for row in dump(store)["schema_contracts"]]


def _pruned_and_rebuilt(store: Store, db_url: str, runs: int) -> tuple[list[str], list[str]]:
    """The contract rows after retention deletes ``runs`` runs, and those a rebuild from
    the raw events left derives (the same database, emptied and given them again)."""
    _clear_outbox(store)
    assert prune(store.engine, KEEP, now=NOW, settle=0).runs == runs
    assert _queued(store) == []
    pruned = dump(store)["schema_contracts"]
    events = [json.loads(payload) for _, payload in raw_log.payloads(store.engine)]
    with emptied_store(db_url) as rebuilt:
        record(rebuilt, events)
        return pruned, dump(rebuilt)["schema_contracts"]


def test_deleting_the_latest_version_with_a_schema_compares_with_the_one_before(
    store: Store, db_url: str
) -> None:
    # /shared: A written 100 days ago by a's only run (kept), B 99 days ago by b
    # (deleted), then versions without a schema 98 days ago (in force at the cutoff)
    # and a day ago (current). The reader declares B, so against A it differs.
    record(
        store,
        [
            *_run("a", 100, 1, writes=A),
            *_run("b", 99, 2, writes=B),
            *_run("b", 98, 3),
            *_run("b", 1, 4),
            *_run("reader", 2, 5, reads=True, declares=B),
        ],
    )
    [before] = _contracts(store)
    assert (before["written_at"], before["differs"]) == (_written(99), False)
    pruned, rebuilt = _pruned_and_rebuilt(store, db_url, runs=1)
    assert pruned == rebuilt
    [after] = [json.loads(row) for row in pruned]
    assert (after["written_at"], after["differs"], after["breaking"]) == (_written(100), True, True)


def test_deleting_the_latest_declaring_run_keeps_the_declaration_before_it(
    store: Store, db_url: str
) -> None:
    # The reader declares A 100 days ago from a run kept for the only version of the
    # dataset it writes, B 99 days ago (deleted), and nothing 98 days ago (its latest
    # run before the cutoff, kept). Against the written A, A matches and B does not.
    # The lapsed job's only declaring run goes too, and with it the job's contract.
    record(
        store,
        [
            *_run("writer", 1, 1, writes=A),
            *_run("reader", 100, 2, reads=True, declares=B, side_output=True),
            *_run("reader", 99, 3, reads=True, declares=A),
            *_run("reader", 98, 4, reads=True),
            *_run("lapsed", 99, 5, reads=True, declares=A),
            *_run("lapsed", 98, 6, reads=True),
        ],
    )
    before = {row["job_id"][1]: row["run_uuid"] for row in _contracts(store)}
    assert before == {"reader": _run_id(3), "lapsed": _run_id(5)}
    pruned, rebuilt = _pruned_and_rebuilt(store, db_url, runs=2)
    assert pruned == rebuilt
    [after] = [json.loads(row) for row in pruned]
    assert after["job_id"][1] == "reader"
    assert (after["run_uuid"], after["differs"], after["breaking"]) == (_run_id(2), True, True)
