#!/usr/bin/env python3
"""Generate the settings vectors (tests/vectors/settings.json): for every
setting a front end accepts, its default, its range, and what the one
reading (CONTRACT §5, precise point on settings) answers for an absent,
zero, negative, out-of-range, fractional or wrong-typed value, and for a
text holding an unresolved `${NAME}` placeholder.

Standard library only; never imports or runs project code. The output is
deterministic: fixed inputs, insertion-ordered keys, two-space
indentation, a trailing newline.

    python3 tests/vectors/generate_settings.py           # rewrite the file
    python3 tests/vectors/generate_settings.py --check   # exit 1 if it differs

File format (docs/VECTORS.md, "Settings vectors"):

    {"format": "toolctx-settings", "description": ...,
     "settings": [{"name", "kind", "default", "min", "max"}],
     "cases": [{"name", "setting", "raw"?, "expect": {"value"} | {"error", "message"}}]}

A case without `raw` gives no value (absent). tests/vectors/selfcheck_settings.py
derives every expectation a second way.
"""

import json
import math
import os
import sys

import vectorfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = "settings.json"
FORMAT = "toolctx-settings"

DAY_MS = 24 * 3600 * 1000
U32 = 2**32 - 1

# name, kind, default (None: required), min, max. The table of
# docs/CONTRACT.md's settings appendix, written here once for this file.
TABLE = [
    ("instance_id", "text", None, 0, 0),
    ("secret", "text", None, 0, 0),
    ("require_context", "flag", True, 0, 0),
    ("clock_skew_s", "s", 30, 0, 3600),
    ("max_token_age_s", "s", 600, 0, 7 * 24 * 3600),
    ("max_body_bytes", "bytes", 1024 * 1024, 1, 64 * 1024 * 1024),
    ("max_token_bytes", "bytes", 8 * 1024, 1, 64 * 1024),
    ("include_reason", "flag", True, 0, 0),
    ("replay_capacity", "count", 100000, 1, U32),
    ("store_timeout_ms", "ms", 500, 1, 60000),
    ("redis_url", "text", None, 0, 0),
    ("replay_key_prefix", "text", "toolctx:jti:", 0, 0),
    ("idempotency_ttl_ms", "ms", DAY_MS, 1, 30 * DAY_MS),
    ("idempotency_lease_ms", "ms", 30 * 60 * 1000, 1, DAY_MS),
    ("idempotency_wait_ms", "ms", 60 * 1000, 1, 1800 * 1000),
    ("idempotency_memory_entries", "count", 10000, 1, U32),
    ("idempotency_key_prefix", "text", "toolctx:idem:", 0, 0),
    ("progress_interval_ms", "ms", 500, 1, 60000),
    ("nonce_cache", "count", 1024, 0, 4096),
    ("replay_slots", "count", None, 1, 1 << 20),
    ("replay_ways", "count", 4, 1, 16),
]

MESSAGES = {
    "config_missing": "setting `%s` is required",
    "config_type": "setting `%s` has the wrong type",
    "limit_out_of_range": "setting `%s` is out of range",
    "config_placeholder": "setting `%s` holds an unresolved placeholder `${...}`: set the variable it names",
    "config_unknown_setting": "unknown setting `%s`",
}

ABSENT = object()


def refused(code, name):
    return {"error": code, "message": MESSAGES[code] % name}


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def answer(row, raw):
    """The one reading, as CONTRACT §5 states it."""
    name, kind, default, lo, hi = row
    if raw is ABSENT or raw is None:
        return refused("config_missing", name) if default is None else {"value": default}
    if kind == "flag":
        return {"value": raw} if isinstance(raw, bool) else refused("config_type", name)
    if kind == "text":
        if not isinstance(raw, str):
            return refused("config_type", name)
        at = raw.find("${")
        if at >= 0 and "}" in raw[at + 2:]:
            return refused("config_placeholder", name)
        return {"value": raw}
    if not is_number(raw):
        return refused("config_type", name)
    if raw == 0 and lo > 0:
        return refused("limit_out_of_range", name) if default is None else {"value": default}
    if raw < 0 or math.isinf(raw):
        return refused("limit_out_of_range", name)
    if kind == "ms":
        n = math.floor(raw + 0.5)  # to the nearest millisecond, halves up
    elif raw == math.floor(raw):
        n = int(raw)
    else:
        return refused("limit_out_of_range", name)
    if lo <= n <= hi:
        return {"value": n}
    return refused("limit_out_of_range", name)


def show(raw):
    return "absent" if raw is ABSENT else json.dumps(raw)


def raws(row):
    name, kind, default, lo, hi = row
    common = [ABSENT, None]
    if kind == "flag":
        return common + [True, False, 1, 0, "true", [True]]
    if kind == "text":
        return common + [
            "a-plain-value",
            "",
            "$HOME/not-a-placeholder",
            "${TOOLCTX_%s}" % name.upper(),
            "prefix-${UNSET}-suffix",
            "${UNSET:fallback}",
            "${no-closing-brace",
            7,
            True,
            ["a"],
        ]
    values = [0, -0.0, -1, -0.4, lo, hi, hi + 1, 1.5, 0.4, 1e30, "1", True, {"ms": 1}]
    if lo + 1 <= hi:
        values.append(lo + 1)
    if kind == "ms":
        values += [hi + 0.4, hi + 0.5, 2.5]
    if lo == 0:
        values.append(3)
    return common + values


def cases():
    out = []
    for row in TABLE:
        seen = set()
        for raw in raws(row):
            name = "%s: %s" % (row[0], show(raw))
            if name in seen:
                continue
            seen.add(name)
            case = {"name": name, "setting": row[0]}
            if raw is not ABSENT:
                case["raw"] = raw
            case["expect"] = answer(row, raw)
            out.append(case)
    out.append({
        "name": "a setting no table row names",
        "setting": "idempotency_ttl",
        "raw": 1000,
        "expect": refused("config_unknown_setting", "idempotency_ttl"),
    })
    return out


def render():
    return vectorfile.text(
        FORMAT,
        "Every setting a front end accepts: its default, its range, and the one "
        "reading of absent (or null), zero, negative, fractional, out-of-range and "
        "wrong-typed values and of unresolved ${...} placeholders (CONTRACT §5).",
        cases(),
        settings=[{"name": n, "kind": k, "default": d, "min": lo, "max": hi} for n, k, d, lo, hi in TABLE],
    )


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate_settings.py", HERE, lambda: {FILE: render()}))
