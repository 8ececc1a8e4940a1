#!/usr/bin/env python3
"""Independent check of the committed memory store vectors (stdlib only).

It shares no code with generate_memory_store.py: the store is modelled
again as a list of rows (key, entry, expiry, last use) that every
operation filters and sorts, from CONTRACT §5.1's prose. It also checks
that the file covers every operation, a release refused and one done, an
eviction and an expiry. Exit status 1 on any disagreement.

    python3 tests/vectors/selfcheck_memory_store.py [file]
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def replay(capacity, ops):
    rows, clock, seen = [], 0, set()
    answers = []
    for op in ops:
        kind = op["op"]
        if kind == "len":
            answers.append(len(rows))
            continue
        now = op["now"]
        before = len(rows)
        rows = [r for r in rows if r[2] > now]
        if len(rows) < before:
            seen.add("expiry")
        mine = [r for r in rows if r[0] == op["key"]]
        held = mine[0] if mine else None
        if kind in ("claim", "read"):
            if held is not None:
                clock += 1
                held[3] = clock
                answers.append(held[1])
                continue
            answers.append(None)
            if kind == "read":
                continue
        if kind == "release":
            ok = held is not None and held[1] == op["entry"]
            seen.add("release %s" % ok)
            if ok:
                rows.remove(held)
            answers.append(ok)
            continue
        if kind == "complete":
            answers.append(None)
        rows = [r for r in rows if r[0] != op["key"]]
        clock += 1
        rows.append([op["key"], op["entry"], now + (op["ms"] if op["ms"] > 0 else 1), clock])
        while len(rows) > capacity:
            rows.sort(key=lambda r: r[3])
            rows.pop(0)
            seen.add("eviction")
    return answers, seen


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "memory-store.json")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    bad, seen_all, ops_seen = 0, set(), set()
    for case in doc["cases"]:
        cap = case.get("capacity")
        want_cap = 10_000 if cap in (None, 0) else cap
        if case["expect_capacity"] != want_cap:
            print("%s: capacity %r, expected %r" % (case["name"], case["expect_capacity"], want_cap))
            bad += 1
        answers, seen = replay(want_cap, case["ops"])
        seen_all |= seen
        for i, (op, got) in enumerate(zip(case["ops"], answers)):
            ops_seen.add(op["op"])
            if op["op"] != "complete" and op.get("expect") != got:
                print("%s: op %d %s answers %r, the file says %r" % (case["name"], i, op["op"], got, op.get("expect")))
                bad += 1
    for need in ("claim", "read", "complete", "release", "len"):
        if need not in ops_seen:
            print("no %s operation" % need)
            bad += 1
    for need in ("expiry", "eviction", "release True", "release False"):
        if need not in seen_all:
            print("not covered: %s" % need)
            bad += 1
    print("%s: %d cases, %d disagreements" % (os.path.basename(path), len(doc["cases"]), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
