#!/usr/bin/env python3
"""The differential test of the policy's CEL subset against cel-go.

Generates (seeded) expressions of the subset, well and ill typed, with
inputs, runs them through toolctx's evaluator (the core's `policy_eval`
example) and cel-go's standard environment (tests/policy/celgo), and
counts disagreements on the compile result (refused or not) and the
value (or error). Expressions outside the subset (arithmetic, other
functions and macros, map literals, bytes, ...) are generated too: every
one must be refused by toolctx at configuration, whatever cel-go makes of
it. Exits non-zero on any disagreement.

usage: differential.py --ours BIN --celgo BIN [--seed N] [--count N]
"""

import argparse
import json
import random
import subprocess
import sys

STRINGS = ["", "a", "ab", "abc", "admin", "dev", "u1", "u2", "w1", "héllo", "x-y", "A"]
KEYS = ["a", "b", "n", "s", "l", "m", "f", "z", "if"]


def number_text(rng, n):
    """One JSON number as any of its spellings (100, 100.0, 1e2)."""
    forms = [repr(n) if isinstance(n, float) else str(n)]
    if isinstance(n, int) or float(n).is_integer():
        i = int(n)
        forms += [f"{i}.0", f"{i}e0"]
        if i != 0 and i % 100 == 0:
            forms.append(f"{i // 100}e2")
    return rng.choice(forms)


class Json:
    """A JSON value written with a chosen number spelling."""

    def __init__(self, text):
        self.text = text


