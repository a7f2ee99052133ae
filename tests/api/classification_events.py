"""A small pipeline for classification tests: PII on ``/raw/customers.email`` copied,
hashed and dropped by later jobs, with owners from ``ownership`` facets.

::

    ingest  -> /raw/customers (email tagged PII in its schema; dataset owner team:crm)
    silver  -> /silver/customers: email IDENTITY, email_hash HASH (masking), id IDENTITY
    gold    -> /gold/contacts: contact TRANSFORMATION of silver email (run 1, 00:00:20);
               its run 2 (00:00:40) makes contact from silver name only
"""

from __future__ import annotations

from typing import Any

from tests.store.builders import dataset, facet, run_event

RAW, SILVER, GOLD = "/raw/customers", "/silver/customers", "/gold/contacts"
RAW_EMAIL = f"datasetField:file:{RAW}:email"
SILVER_EMAIL = f"datasetField:file:{SILVER}:email"
SILVER_HASH = f"datasetField:file:{SILVER}:email_hash"
GOLD_CONTACT = f"datasetField:file:{GOLD}:contact"


def run_id(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


def edge(name: str, field: str, subtype: str = "IDENTITY", masking: bool = False,
         kind: str = "DIRECT") -> dict[str, Any]:
    transformation: dict[str, Any] = {"type": kind, "subtype": subtype}
    if masking:
        transformation["masking"] = True
    return {"namespace": "file", "name": name, "field": field,
            "transformations": [transformation]}


def lineage(**fields: list[dict[str, Any]]) -> dict[str, Any]:
    return facet(fields={target: {"inputFields": sources} for target, sources in fields.items()})


def ownership(*names: str) -> dict[str, Any]:
    return facet(owners=[{"name": name, "type": "team"} for name in names])


def write(job: str, run: int, second: int, inputs: list[str], output: str,
          fields: list[str], column_lineage: dict[str, Any] | None = None,
          **extra: Any) -> list[dict[str, Any]]:
    """A START without facets and a COMPLETE with them, as the agent sends."""
    facets: dict[str, Any] = dict(extra)
    if column_lineage is not None:
        facets["columnLineage"] = column_lineage
    time = f"2024-03-01T00:00:{second:02d}Z"
    out = dataset("file", output, [(f, "string") for f in fields], **facets)
    job_facets = {"ownership": ownership(f"team:{job}")}
    return [
        run_event("START", time, run_id(run), job=job, inputs=[dataset("file", n) for n in inputs],
                  outputs=[dataset("file", output)]),
        run_event("COMPLETE", time.replace(f":{second:02d}Z", f":{second + 1:02d}Z"),
                  run_id(run), job=job, inputs=[dataset("file", n) for n in inputs],
                  outputs=[out], job_facets=job_facets),
    ]


def raw_customers() -> list[dict[str, Any]]:
    events = write("ingest", 1, 0, [], RAW, ["id", "email", "name"],
                   ownership=ownership("team:crm"))
    events[1]["outputs"][0]["facets"]["schema"]["fields"][1]["tags"] = [
        {"key": "PII", "value": "email", "source": "ingest"}]
    return events


def events() -> list[dict[str, Any]]:
    return [
        *raw_customers(),
        *write("silver", 2, 10, [RAW], SILVER, ["id", "email", "email_hash", "name"], lineage(
            id=[edge(RAW, "id")], email=[edge(RAW, "email")],
            email_hash=[edge(RAW, "email", "HASH", masking=True)], name=[edge(RAW, "name")])),
        *write("gold", 3, 20, [SILVER], GOLD, ["contact"], lineage(
            contact=[edge(SILVER, "email", "TRANSFORMATION"),
                     edge(SILVER, "id", "FILTER", kind="INDIRECT")])),
        *write("gold", 4, 40, [SILVER], GOLD, ["contact"], lineage(
            contact=[edge(SILVER, "name", "TRANSFORMATION")])),
    ]
