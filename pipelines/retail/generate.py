"""Deterministic raw data for the retail lakehouse pipeline.

Writes the landing zone the bronze job reads, under ``<data-dir>/raw``:

* ``customers.csv``  customer master data with PII (email, phone)
* ``products.csv``   product catalogue
* ``orders.csv``     order headers; a few rows are delivered twice (the silver job dedupes)
* ``order_lines.csv`` order lines (product, quantity, unit price)
* ``payments.csv``   payments against orders
* ``clickstream/part-0000.jsonl`` web events as JSON lines
* ``pos_orders.jsonl`` order events of the shops' point of sale, one JSON object a
  line (``headwater demo --with-connect`` copies them into the orders topic)

The same ``--scale`` always produces byte-identical files (a seeded
``random.Random``, fixed dates). ``--drift`` produces the "upstream changed its
export" variant used by the incident walk-through: customer ids become prefixed
strings (``C000042`` instead of ``42``, a type change from integer to string in
customers, orders and clickstream) and ``customers.phone`` is renamed to
``phone_number``.

Standard library only: the generator runs before any Spark job.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
from datetime import date, datetime, timedelta
from pathlib import Path

__all__ = ["SCALES", "generate", "main"]

#: Rows per scale: (customers, products, orders, clickstream events).
SCALES: dict[str, tuple[int, int, int, int]] = {
    "tiny": (40, 12, 200, 300),
    "small": (400, 40, 3_000, 5_000),
    "medium": (4_000, 200, 40_000, 60_000),
}

_SEED = 20240101
_START = date(2024, 1, 1)
_DAYS = 60
_CITIES = [("Lisbon", "PT"), ("Porto", "PT"), ("Berlin", "DE"), ("Munich", "DE"),
           ("Paris", "FR"), ("Lyon", "FR"), ("Madrid", "ES"), ("Dublin", "IE")]
_FIRST = ["Ana", "Bruno", "Carla", "Dieter", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas"]
_LAST = ["Silva", "Muller", "Dubois", "Garcia", "Murphy", "Costa", "Schmidt", "Martin"]
_CATEGORIES = ["kitchen", "garden", "toys", "books", "outdoor", "electronics"]
_PAGES = ["/", "/search", "/product", "/cart", "/checkout", "/account"]
_EVENTS = ["view", "view", "view", "add_to_cart", "purchase"]
_METHODS = ["card", "card", "paypal", "bank_transfer"]


def _customer_key(customer_id: int, drift: bool) -> int | str:
    return f"C{customer_id:06d}" if drift else customer_id


#: Order events in the point-of-sale feed.
_POS_ORDERS = 25


def generate(data_dir: Path, scale: str = "small", drift: bool = False) -> dict[str, int]:
    """Write the raw files under ``data_dir/raw`` (replacing earlier ones); rows per file."""
    n_customers, n_products, n_orders, n_clicks = SCALES[scale]
    rng = random.Random(_SEED)
    raw = data_dir / "raw"
    if raw.exists():
        shutil.rmtree(raw)
    (raw / "clickstream").mkdir(parents=True)
    counts: dict[str, int] = {}

    phone_column = "phone_number" if drift else "phone"
    customers = []
    for cid in range(1, n_customers + 1):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        city, country = rng.choice(_CITIES)
        customers.append({
            "customer_id": _customer_key(cid, drift),
            "first_name": first,
            "last_name": last,
            # Mixed case and stray spaces on purpose: the silver job normalises them.
            "email": f" {first}.{last}{cid}@Example.com ",
            phone_column: f"+351 9{rng.randint(10_000_000, 99_999_999)}",
            "city": city,
            "country": country,
            "signup_date": (_START - timedelta(days=rng.randint(0, 700))).isoformat(),
        })
    counts["customers.csv"] = _write_csv(raw / "customers.csv", customers)

    products = []
    for pid in range(1, n_products + 1):
        category = rng.choice(_CATEGORIES)
        products.append({
            "product_id": pid,
            "product_name": f"{category.title()} item {pid}",
            "category": category,
            "list_price": f"{rng.uniform(2, 200):.2f}",
        })
    counts["products.csv"] = _write_csv(raw / "products.csv", products)
    prices = {p["product_id"]: float(p["list_price"]) for p in products}

    orders, lines, payments = [], [], []
    for oid in range(1, n_orders + 1):
        cid = rng.randint(1, n_customers)
        day = _START + timedelta(days=rng.randrange(_DAYS))
        ts = datetime(day.year, day.month, day.day, rng.randrange(24), rng.randrange(60))
        status = rng.choices(["completed", "cancelled", "returned"], weights=[90, 7, 3])[0]
        total = 0.0
        for line_no in range(1, rng.randint(1, 4) + 1):
            pid = rng.randint(1, n_products)
            quantity = rng.randint(1, 5)
            unit_price = round(prices[pid] * rng.choice([1.0, 1.0, 0.9]), 2)
            total += quantity * unit_price
            lines.append({"order_id": oid, "line_no": line_no, "product_id": pid,
                          "quantity": quantity, "unit_price": f"{unit_price:.2f}"})
        order = {"order_id": oid, "customer_id": _customer_key(cid, drift),
                 "order_ts": ts.isoformat(sep=" "), "status": status,
                 "amount": f"{total:.2f}", "currency": "EUR"}
        orders.append(order)
        if rng.random() < 0.03:  # the export re-sends some orders
            orders.append(dict(order))
        if status != "cancelled":
            payments.append({"payment_id": len(payments) + 1, "order_id": oid,
                             "method": rng.choice(_METHODS), "paid_amount": f"{total:.2f}",
                             "paid_ts": (ts + timedelta(minutes=rng.randint(1, 90))).isoformat(sep=" ")})
    counts["orders.csv"] = _write_csv(raw / "orders.csv", orders)
    counts["order_lines.csv"] = _write_csv(raw / "order_lines.csv", lines)
    counts["payments.csv"] = _write_csv(raw / "payments.csv", payments)

    with (raw / "clickstream" / "part-0000.jsonl").open("w", encoding="utf-8") as out:
        for eid in range(1, n_clicks + 1):
            day = _START + timedelta(days=rng.randrange(_DAYS))
            ts = datetime(day.year, day.month, day.day, rng.randrange(24), rng.randrange(60),
                          rng.randrange(60))
            page = rng.choice(_PAGES)
            event = {
                "event_id": eid,
                "session_id": f"s{rng.randint(1, max(1, n_clicks // 5)):06d}",
                "customer_id": _customer_key(rng.randint(1, n_customers), drift),
                "ts": ts.isoformat(),
                "page": page,
                "product_id": rng.randint(1, n_products) if page == "/product" else None,
                "event_type": rng.choice(_EVENTS),
            }
            out.write(json.dumps(event) + "\n")
    counts["clickstream"] = n_clicks

    # Drawn after every other file, so those stay as they were without this feed.
    with (raw / "pos_orders.jsonl").open("w", encoding="utf-8") as out:
        for n in range(1, _POS_ORDERS + 1):
            day = _START + timedelta(days=_DAYS - 1 - rng.randrange(7))
            ts = datetime(day.year, day.month, day.day, rng.randrange(8, 20), rng.randrange(60))
            event = {
                "order_id": n_orders + n,
                "customer_id": _customer_key(rng.randint(1, n_customers), drift),
                "order_ts": ts.isoformat(),
                "status": "completed",
                "total": round(rng.uniform(5, 120), 2),
                "currency": "EUR",
                "channel": "shop",
            }
            out.write(json.dumps(event) + "\n")
    counts["pos_orders.jsonl"] = _POS_ORDERS
    return counts


def _write_csv(path: Path, rows: list[dict[str, object]]) -> int:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--scale", choices=sorted(SCALES), default="small")
    parser.add_argument("--drift", action="store_true",
                        help="write the changed upstream export (string customer ids, phone renamed)")
    args = parser.parse_args(argv)
    counts = generate(args.data_dir, args.scale, args.drift)
    print(json.dumps(counts, sort_keys=True))


if __name__ == "__main__":
    main()
