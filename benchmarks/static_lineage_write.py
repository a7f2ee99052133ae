"""The write path's cost of static lineage (JobEvents declaring a job's inputs and outputs).

Every batch asks ``store.declared_io`` for the JobEvents among its new events,
and ``store.current_io`` takes the declared datasets into ``job_current_io``
(a ``UNION`` of three selects where two were a ``UNION ALL``). This measures
the bare store path -- ``Store.record`` of parsed events in lots of 500 on a
fresh SQLite file, thread CPU per event -- with that work and with it taken
out (``declared_io.record`` a no-op, the two-select insert), alternating the
order from round to round so both arms see the same load; prints each round's
ratio, the median, and the load average before and after.

    python benchmarks/static_lineage_write.py [--events 6000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa  # noqa: E402
from tests.store.generate import generate  # noqa: E402

from headwater.events import parse_event  # noqa: E402
from headwater.store import Store, current_io, writer  # noqa: E402
from headwater.store import tables as t  # noqa: E402

_WITH_INSERT = current_io._INSERT
_WITHOUT_INSERT = t.job_current_io.insert().from_select(
    ["job_id", "direction", "dataset_id"],
    sa.union_all(
        current_io._latest_run_rows(t.run_inputs, current_io.INPUT),
        current_io._latest_run_rows(t.run_outputs, current_io.OUTPUT),
    ),
)
_RECORD = writer.declared_io.record


def _no_declarations(conn: Any, events: Any) -> None:
    return None


def _cpu_per_event(events: list[dict[str, Any]], with_static: bool) -> float:
    current_io._INSERT = _WITH_INSERT if with_static else _WITHOUT_INSERT
    writer.declared_io.record = _RECORD if with_static else _no_declarations  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(f"sqlite:///{folder}/store.db", migrate=True)
        try:
            start = time.thread_time()
            for i in range(0, len(events), 500):
                store.record([parse_event(dict(e)) for e in events[i : i + 500]])
            return (time.thread_time() - start) / len(events)
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=6_000)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    events = generate(args.events, seed=11)
    print("load average", os.getloadavg())
    cost: dict[bool, list[float]] = {True: [], False: []}
    for r in range(args.rounds):
        for with_static in (False, True) if r % 2 == 0 else (True, False):
            cost[with_static].append(_cpu_per_event(events, with_static))
        print(f"round {r}: with / without {cost[True][r] / cost[False][r]:.3f}")
    without, with_ = statistics.median(cost[False]), statistics.median(cost[True])
    print(
        f"median CPU per event: without {without * 1e6:.0f} us, with {with_ * 1e6:.0f} us, "
        f"ratio {with_ / without:.3f}"
    )
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main()
