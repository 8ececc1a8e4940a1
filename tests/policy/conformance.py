#!/usr/bin/env python3
"""The CEL specification's conformance cases against the policy's subset.

Reads the cases tests/policy/celgo prints with -conformance (every simple
test without bindings, declarations or container), runs each through
toolctx's evaluator and cel-go's standard environment, and sorts them:

- pass: toolctx compiles it and gives the expected value (or error);
- fail: toolctx compiles it and gives something else;
- refused by both: cel-go's standard environment refuses it at check time
  too (e.g. `1 < 1.5`, whose cross-type overloads it switches off);
- outside the subset: toolctx refuses what cel-go compiles (other
  functions, arithmetic, bytes, maps, types, ...).

A case toolctx compiles must pass: exits non-zero on any failure.

usage: conformance.py --ours BIN --celgo BIN CASES
"""

import argparse
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from differential import kind, norm, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--celgo", required=True)
    ap.add_argument("cases")
    a = ap.parse_args()
    with open(a.cases, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line]
    cases = [json.loads(line) for line in lines]
    ours = run(a.ours, lines)
    theirs = run(a.celgo, lines)
    counts = {"pass": 0, "fail": 0, "refused by both": 0, "outside the subset": 0}
    for case, o, t in zip(cases, ours, theirs):
        if kind(o) == "REFUSED":
            counts["refused by both" if kind(t) == "REFUSED" else "outside the subset"] += 1
            continue
        expect = case["expect"]
        if expect == "ERROR":
            ok = kind(o) == "ERROR"
        elif expect == "UNREPRESENTABLE" or kind(o) != "VALUE":
            ok = False
        else:
            ok = norm(json.loads(o.split(" ", 1)[1])) == norm(json.loads(expect))
        if ok:
            counts["pass"] += 1
        else:
            counts["fail"] += 1
            print(f"FAIL {case['name']}: {case['expr']!r}\n  expected {expect}\n  toolctx  {o}\n  cel-go   {t}")
    print(
        f"conformance ({len(cases)} cases without bindings): {counts['pass']} passed, "
        f"{counts['fail']} failed; {counts['refused by both']} refused at check by cel-go's "
        f"standard environment and by toolctx; {counts['outside the subset']} outside the subset"
    )
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
