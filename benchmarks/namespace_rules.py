"""What the namespace rules cost on ingest: ``headwater serve`` and the bare store path,
without rules and with a rules file that maps every dataset name, interleaved.

Events are :mod:`benchmarks.ingest`'s (~3 KB RunEvents, START/COMPLETE pairs over
50 chained jobs, schema and column-lineage facets) with names every rule has
work on: inputs are Kafka topics under a bootstrap list of one cluster,
outputs ``s3a://`` paths with a trailing slash carrying a Hive-table symlink,
column lineage naming the topics. With the rules every name maps (Kafka
cluster, trailing slash; s3a -> s3 happens at parse time either way) and each
raw name becomes an alias row. Each name maps one to one, so both arms store
the same number of datasets: the ratio is the rules' own cost, not the
smaller graph they give when producers spell one dataset several ways
(``--spellings 3`` measures that case).

Each round runs every arm, in an order that turns from round to round, on fresh
SQLite files:

* served: ``headwater serve`` (with ``HEADWATER_NAMESPACE_RULES`` or without),
  500-event batches from 2 clients, then single events from 4 clients; the
  server process's CPU per event;
* bare: ``Store.record`` of parsed events in lots of 500 in a fresh interpreter,
  thread CPU per event.

Prints each round's figures, each arm's ratio to "none" per round and its
median, and the load average before and after. Targets: rules <= 1.05, and
none against ``--before`` within the noise.

    python benchmarks/namespace_rules.py [--batches 12] [--singles 600] [--rounds 4]
        [--spellings 1] [--before REF] [--at REF]

``--before REF`` adds a third arm: the code at git ``REF`` (e.g. the commit
before the rules existed) with no rules, so "no rules" is also compared with
no rules feature at all.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.ingest import (  # noqa: E402
    BATCH,
    SINGLE,
    drive,
    headwater_serve,
    iter_events,
    server_cpu,
)

from headwater.events import parse_event  # noqa: E402
from headwater.store import Store  # noqa: E402

RULES = """
[s3]
aliases = true
[paths]
trim_trailing_slash = true
[[kafka.clusters]]
name = "orders-cluster"
brokers = ["b1.example:9092", "b2.example:9092", "b3.example:9092"]
[[rename]]
namespace = "legacy"
to_namespace = "file"
[symlinks]
resolve = true
"""
SPELLINGS = ("kafka://b2.example:9092,b1.example:9092", "kafka://b1.example:9092",
             "kafka://SASL_SSL://B3.example:9092")


def events(count: int, spellings: int) -> list[dict[str, Any]]:
    """``count`` benchmark events renamed so that every dataset name has a rule to apply,
    topics spelled in ``spellings`` ways."""
    out = []
    for i, event in enumerate(islice(iter_events("rules", "v7"), count)):
        event = copy.deepcopy(event)
        spelled = SPELLINGS[i % spellings]
        for item in event["inputs"]:
            item["namespace"], item["name"] = spelled, item["name"].strip("/").replace("/", ".")
        for item in event["outputs"]:
            table = item["name"].strip("/").replace("/", ".")
            item["namespace"], item["name"] = "s3a://lake", item["name"].lstrip("/") + "/"
            item["facets"]["symlinks"] = {"identifiers": [
                {"namespace": "hive://metastore:9083", "name": table, "type": "TABLE"}]}
            lineage = item["facets"].get("columnLineage")
            if lineage:
                for spec in lineage["fields"].values():
                    for source in spec["inputFields"]:
                        source["namespace"] = spelled
                        source["name"] = source["name"].strip("/").replace("/", ".")
        out.append(event)
    return out


def served(batches: list[bytes], singles: list[bytes], events_count: int, url: str,
           rules_file: str | None, source: str | None) -> float:
    """Server CPU microseconds per event (``source``: another tree's src/ to serve from)."""
    saved = {k: os.environ.get(k) for k in ("HEADWATER_NAMESPACE_RULES", "PYTHONPATH")}
    os.environ.pop("HEADWATER_NAMESPACE_RULES", None)
    if rules_file is not None:
        os.environ["HEADWATER_NAMESPACE_RULES"] = rules_file
    if source is not None:
        os.environ["PYTHONPATH"] = source
    try:
        with headwater_serve(url, 1, 64 * 1024 * 1024) as (port, pid):
            before = server_cpu(pid)
            _, batch_answers = asyncio.run(drive(port, BATCH, batches, 2))
            _, single_answers = asyncio.run(drive(port, SINGLE, singles, 4))
            spent = server_cpu(pid) - before
        for answers in (batch_answers, single_answers):
            if answers.problems():
                raise RuntimeError(answers.problems())
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value
    return spent / events_count * 1e6


def bare_once(events_file: str, url: str, with_rules: bool) -> float:
    """``Store.record`` thread CPU microseconds per event, in this process."""
    raw = json.loads(Path(events_file).read_text())
    store = Store.open(url)
    try:
        if with_rules:
            from headwater.store.namespace_rules import parse_rules

            store.use_namespace_rules(parse_rules(RULES))
        parsed = [parse_event(e) for e in raw]
        started = time.thread_time()
        for i in range(0, len(parsed), 500):
            store.record(parsed[i : i + 500])
        spent = time.thread_time() - started
    finally:
        store.close()
    return spent / len(raw) * 1e6


def bare(events_file: str, url: str, with_rules: bool, source: str | None) -> float:
    """:func:`bare_once` in a fresh interpreter (on ``source``'s code when given)."""
    env = dict(os.environ)
    env.pop("HEADWATER_NAMESPACE_RULES", None)
    if source is not None:
        env["PYTHONPATH"] = source
    command = [sys.executable, __file__, "--bare-once", events_file, url]
    if with_rules:
        command.append("--with-rules")
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _extract(ref: str, into: Path) -> str:
    """The ``src`` folder of git ``ref``, written under ``into``."""
    into.mkdir()
    archive = subprocess.run(["git", "archive", ref, "src"], check=True, capture_output=True,
                             cwd=Path(__file__).parents[1]).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return str(into / "src")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=12, help="500-event batches (12)")
    parser.add_argument("--singles", type=int, default=600, help="single events (600)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--spellings", type=int, choices=(1, 2, 3), default=1,
                        help="bootstrap spellings of the topics (1: names map one to one)")
    parser.add_argument("--before", metavar="REF",
                        help="also measure the code at git REF (no rules), e.g. the commit "
                        "before the namespace rules")
    parser.add_argument("--at", metavar="REF",
                        help="measure the code at git REF for the none and rules arms instead "
                        "of the working tree (which others may be editing)")
    parser.add_argument("--bare-once", nargs=2, metavar=("EVENTS", "URL"), help=argparse.SUPPRESS)
    parser.add_argument("--with-rules", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_once:
        print(bare_once(*args.bare_once, args.with_rules))
        return
    raw = events(args.batches * 500 + args.singles, args.spellings)
    batch_events, single_events = raw[: args.batches * 500], raw[args.batches * 500 :]
    batches = [json.dumps(batch_events[i : i + 500]).encode()
               for i in range(0, len(batch_events), 500)]
    singles = [json.dumps(e).encode() for e in single_events]
    print(f"load before: {os.getloadavg()}", flush=True)
    arms = ["none", "rules"] + (["before"] if args.before else [])
    per_event: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        rules_file = str(Path(folder) / "rules.toml")
        Path(rules_file).write_text(RULES)
        events_file = str(Path(folder) / "events.json")
        Path(events_file).write_text(json.dumps(batch_events))
        source = _extract(args.before, Path(folder) / "before") if args.before else None
        this = _extract(args.at, Path(folder) / "at") if args.at else None
        for round_no in range(args.rounds):
            order = arms[round_no % len(arms):] + arms[: round_no % len(arms)]
            if round_no % 2:
                order.reverse()
            for arm in order:
                tag = f"{round_no}-{arm}"
                code = source if arm == "before" else this
                with_rules = arm == "rules"
                figures = (
                    served(batches, singles, len(raw), f"sqlite:///{folder}/served-{tag}.db",
                           rules_file if with_rules else None, code),
                    bare(events_file, f"sqlite:///{folder}/bare-{tag}.db", with_rules, code),
                )
                for path, value in zip(("served", "bare"), figures, strict=True):
                    per_event.setdefault((path, arm), []).append(value)
                print(f"round {round_no + 1} {arm:6}: served {figures[0]:5.0f} us/event, "
                      f"bare {figures[1]:5.0f} us/event", flush=True)
    for path in ("served", "bare"):
        base = per_event[(path, "none")]
        for arm in arms[1:]:
            ratios = [a / b for a, b in zip(per_event[(path, arm)], base, strict=True)]
            print(f"{path}: {arm}/none per round "
                  + " ".join(f"{r:.3f}" for r in ratios)
                  + f"; median {statistics.median(ratios):.3f}")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
