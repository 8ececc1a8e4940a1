#!/usr/bin/env python3
"""Generate the helper vectors (tests/vectors/helpers.json): what the
core's helper rules answer (CONTRACT §5), for every front end that serves
the helpers to check against.

Standard library only; never imports or runs project code. The output is
deterministic: fixed inputs, insertion-ordered keys, two-space
indentation, a trailing newline.

    python3 tests/vectors/generate_helpers.py           # rewrite the file
    python3 tests/vectors/generate_helpers.py --check   # exit 1 if it differs

File format (not the verdict vectors' format: `"format"` marks it, and
the verdict runners refuse it):

    {"format": "toolctx-helpers", "description": ...,
     "cases": [{"name": ..., "kind": ..., "input": {...}, "expect": {...}}]}

`kind` names one rule (`idempotency.store_key`, ...); a runner dispatches on
it, one function per kind, and fails on a kind it does not know. A new
section is one generator function returning its cases, listed in
SECTIONS. tests/vectors/selfcheck_helpers.py derives every expectation a
second way.
"""

import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = "helpers.json"
FORMAT = "toolctx-helpers"

# ---------------------------------------------------------------------------
# The rules, as CONTRACT §5 states them (written here once, for this file).
# ---------------------------------------------------------------------------
KEY_PREFIX = "toolctx:idem:"
REPLAYED = "agentarea/replayed"
OUTCOME_KEY = "toolctx/idempotency"
RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
DEFAULTS = {
    "ttl_ms": 24 * 60 * 60 * 1000,
    "lease_ms": 30 * 60 * 1000,
    "wait_ms": 60 * 1000,
    "memory_entries": 10000,
    "store_timeout_ms": 1000,
    "claim_rounds": 3,
    "first_pause_ms": 10,
    "max_pause_ms": 250,
    "key_prefix": KEY_PREFIX,
    "release_script": RELEASE_SCRIPT,
    "replayed_key": REPLAYED,
    "outcome_key": OUTCOME_KEY,
}
REFUSAL_TEXT = {
    "conflict": "idempotency conflict: key {key} was already used with different arguments",
    "in_progress": "call {key} is still running; retry later",
    "unverified": "refused: this tool is idempotent and the call carries no verified toolctx context, so it "
    "cannot be guarded (is toolctx in front of the MCP server, and its context handed to the tool?)",
}


class Num(str):
    """A JSON number kept as its text (the core writes numbers as read)."""


def loads(text):
    """Strict JSON with numbers kept as text and member order kept; a
    duplicate member name is an error, as in the core's reader."""

    def pairs(items):
        names = [k for k, _ in items]
        if len(set(names)) != len(names):
            raise ValueError("duplicate member")
        return dict(items)

    return json.loads(text, object_pairs_hook=pairs, parse_int=Num, parse_float=Num,
                      parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def escape(s):
    """A JSON string as ECMAScript's JSON.stringify writes it."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def compact(v):
    """Compact JSON, members in their order, numbers as read."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Num):
        return str(v)
    if isinstance(v, str):
        return escape(v)
    if isinstance(v, list):
        return "[" + ",".join(compact(x) for x in v) + "]"
    return "{" + ",".join(escape(k) + ":" + compact(x) for k, x in v.items()) + "}"


def case(name, kind, input, expect):
    return {"name": name, "kind": kind, "input": input, "expect": expect}


# ---------------------------------------------------------------------------
# Sections: one function per kind of rule, each returning its cases.
# ---------------------------------------------------------------------------


def store_key(namespace, key):
    """The namespace with `%` and `:` escaped, `:`, the key."""
    return namespace.replace("%", "%25").replace(":", "%3A") + ":" + key


def idempotency_store_keys():
    rows = [
        ("empty namespace", "", "k1"),
        ("plain", "tool", "k1"),
        ("colon in the key stays", "a", "b:c"),
        ("colon in the namespace is escaped", "a:b", "c"),
        ("percent in the namespace is escaped first", "50%:x", "k"),
        ("an escaped-looking namespace stays apart", "a%3Ab", "c"),
        ("empty key", "ns", ""),
        ("both empty", "", ""),
        ("unicode namespace and key", "werkzeug:\u00fc\u2603", "\U0001f600:\u00e9"),
        ("percent in the key stays", "ns", "100%"),
    ]
    out = []
    for i, (name, ns, key) in enumerate(rows):
        prefix = KEY_PREFIX if i % 2 == 0 else "app:"
        sk = store_key(ns, key)
        out.append(case("store key: " + name, "idempotency.store_key",
                        {"prefix": prefix, "namespace": ns, "key": key},
                        {"store_key": sk, "redis_key": prefix + sk}))
    return out


SECTIONS = [
    idempotency_store_keys,
]


def document():
    cases = []
    for section in SECTIONS:
        cases.extend(section())
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    return {
        "format": FORMAT,
        "description": "toolctx helper vectors (CONTRACT §5): what the core's helper rules answer. "
        "Generated by tests/vectors/generate_helpers.py; checked by selfcheck_helpers.py.",
        "cases": cases,
    }


def render():
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main(argv):
    check = "--check" in argv[1:]
    if [a for a in argv[1:] if a != "--check"]:
        print("usage: generate_helpers.py [--check]", file=sys.stderr)
        return 2
    text = render().encode("utf-8")
    path = os.path.join(HERE, FILE)
    if check:
        try:
            with open(path, "rb") as fh:
                have = fh.read()
        except OSError:
            have = None
        if have != text:
            print("differs: %s" % os.path.relpath(path))
            return 1
        return 0
    with open(path, "wb") as fh:
        fh.write(text)
    print("%s %d cases" % (FILE, len(json.loads(text)["cases"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
