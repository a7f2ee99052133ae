"""The fast canonical JSON is byte-identical to the standard library's definition.

Dedupe compares content hashes, so a stored event re-sent later must hash the
same whatever path serialised it. Checked on every JSON document of the shared
conformance data and on generated values aimed at the places orjson and the
standard library format differently (short exponents, non-finite floats, big
integers, lone surrogates, unusual keys).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from headwater.events.canonical import canonical_bytes, canonical_json, content_hash

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def stdlib(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def conformance_documents() -> list[Path]:
    return sorted(p for p in CONFORMANCE.rglob("*.json") if p.is_file())


def test_conformance_data_is_present() -> None:
    assert len(conformance_documents()) > 50


def test_every_conformance_document_serialises_identically() -> None:
    checked = 0
    for path in conformance_documents():
        try:
            value = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue  # templates with placeholders are not JSON
        if not isinstance(value, dict):
            value = {"document": value}
        assert canonical_bytes(value) == stdlib(value), path
        checked += 1
    assert checked > 50


def random_float(rng: random.Random) -> float:
    choice = rng.random()
    if choice < 0.3:
        return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
    if choice < 0.6:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-330, 310)
    return float(rng.choice([0.0, -0.0, 1e-5, 1e-7, 1e-9, 2.5e-10, 1e16, 1e22, 0.1, 1 / 3,
                             123456789.123, 5e-324, 1.7976931348623157e308]))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([rng.randint(-10**6, 10**6), rng.getrandbits(63), -(2**63),
                           2**64 + 1, -(2**70)])
    if kind == 2:
        value = random_float(rng)
        return value if math.isfinite(value) else 0.5
    if kind in (3, 4, 5):
        alphabet = "ab\u00e9\u2028\u2029\x00\x1f\x7f\"\\/\n\t\ud7ff\ue000\uffff\U0001f600e-7"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    if kind in (6, 7):
        return {"".join(rng.choice("aAzZ\u00e9\U0001f600_0") for _ in range(rng.randint(0, 4))):
                random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}
    return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]


def test_generated_values_serialise_identically() -> None:
    rng = random.Random(20261122)
    for _ in range(3000):
        value = {"v": random_value(rng)}
        assert canonical_bytes(value) == stdlib(value), value


@pytest.mark.parametrize("value", [
    {"tiny": 1e-7}, {"small": 1e-5}, {"small": -3.5e-5}, {"text": "1e-5 in a string"},
    {"text": "0.00001"}, {"nan": float("nan")},
    {"inf": [float("inf"), None]}, {"big": 2**80}, {"neg": -(2**64)},
    {"nested": {"b": 1, "a": {"d": [1.5e-8, "x"], "c": None}}},
])
def test_edge_values_serialise_identically(value: dict[str, Any]) -> None:
    assert canonical_bytes(value) == stdlib(value)
    assert canonical_json(value) == stdlib(value).decode()


def test_content_hash_is_sha256_of_the_canonical_bytes() -> None:
    event = {"eventTime": "2026-11-22T10:00:00Z", "run": {"runId": "x"}, "a": [1, 2.5e-6]}
    assert content_hash(canonical_bytes(event)) == hashlib.sha256(stdlib(event)).hexdigest()


def test_lone_surrogate_fails_as_the_standard_library_does() -> None:
    # Not valid UTF-8 either way: the store refuses it rather than guess.
    with pytest.raises(UnicodeEncodeError):
        stdlib({"s": "\ud800"})
    with pytest.raises(UnicodeEncodeError):
        canonical_bytes({"s": "\ud800"})