def json_value(rng, depth=0):
    k = rng.randrange(9 if depth < 2 else 5)
    if k == 0:
        return "null"
    if k == 1:
        return rng.choice(["true", "false"])
    if k in (2, 3):
        return number_text(rng, rng.choice([0, 1, 2, 3, 100, -1, 2.5, -0.5, 7, 1e3]))
    if k == 4:
        return json.dumps(rng.choice(STRINGS), ensure_ascii=False)
    if k in (5, 6):
        return "[" + ",".join(json_value(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    return json_object(rng, depth + 1)


def json_object(rng, depth=0, keys=None):
    keys = keys or rng.sample(KEYS, rng.randrange(len(KEYS)))
    return "{" + ",".join(f'"{k}":{json_value(rng, depth)}' for k in keys) + "}"


def make_input(rng):
    roles = rng.sample(["admin", "dev", "ops"], rng.randrange(4))
    claims = (
        '{"task_id":"t1","workspace_id":%s,"end_user_id":%s,"iat":1700000000,'
        '"metadata":{"roles":%s,"level":%s}}'
        % (
            json.dumps(rng.choice(["w1", "w2"])),
            json.dumps(rng.choice(["u1", "u2"])),
            json.dumps(roles),
            number_text(rng, rng.choice([1, 3, 5])),
        )
    )
    args = json_object(rng, 0, rng.sample(KEYS, rng.randrange(2, len(KEYS))))
    meta = json_object(rng, 1)
    tool = rng.choice(["transfer", "delete_repo", "read", "tr"])
    return '{"claims":%s,"args":%s,"meta":%s,"tool":%s}' % (claims, args, meta, json.dumps(tool))


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.locals = []

    def lit(self):
        r = self.rng
        k = r.randrange(10)
        if k == 0:
            return str(r.choice([0, 1, 2, 3, 100, -1, 7, 9223372036854775807]))
        if k == 1:
            return r.choice(["0u", "1u", "3u", "100u", "0x10"])
        if k == 2:
            return r.choice(["0.0", "1.0", "2.5", "-0.5", "100.0", "1e2", "3.0", ".5"])
        if k in (3, 4):
            s = r.choice(STRINGS)
            q = r.choice(["'", '"'])
            return q + s + q if r.random() < 0.9 else r.choice(["'\\x41'", "'\\u00e9'", "r'a\\n'", "'''x'''"])
        if k == 5:
            return r.choice(["true", "false"])
        if k == 6:
            return "null"
        return "[" + ", ".join(self.lit() for _ in range(r.randrange(4))) + "]"

    def path(self, depth):
        r = self.rng
        root = r.choice(["args", "args", "args", "claims", "meta"])
        out = root
        if root == "claims":
            out += r.choice([".end_user_id", ".workspace_id", ".metadata", ".metadata.roles",
                             ".metadata.level", ".iat", "['task_id']", ".nope"])
            return out
        for _ in range(r.randrange(1, 3)):
            k = r.randrange(5)
            if k < 3:
                out += "." + r.choice(KEYS)
            elif k == 3:
                out += "['" + r.choice(KEYS) + "']"
            else:
                out += "[" + r.choice(["0", "1", "0.0", "1.0", "0u", "2", "-1", "args.n"]) + "]"
        return out

    def value(self, depth):
        r = self.rng
        k = r.randrange(12)
        if depth <= 0 or k < 3:
            return self.lit()
        if k < 7:
            return self.path(depth)
        if k == 7 and self.locals:
            return r.choice(self.locals)
        if k == 8:
            return "tool"
        if k == 9:
            return f"size({self.value(depth - 1)})" if r.random() < 0.5 else f"{self.value(depth - 1)}.size()"
        if k == 10:
            return f"({self.boolean(depth - 1)} ? {self.value(depth - 1)} : {self.value(depth - 1)})"
        return "[" + ", ".join(self.value(depth - 1) for _ in range(r.randrange(3))) + "]"

    def boolean(self, depth):
        r = self.rng
        if depth <= 0:
            return r.choice(["true", "false", self.path(0) if r.random() < 0.3 else "true"])
        k = r.randrange(12)
        v = lambda: self.value(depth - 1)  # noqa: E731
        b = lambda: self.boolean(depth - 1)  # noqa: E731
        if k == 0:
            return f"{v()} {r.choice(['==', '!='])} {v()}"
        if k == 1:
            return f"{v()} {r.choice(['<', '<=', '>', '>='])} {v()}"
        if k == 2:
            return f"{v()} in {r.choice([self.lit(), self.path(depth), 'args', 'claims.metadata.roles'])}"
        if k == 3:
            return f"has({self.path(depth)}.{r.choice(KEYS)})" if r.random() < 0.8 else f"has(args.{r.choice(KEYS)})"
        if k == 4:
            return f"{b()} {r.choice(['&&', '||'])} {b()}"
        if k == 5:
            return f"!{r.choice(['', '!'])}({b()})"
        if k == 6:
            return f"({b()} ? {b()} : {b()})"
        if k == 7:
            fn = r.choice(["startsWith", "endsWith", "contains"])
            return f"{r.choice([self.path(depth), 'tool', self.lit()])}.{fn}({r.choice([self.lit(), self.path(depth), 'tool'])})"
        if k in (8, 9):
            var = r.choice(["x", "y", "e"])
            rng_expr = r.choice([self.path(depth), self.lit(), "args", "claims.metadata.roles", "[1, 2.0, 'a']"])
            self.locals.append(var)
            pred = self.boolean(depth - 1)
            self.locals.pop()
            return f"{rng_expr}.{r.choice(['all', 'exists'])}({var}, {pred})"
        if k == 10:
            return f"size({v()}) {r.choice(['==', '<', '>=', '!='])} {r.choice(['0', '1', '2', '3', 'args.n', '2.0', '1u'])}"
        return v()


OUTSIDE = [
    "args.n + 1 == 2", "args.n - 1 > 0", "args.n * 2 > 0", "args.n / 2 > 0", "args.n % 2 == 0",
    "-args.n < 0", "int(args.n) == 1", "double(1) == 1.0", "string(args.n) == '1'",
    "args.s.matches('a.*')", "{'a': 1}.a == 1", "b'ab' == b'ab'", "args.l.map(x, x) == []",
    "args.l.filter(x, true) == []", "args.l.exists_one(x, x == 1)", ".args.n == 1",
    "dyn(1) == 1.0", "type(1) == int", "duration('1s') > duration('0s')", "args.s.lowerAscii() == 'a'",
    "timestamp('2020-01-01T00:00:00Z') < timestamp('2021-01-01T00:00:00Z')", "size(b'ab') == 2",
    "args.l + [1] == [1]", "'a' + 'b' == 'ab'", "args.?n == 1", "[1, 2][?0] == 1", "--1 == 1",
    "-(1) == -1", "args.s.size() + 1 > 0", "args.s.indexOf('a') == 0", "math.greatest(1, 2) == 2",
    "has(args)", "args.all(k, v, true)", "foo(1)", "x == 1", "args.l.sort() == []",
]


def outside(rng):
    e = rng.choice(OUTSIDE)
    if rng.random() < 0.5:
        e = f"({e}) && {Gen(rng).boolean(1)}"
    return e


def kind(line):
    return line.split(" ", 1)[0]


def norm(v):
    """A tagged value made comparable: every number a float with its tag."""
    if isinstance(v, dict):
        if set(v) in ({"int"}, {"uint"}):
            (tag, n), = v.items()
            return (tag, int(n))
        if set(v) == {"double"}:
            return ("double", float(v["double"]))
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def same(a, b):
    if kind(a) != kind(b):
        return False
    if kind(a) != "VALUE":
        return True
    return norm(json.loads(a.split(" ", 1)[1])) == norm(json.loads(b.split(" ", 1)[1]))


def run(binary, lines):
    out = subprocess.run([binary], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--celgo", required=True)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--show", type=int, default=15)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cases, inside = [], []
    for i in range(a.count):
        is_outside = rng.random() < 0.1
        expr = outside(rng) if is_outside else Gen(rng).boolean(rng.randrange(1, 4)) if rng.random() < 0.8 else Gen(rng).value(rng.randrange(1, 3))
        cases.append('{"expr":%s,"input":%s}' % (json.dumps(expr, ensure_ascii=False), make_input(rng)))
        inside.append(not is_outside)
    ours = run(a.ours, cases)
    theirs = run(a.celgo, cases)
    assert len(ours) == len(theirs) == len(cases), (len(ours), len(theirs), len(cases))
    counts = {"subset": 0, "outside": 0, "disagree": 0, "outside_accepted": 0}
    by = {}
    shown = 0
    for case, inn, o, t in zip(cases, inside, ours, theirs):
        if inn:
            counts["subset"] += 1
            by[kind(t)] = by.get(kind(t), 0) + 1
            if not same(o, t):
                counts["disagree"] += 1
                if shown < a.show:
                    shown += 1
                    print(f"DISAGREE {case}\n  ours:   {o}\n  cel-go: {t}")
        else:
            counts["outside"] += 1
            if kind(o) != "REFUSED":
                counts["outside_accepted"] += 1
                if shown < a.show:
                    shown += 1
                    print(f"OUTSIDE ACCEPTED {case}\n  ours: {o}")
    detail = ", ".join(f"{k} {v}" for k, v in sorted(by.items()))
    print(
        f"differential (seed {a.seed}): {counts['subset']} subset cases ({detail}), "
        f"{counts['disagree']} disagreements; {counts['outside']} outside the subset, "
        f"{counts['outside_accepted']} not refused"
    )
    return 1 if counts["disagree"] or counts["outside_accepted"] else 0


if __name__ == "__main__":
    sys.exit(main())
