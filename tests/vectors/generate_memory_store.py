#!/usr/bin/env python3
"""Generate the in-memory idempotency store vectors
(tests/vectors/memory-store.json): sequences of store operations with the
time each runs at, and what the store answers (CONTRACT §5.1, "The
in-memory store"): a claim takes a key holding no live entry for its
lease, else answers the entry that holds it; a result replaces whatever
held the key for its time to live; a release deletes the key only while
it holds exactly the caller's running entry; an entry is gone from its
expiry on (expiry = now + max(ms, 1)); past the capacity, expired entries
leave first, then the least recently used (a claim or a read that finds
a key uses it; a release does not).

Standard library only; never imports or runs project code. Deterministic:
fixed cases, then sequences from a seeded `random.Random`.

    python3 tests/vectors/generate_memory_store.py           # rewrite the file
    python3 tests/vectors/generate_memory_store.py --check   # exit 1 if it differs

File format (docs/VECTORS.md, "Memory store vectors"):

    {"format": "toolctx-memory-store", "description": ...,
     "cases": [{"name", "capacity"?, "expect_capacity",
                "ops": [{"op": "claim", "key", "entry", "ms", "now", "expect": text|null}
                      | {"op": "read", "key", "now", "expect": text|null}
                      | {"op": "complete", "key", "entry", "ms", "now"}
                      | {"op": "release", "key", "entry", "now", "expect": bool}
                      | {"op": "len", "expect": n}]}]}

`capacity` is the user's value for `idempotency_memory_entries` (absent:
not given); `len` counts the entries after the operation before it.
tests/vectors/selfcheck_memory_store.py replays every case a second way.
"""

import os
import random
import sys

import vectorfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = "memory-store.json"
FORMAT = "toolctx-memory-store"
DEFAULT_ENTRIES = 10_000


