#!/usr/bin/env python3
"""Independent check of the committed settings vectors (stdlib only).

It shares no code with generate_settings.py: the table is stated again
below, as CONTRACT's prose gives it (durations in their own units, ranges
as Python ranges), and every expectation is derived a second way: numbers
through exact fractions (a double's exact value, rounded half up by
comparing with one half), placeholders by a regular expression, types by
a lookup of the JSON type's name. It also checks that the file covers, for
every setting, an absent value and each wrong type; for every numeric one
0, a negative, both ends and past the top; for every text one a
placeholder. Exit status 1 on any disagreement.

    python3 tests/vectors/selfcheck_settings.py [file]
"""

import json
import os
import re
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))

SECOND, MINUTE, HOUR, DAY = 1000, 60 * 1000, 3600 * 1000, 86400 * 1000
KIB, MIB = 1024, 1024 * 1024

# name -> (kind, default or "required", range of accepted values)
TABLE = {
    "instance_id": ("text", "required", None),
    "secret": ("text", "required", None),
    "require_context": ("flag", True, None),
    "clock_skew_s": ("s", 30, range(0, 3600 + 1)),
    "max_token_age_s": ("s", 10 * 60, range(0, 7 * 86400 + 1)),
    "max_body_bytes": ("bytes", MIB, range(1, 64 * MIB + 1)),
    "max_token_bytes": ("bytes", 8 * KIB, range(1, 64 * KIB + 1)),
    "include_reason": ("flag", True, None),
    "replay_capacity": ("count", 100_000, range(1, 0xFFFF_FFFF + 1)),
    "store_timeout_ms": ("ms", SECOND // 2, range(1, MINUTE + 1)),
    "redis_url": ("text", "required", None),
    "replay_key_prefix": ("text", "toolctx:jti:", None),
    "idempotency_ttl_ms": ("ms", DAY, range(1, 30 * DAY + 1)),
    "idempotency_lease_ms": ("ms", 30 * MINUTE, range(1, DAY + 1)),
    "idempotency_wait_ms": ("ms", MINUTE, range(1, 30 * MINUTE + 1)),
    "idempotency_memory_entries": ("count", 10_000, range(1, 0xFFFF_FFFF + 1)),
    "idempotency_key_prefix": ("text", "toolctx:idem:", None),
    "progress_interval_ms": ("ms", SECOND // 2, range(1, MINUTE + 1)),
    "nonce_cache": ("count", 1024, range(0, 4096 + 1)),
    "replay_slots": ("count", "required", range(1, 2**20 + 1)),
    "replay_ways": ("count", 4, range(1, 16 + 1)),
}

PLACEHOLDER = re.compile(r"\$\{[^}]*\}", re.S)
JSON_TYPE = {bool: "flag", str: "text", int: "number", float: "number", list: "list", dict: "object"}
MESSAGE = {
    "config_missing": "setting `{}` is required",
    "config_type": "setting `{}` has the wrong type",
    "limit_out_of_range": "setting `{}` is out of range",
    "config_placeholder": "setting `{}` holds an unresolved placeholder `${{...}}`: set the variable it names",
    "config_unknown_setting": "unknown setting `{}`",
}


def no(code, name):
    return {"error": code, "message": MESSAGE[code].format(name)}


def expected(name, has_raw, raw):
    if name not in TABLE:
        return no("config_unknown_setting", name)
    kind, default, accepted = TABLE[name]
    if not has_raw or raw is None:
        return no("config_missing", name) if default == "required" else {"value": default}
    got = JSON_TYPE[type(raw)]
    want = {"flag": "flag", "text": "text"}.get(kind, "number")
    if got != want:
        return no("config_type", name)
    if kind == "flag":
        return {"value": raw}
    if kind == "text":
        return no("config_placeholder", name) if PLACEHOLDER.search(raw) else {"value": raw}
    exact = Fraction(raw)
    if exact == 0 and 0 not in accepted:
        return no("limit_out_of_range", name) if default == "required" else {"value": default}
    if exact < 0:
        return no("limit_out_of_range", name)
    if kind == "ms":
        whole, rest = divmod(exact, 1)
        value = int(whole) + (1 if rest >= Fraction(1, 2) else 0)
    elif exact.denominator == 1:
        value = int(exact)
    else:
        return no("limit_out_of_range", name)
    return {"value": value} if value in accepted else no("limit_out_of_range", name)


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(HERE, "settings.json")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    bad = 0
    if doc.get("format") != "toolctx-settings":
        print("not a settings vector file")
        return 1
    for row in doc["settings"]:
        kind, default, accepted = TABLE[row["name"]]
        lo, hi = (accepted.start, accepted.stop - 1) if accepted else (0, 0)
        want = {"name": row["name"], "kind": kind, "default": None if default == "required" else default,
                "min": lo, "max": hi}
        if row != want:
            print("table row differs: %s: %s" % (row, want))
            bad += 1
    if sorted(r["name"] for r in doc["settings"]) != sorted(TABLE):
        print("the file's table does not list every setting")
        bad += 1
    seen = {}
    for case in doc["cases"]:
        want = expected(case["setting"], "raw" in case, case.get("raw"))
        if case["expect"] != want:
            print("%s: file %s, derived %s" % (case["name"], case["expect"], want))
            bad += 1
        if "raw" not in case:
            kinds = {"absent"}
        elif isinstance(case["raw"], (int, float)) and not isinstance(case["raw"], bool):
            kinds = {"number"}
            accepted = TABLE.get(case["setting"], (None, None, None))[2]
            if accepted:
                kinds |= {k for k, v in (("zero", 0), ("min", accepted.start), ("max", accepted.stop - 1),
                                         ("past", accepted.stop)) if case["raw"] == v}
                if case["raw"] < 0:
                    kinds.add("negative")
        else:
            kinds = {JSON_TYPE[type(case["raw"])]} if case["raw"] is not None else {"null"}
            if isinstance(case["raw"], str) and PLACEHOLDER.search(case["raw"]):
                kinds.add("placeholder")
        seen.setdefault(case["setting"], set()).update(kinds)
    for name, (kind, _, accepted) in TABLE.items():
        need = {"absent", "null", "list"}
        need |= {"flag": {"flag", "number", "text"}, "text": {"text", "placeholder", "number", "flag"}}.get(
            kind, {"number", "zero", "negative", "min", "max", "past", "text", "flag", "object"})
        missing = need - seen.get(name, set())
        if kind not in ("flag", "text"):
            missing.discard("list")
        if kind == "text":
            missing.discard("object")
        if missing:
            print("%s: no case for %s" % (name, sorted(missing)))
            bad += 1
    print("%d cases, %d disagreements" % (len(doc["cases"]), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
