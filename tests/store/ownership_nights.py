"""The retention tests' nightly pipeline with owners and declarations that change over
time: ``clean.orders`` sends its ``ownership`` facet only every 25th night (a new team
each time), and a dashboard's JobEvents declare what it reads on nights 10, 40 and 100.

With the 90-day window the owners in force at the cutoff were sent on night 50, whose
run nothing else keeps; the declaration in force then was made on night 40.

``agg.revenue``'s run reading ``clean/orders`` sends owners and assertions on that input
(dataset facets, which make no version) every 25th night from night 17: those in force
at the cutoff were sent on night 42, whose run nothing else keeps. Sent from night 11
instead (``facets_from=11``), those in force at the cutoff were sent on night 36, before
the schema change of night 40: retention keeps that run's ``gold/revenue`` version and
deletes those of nights 37 to 59, so the drift to the version in force at the cutoff
(night 60's) is between night 36's version and it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.server.test_retention import DAYS, NOW, _night
from tests.store.builders import PRODUCER, facet

JOB_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
OWNED_JOB, DASHBOARD = "job:etl:clean.orders", "job:bi:orders_dashboard"
DECLARED = {
    10: ["/lake/gold/revenue"],
    40: ["/lake/clean/orders", "/lake/gold/revenue"],
    100: ["/lake/clean/orders"],
}


def night_time(day: int) -> datetime:
    """When night ``day``'s application starts."""
    return NOW - timedelta(days=DAYS - day, hours=3)


def _declaration(day: int) -> dict[str, Any]:
    return {
        "eventTime": (night_time(day) + timedelta(hours=2)).isoformat() + "Z",
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT,
        "job": {"namespace": "bi", "name": "orders_dashboard", "facets": {}},
        "inputs": [{"namespace": "file", "name": name} for name in DECLARED[day]],
    }


def owned_night(day: int, facets_from: int = 17) -> list[dict[str, Any]]:
    events = _night(day)
    if day % 25 == 0:
        for event in events:
            if event["job"]["name"] == "clean.orders" and event["eventType"] == "COMPLETE":
                owners = [{"name": f"team:{day // 25}", "type": "team"}]
                event["job"]["facets"]["ownership"] = facet(owners=owners)
    if day % 25 == facets_from % 25:
        for event in events:
            if event["job"]["name"] == "agg.revenue" and event["eventType"] == "COMPLETE":
                read = {**event["inputs"][0], "facets": dict(event["inputs"][0]["facets"])}
                read["facets"]["ownership"] = facet(
                    owners=[{"name": f"readers:{day // 25}", "type": "team"}]
                )
                passed = day // 25 % 2 == 0
                read["facets"]["dataQualityAssertions"] = facet(
                    assertions=[{"assertion": "not_null", "column": "id", "success": passed}]
                )
                event["inputs"] = [read]
    if day in DECLARED:
        events.append(_declaration(day))
    return events


def owned_nights(facets_from: int = 17) -> list[list[dict[str, Any]]]:
    return [owned_night(day, facets_from) for day in range(DAYS)]