class Store:
    """The model: a dict of key -> [entry, expires, last use]."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.slots = {}
        self.tick = 0

    def _expire(self, now):
        for key in [k for k, s in self.slots.items() if s[1] <= now]:
            del self.slots[key]

    def _use(self, key):
        self.tick += 1
        self.slots[key][2] = self.tick
        return self.slots[key][0]

    def _put(self, key, entry, ms, now):
        self.tick += 1
        self.slots[key] = [entry, now + max(ms, 1), self.tick]
        while len(self.slots) > self.capacity:
            oldest = min(self.slots, key=lambda k: self.slots[k][2])
            del self.slots[oldest]

    def run(self, op):
        name, now = op["op"], op.get("now")
        if name == "len":
            return len(self.slots)
        self._expire(now)
        key = op["key"]
        if name == "claim":
            if key in self.slots:
                return self._use(key)
            self._put(key, op["entry"], op["ms"], now)
            return None
        if name == "read":
            return self._use(key) if key in self.slots else None
        if name == "complete":
            self._put(key, op["entry"], op["ms"], now)
            return None
        if name == "release":
            mine = key in self.slots and self.slots[key][0] == op["entry"]
            if mine:
                del self.slots[key]
            return mine
        raise ValueError(name)


def claim(key, entry, ms, now):
    return {"op": "claim", "key": key, "entry": entry, "ms": ms, "now": now}


def read(key, now):
    return {"op": "read", "key": key, "now": now}


def complete(key, entry, ms, now):
    return {"op": "complete", "key": key, "entry": entry, "ms": ms, "now": now}


def release(key, entry, now):
    return {"op": "release", "key": key, "entry": entry, "now": now}


def size():
    return {"op": "len"}


FIXED = [
    ("a claim holds the key until its lease ends", 10, [
        claim("k", "r1", 100, 0), claim("k", "r2", 100, 99), claim("k", "r2", 100, 100),
        read("k", 150), size()]),
    ("a result replaces the claim for its time to live", 10, [
        claim("k", "r", 10, 0), complete("k", "d", 1000, 5), claim("k", "r2", 10, 500),
        read("k", 1004), read("k", 1005), size()]),
    ("a release deletes only the caller's own running entry", 10, [
        claim("k", "r1", 10, 0), claim("k", "r2", 10, 20), release("k", "r1", 21),
        read("k", 21), release("k", "r2", 22), read("k", 22), size()]),
    ("a stored result is never released", 10, [
        claim("k", "r", 10, 0), complete("k", "d", 100, 1), release("k", "r", 2),
        release("k", "d", 2), read("k", 2), release("absent", "r", 2)]),
    ("an expired claim is released by nobody", 10, [
        claim("k", "r", 5, 0), release("k", "r", 5), size()]),
    ("0 ms lasts 1 ms", 10, [
        claim("k", "r", 0, 7), read("k", 7), read("k", 8), complete("j", "d", 0, 8),
        read("j", 8), read("j", 9)]),
    ("past the capacity the least recently used leaves", 2, [
        claim("a", "ra", 100, 0), claim("b", "rb", 100, 1), claim("a", "x", 100, 2),
        claim("c", "rc", 100, 3), size(), read("b", 3), read("a", 3), read("c", 3)]),
    ("a read uses the entry, a release that fails does not", 2, [
        claim("a", "ra", 100, 0), claim("b", "rb", 100, 1), read("a", 2),
        release("a", "other", 3), claim("c", "rc", 100, 4), read("a", 4), read("b", 4)]),
    ("expired entries leave before any live one", 2, [
        claim("a", "ra", 100, 0), complete("d", "dd", 5, 1), read("d", 2),
        claim("e", "re", 100, 6), size(), read("a", 6), read("e", 6), read("d", 6)]),
    ("a capacity of one", 1, [
        claim("a", "ra", 100, 0), claim("b", "rb", 100, 1), read("a", 1), read("b", 1), size()]),
    ("the same text under two keys is two entries", 10, [
        claim("a", "r", 100, 0), claim("b", "r", 100, 0), release("a", "r", 1),
        read("b", 1), size()]),
    ("entries are held as given, byte for byte", 10, [
        claim("k\u00e9:\u6f22", "{\"state\":\"running\",\"x\":\"\u2028\"}", 100, 0),
        read("k\u00e9:\u6f22", 1), read("ke:\u6f22", 1)]),
]

CAPACITIES = [
    ("absent capacity is the default", None, DEFAULT_ENTRIES),
    ("capacity 0 is the default", 0, DEFAULT_ENTRIES),
    ("capacity 3", 3, 3),
]


def random_case(rng, n):
    cap = rng.choice([1, 2, 3, 5])
    keys = ["a", "b", "c", "d", "e", "f"][: rng.choice([2, 4, 6])]
    now, ops = rng.randrange(0, 1000), []
    for _ in range(40):
        now += rng.choice([0, 0, 1, 3, 10, 50])
        key = rng.choice(keys)
        kind = rng.choice(["claim", "claim", "claim", "read", "complete", "release", "len"])
        entry = "%s%d" % (rng.choice(["r", "d"]), rng.randrange(3))
        ms = rng.choice([0, 1, 5, 20, 100])
        if kind == "claim":
            ops.append(claim(key, entry, ms, now))
        elif kind == "read":
            ops.append(read(key, now))
        elif kind == "complete":
            ops.append(complete(key, entry, ms, now))
        elif kind == "release":
            ops.append(release(key, entry, now))
        else:
            ops.append(size())
    return ("random sequence %d" % n, cap, ops)


def with_answers(capacity, ops):
    store = Store(capacity)
    out = []
    for op in ops:
        answer = store.run(op)
        op = dict(op)
        if op["op"] != "complete":
            op["expect"] = answer
        out.append(op)
    return out


def render():
    cases = []
    for name, cap, ops in FIXED:
        cases.append({"name": name, "capacity": cap, "expect_capacity": cap,
                      "ops": with_answers(cap, ops)})
    for name, cap, expect in CAPACITIES:
        case = {"name": name}
        if cap is not None:
            case["capacity"] = cap
        case["expect_capacity"] = expect
        case["ops"] = with_answers(expect, [claim("k", "r", 10, 0), read("k", 1), size()])
        cases.append(case)
    rng = random.Random(40)
    for n in range(24):
        name, cap, ops = random_case(rng, n)
        cases.append({"name": name, "capacity": cap, "expect_capacity": cap,
                      "ops": with_answers(cap, ops)})
    return vectorfile.text(FORMAT, "The in-memory idempotency store (CONTRACT §5.1): each case "
                           "runs its operations in order on a new store of the given "
                           "capacity; `now` and `ms` are milliseconds.", cases)


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate_memory_store.py", HERE, lambda: {FILE: render()}))
