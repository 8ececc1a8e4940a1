"""The in-memory idempotency store vectors (tests/vectors/memory-store.json,
docs/VECTORS.md "Memory store vectors") through the Python binding
(``toolctx._native.IdempotencyMemoryStore``, which
``toolctx.helpers.MemoryIdempotencyStore`` keeps its entries in): one test
per case, each operation at its ``now``."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from toolctx import _native

FILE = os.path.join(os.path.dirname(__file__), "..", "vectors", "memory-store.json")


def _cases() -> list[Any]:
    with open(FILE, encoding="utf-8") as f:
        doc = json.load(f)
    assert doc["format"] == "toolctx-memory-store"
    return list(doc["cases"])


CASES = _cases()


def test_the_file_has_cases() -> None:
    assert len(CASES) > 0


def _run(store: _native.IdempotencyMemoryStore, op: dict[str, Any]) -> object:
    kind = op["op"]
    if kind == "claim":
        return store.claim(op["key"], op["entry"], op["ms"], op["now"])
    if kind == "read":
        return store.read(op["key"], op["now"])
    if kind == "complete":
        return store.complete(op["key"], op["entry"], op["ms"], op["now"])
    if kind == "release":
        return store.release(op["key"], op["entry"], op["now"])
    if kind == "len":
        return len(store)
    raise AssertionError(f"unknown operation {kind!r}")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_memory_store_vector(case: dict[str, Any]) -> None:
    store = _native.IdempotencyMemoryStore(case.get("capacity"))
    assert store.capacity == case["expect_capacity"]
    for i, op in enumerate(case["ops"]):
        got = _run(store, op)
        if op["op"] != "complete":
            assert got == op["expect"], f"op {i} ({op['op']})"
