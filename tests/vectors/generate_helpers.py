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

import helpers_limits_cases
import vectorfile
# The verdict vectors' generator's RFC 8785 writers (standard library too).
from generate import es_number, js_string as escape, json_text

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
    "store_timeout_ms": 500,
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


def compact(v):
    """Compact JSON, members in their order, numbers as read."""
    return json_text(v, lambda n: str(n) if isinstance(n, Num) else None, lambda obj: obj)


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


def utf16_key(name):
    """A member name as its UTF-16 code units (RFC 8785's sort order)."""
    return name.encode("utf-16-be")


def jcs(v):
    if isinstance(v, Num):
        return es_number(str(v))
    if isinstance(v, dict):
        return "{" + ",".join(escape(k) + ":" + jcs(v[k]) for k in sorted(v, key=utf16_key)) + "}"
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    return compact(v)


def idempotency_argument_hashes():
    rows = [
        ("empty object", "{}"),
        ("member order does not matter", '{"b": 2, "a": 1}'),
        ("same members, the other order", '{"a":1,"b":2}'),
        ("whitespace does not matter", ' {\n "a" : 1 ,\t"b":2 } '),
        ("1.0 is 1", '{"n": 1.0, "m": -0, "k": 10.50}'),
        ("nested and arrays", '{"q": {"z": [3, 2, {"y": null, "x": true}], "a": false}, "p": "s"}'),
        ("unicode and escapes", r'{"t": "caf\u00e9 \u2603 \ud83d\ude00", "e": "a\"b\\c\nd\u0001"}'),
        ("names sorted by UTF-16 code units", r'{"\ud83d\ude00": 1, "\uff61": 2, "a": 3, "B": 4}'),
        ("a string is hashed too", '"just text"'),
        ("empty string member kept", '{"a": "", "b": null}'),
    ]
    out = []
    for name, text in rows:
        canonical = jcs(loads(text))
        out.append(case("argument hash: " + name, "idempotency.argument_hash",
                        {"arguments_json": text},
                        {"canonical": canonical,
                         "hash": hashlib.sha256(canonical.encode("utf-8")).hexdigest()}))
    for name, text in [("not JSON", "{a: 1}"), ("duplicate member", '{"a": 1, "a": 2}'),
                       ("number out of the double range", '{"n": 1e400}')]:
        out.append(case("argument hash refused: " + name, "idempotency.argument_hash",
                        {"arguments_json": text}, {"error": True}))
    return out


HASH_A = hashlib.sha256(b'{"x":1}').hexdigest()
HASH_B = hashlib.sha256(b'{"x":2}').hexdigest()
OWNER = "6f1c2a64-5d9e-4b7a-9c1e-0a2b3c4d5e6f"

RESULTS = [
    ("plain result", '{"content":[{"type":"text","text":"ok"}]}'),
    ("2026-07-28 result, resultType first", '{"resultType":"complete","content":[{"type":"text","text":"ok"}]}'),
    ("2026-07-28 result, resultType last, members out of order",
     '{"structuredContent":{"z":[{"b":2,"a":1}],"a":1.0},"isError":false,"content":[],"_meta":{"t":1,"a":"x"},'
     '"resultType":"complete"}'),
    ("names sorted by UTF-16 code units", r'{"content":[],"_meta":{"\uff61":2,"\ud83d\ude00":1,"a":3,"B":4,"_":5}}'),
    ("result with _meta", '{"content":[],"_meta":{"trace":"t-1","n":2}}'),
    ("result with _meta first and spacing",
     '{ "_meta" : { "agentarea/replayed" : false, "z" : [1, 2.50] }, "isError" : true, "content" : [ ] }'),
    ("result with structured content and unicode",
     r'{"content":[{"type":"text","text":"caf\u00e9 \u2603 \"q\""}],"structuredContent":{"k":-0.5,"big":12345678901234567890}}'),
    ("result whose _meta is not an object", '{"content":[],"_meta":null}'),
]


def running_text(hash, owner):
    return compact({"state": "running", "hash": hash, "owner": owner})


# Protocol revisions (CONTRACT §5, replays across protocol revisions).
RESULT_TYPE = "resultType"
FIRST_WITH_RESULT_TYPE = "2026-07-28"
DATE_DIGITS = "0123456789"


def result_type_required(revision):
    """2026-07-28 and later carry resultType, earlier dates do not; a
    revision that is not a YYYY-MM-DD date (none known: "") gets the form
    every revision accepts, with it."""
    is_date = len(revision) == 10 and all(
        (c == "-") if i in (4, 7) else (c in DATE_DIGITS) for i, c in enumerate(revision))
    return not is_date or revision >= FIRST_WITH_RESULT_TYPE


def sorted_tree(v):
    """Every object's members in RFC 8785 order (UTF-16 code units), values as read."""
    if isinstance(v, dict):
        return {k: sorted_tree(v[k]) for k in sorted(v, key=utf16_key)}
    if isinstance(v, list):
        return [sorted_tree(x) for x in v]
    return v


def neutral(result_json):
    """The stored form of a result: no top-level resultType ("complete"
    only; anything else is no finished call), members in canonical order."""
    r = loads(result_json)
    if not isinstance(r, dict):
        return None
    if RESULT_TYPE in r:
        if r[RESULT_TYPE] != "complete":
            return None
        del r[RESULT_TYPE]
    return sorted_tree(r)


def done_text(hash, result_json):
    return "{" + '"state":"done","hash":' + escape(hash) + ',"result":' + compact(neutral(result_json)) + "}"


def replayed_text(result_json, revision):
    """The replay of a stored result (any writer's) for a request of `revision`."""
    r = loads(result_json)
    r.pop(RESULT_TYPE, None)
    meta = r.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta[REPLAYED] = True
    r["_meta"] = meta
    if result_type_required(revision):
        r[RESULT_TYPE] = "complete"
    return compact(sorted_tree(r))


def idempotency_entries():
    out = [
        case("entry: running", "idempotency.entry",
             {"state": "running", "hash": HASH_A, "owner": OWNER},
             {"text": running_text(HASH_A, OWNER)}),
        case("entry: running with an owner to escape", "idempotency.entry",
             {"state": "running", "hash": HASH_A, "owner": 'o"\\\u00e9'},
             {"text": running_text(HASH_A, 'o"\\\u00e9')}),
    ]
    for name, text in RESULTS:
        out.append(case("entry: done, " + name, "idempotency.entry",
                        {"state": "done", "hash": HASH_A, "result_json": text},
                        {"text": done_text(HASH_A, text)}))
    for name, text in [("an array", "[]"), ("a string", '"ok"'), ("not JSON", "{"),
                       ("input_required (a round of a multi-round-trip call)",
                        '{"resultType":"input_required","inputRequests":{}}'),
                       ("a resultType not understood", '{"resultType":"Complete","content":[]}'),
                       ("a resultType that is not a string", '{"resultType":null,"content":[]}')]:
        out.append(case("entry: done refused, the result is " + name, "idempotency.entry",
                        {"state": "done", "hash": HASH_A, "result_json": text},
                        {"error": "idempotency_entry_invalid"}))
    return out


# The revisions a replay is checked for: every published one, a later
# date, and revisions that are not dates (none known, a draft's name).
REVISIONS = ["2025-11-25", "2026-07-28"]
MORE_REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2026-07-27", "2027-01-01", "", "draft",
                  "2026-7-28", "2026-07-28 "]


def idempotency_held():
    out = []
    for name, text in RESULTS:
        held = done_text(HASH_A, text)
        for revision in REVISIONS:
            out.append(case("held: done, same arguments, replayed at %s: %s" % (revision, name),
                            "idempotency.held", {"held": held, "hash": HASH_A, "revision": revision},
                            {"answer": "replay", "replayed": replayed_text(text, revision)}))
        out.append(case("held: done, other arguments, conflict: " + name, "idempotency.held",
                        {"held": held, "hash": HASH_B, "revision": REVISIONS[1]}, {"answer": "conflict"}))
    plain = done_text(HASH_A, RESULTS[0][1])
    for revision in MORE_REVISIONS:
        out.append(case("held: done, replayed at revision %r" % revision, "idempotency.held",
                        {"held": plain, "hash": HASH_A, "revision": revision},
                        {"answer": "replay", "replayed": replayed_text(RESULTS[0][1], revision)}))
    # Entries as written before results were stored era-neutral: a stored
    # resultType and the writer's member order replay as the core's own.
    legacy = ('{"state":"done","hash":"%s","result":{"structuredContent":{"n":1,"a":[{"y":2.50,"b":null}]},'
              '"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false,'
              '"_meta":{"trace":"t"}}}' % HASH_A)
    legacy_result = legacy[legacy.index('"result":') + 9:-1]
    for revision in REVISIONS:
        out.append(case("held: an entry with a stored resultType and another order, replayed at " + revision,
                        "idempotency.held", {"held": legacy, "hash": HASH_A, "revision": revision},
                        {"answer": "replay", "replayed": replayed_text(legacy_result, revision)}))
    out += [
        case("held: running, same arguments, in flight", "idempotency.held",
             {"held": running_text(HASH_A, OWNER), "hash": HASH_A, "revision": REVISIONS[0]},
             {"answer": "in_flight"}),
        case("held: running, other arguments, conflict", "idempotency.held",
             {"held": running_text(HASH_A, OWNER), "hash": HASH_B, "revision": REVISIONS[1]},
             {"answer": "conflict"}),
        case("held: written by another writer (spacing, member order, extra member)", "idempotency.held",
             {"held": '{"owner": "x", "extra": 1, "hash": "%s", "state": "running"}' % HASH_A, "hash": HASH_A,
              "revision": REVISIONS[1]},
             {"answer": "in_flight"}),
        case("held: Python json.dumps spacing, done", "idempotency.held",
             {"held": '{"state": "done", "hash": "%s", "result": {"content": []}}' % HASH_A, "hash": HASH_A,
              "revision": REVISIONS[0]},
             {"answer": "replay", "replayed": '{"_meta":{"%s":true},"content":[]}' % REPLAYED}),
    ]
    malformed = [
        ("not JSON", "not json"),
        ("empty", ""),
        ("truncated", running_text(HASH_A, OWNER)[:-3]),
        ("a JSON string", '"%s"' % HASH_A),
        ("an array", "[]"),
        ("no state", '{"hash":"%s","owner":"o"}' % HASH_A),
        ("unknown state", '{"state":"failed","hash":"%s","owner":"o"}' % HASH_A),
        ("running without owner", '{"state":"running","hash":"%s"}' % HASH_A),
        ("owner not a string", '{"state":"running","hash":"%s","owner":7}' % HASH_A),
        ("hash not a string", '{"state":"running","hash":1,"owner":"o"}'),
        ("done without result", '{"state":"done","hash":"%s"}' % HASH_A),
        ("done with a result that is not an object", '{"state":"done","hash":"%s","result":"ok"}' % HASH_A),
        ("duplicate member", '{"state":"running","state":"done","hash":"%s","owner":"o"}' % HASH_A),
        ("another program's value", "1"),
        ("done with an input_required result",
         '{"state":"done","hash":"%s","result":{"resultType":"input_required","inputRequests":{}}}' % HASH_A),
        ("done with a resultType that is not a string",
         '{"state":"done","hash":"%s","result":{"resultType":1,"content":[]}}' % HASH_A),
    ]
    for name, text in malformed:
        out.append(case("held: malformed, " + name, "idempotency.held",
                        {"held": text, "hash": HASH_A, "revision": REVISIONS[1]},
                        {"error": "idempotency_entry_invalid"}))
    out.append(case("held: malformed, bytes that are not UTF-8", "idempotency.held",
                    {"held_hex": (b'{"state":"running","hash":"\xff"}').hex(), "hash": HASH_A,
                     "revision": REVISIONS[0]},
                    {"error": "idempotency_entry_invalid"}))
    return out


def wait_answer(now, deadline, rnd):
    if now >= deadline:
        return {"answer": "in_progress"}
    pause = min(DEFAULTS["first_pause_ms"] * 2 ** rnd, DEFAULTS["max_pause_ms"])
    return {"sleep_ms": max(1, min(pause, deadline - now))}


def idempotency_waits():
    rows = [(0, 60000, 0), (0, 60000, 1), (0, 60000, 4), (0, 60000, 5), (0, 60000, 60),
            (59995, 60000, 3), (59999, 60000, 9), (60000, 60000, 0), (70000, 60000, 2)]
    return [case("wait: now %d, deadline %d, round %d" % row, "idempotency.wait",
                 {"now_ms": row[0], "deadline_ms": row[1], "round": row[2]}, wait_answer(*row))
            for row in rows]


def idempotency_refusals():
    out = []
    for outcome, key in [("conflict", "k-1"), ("in_progress", "k \"2\""), ("unverified", "")]:
        result = {"content": [{"type": "text", "text": REFUSAL_TEXT[outcome].format(key=key)}],
                  "isError": True, "_meta": {OUTCOME_KEY: outcome}}
        out.append(case("refusal: " + outcome, "idempotency.refusal",
                        {"outcome": outcome, "key": key}, {"result_json": compact(result)}))
    return out


def idempotency_redis_commands():
    out = []
    rows = [("default prefix", KEY_PREFIX, "tool", "k-1", 1800000, 86400000),
            ("other prefix, awkward namespace", "app:", "a:b%", "k:2", 1, 1500),
            ("lease and ttl of 0 are 1 ms", KEY_PREFIX, "", "k", 0, 0)]
    result = dict(RESULTS)["2026-07-28 result, resultType last, members out of order"]
    for name, prefix, ns, key, lease, ttl in rows:
        k = prefix + store_key(ns, key)
        mine = running_text(HASH_A, OWNER)
        finished = done_text(HASH_A, result)
        out.append(case("redis commands: " + name, "idempotency.redis_commands",
                        {"prefix": prefix, "namespace": ns, "key": key, "hash": HASH_A, "owner": OWNER,
                         "result_json": result, "lease_ms": lease, "ttl_ms": ttl},
                        {"claim": ["SET", k, mine, "NX", "PX", str(max(1, lease))],
                         "read": ["GET", k],
                         "complete": ["SET", k, finished, "PX", str(max(1, ttl))],
                         "release": ["EVAL", RELEASE_SCRIPT, "1", k, mine]}))
    return out


# Reply types as bindings hand them over: nil, status (or a decoded string),
# bulk bytes (as UTF-8 text here, or hex), integer, error.
# `OK` is `OK` whether the client hands it over as a status or as bulk
# bytes (a client that maps every string to bytes cannot tell them apart).
MEANINGS = {
    ("claim", "status", "OK"): "claimed",
    ("claim", "bulk", "OK"): "claimed",
    ("claim", "nil", None): "taken",
    ("read", "nil", None): "gone",
    ("complete", "status", "OK"): "stored",
    ("complete", "bulk", "OK"): "stored",
    ("release", "integer", 1): "released",
    ("release", "integer", 0): "not_held",
}


def reply_meaning(command, type, value):
    if (command, type, value) in MEANINGS:
        return MEANINGS[(command, type, value)]
    if command == "read" and type in ("bulk", "status"):
        return "held"
    return "failed"


def idempotency_redis_replies():
    entry = running_text(HASH_A, OWNER)
    replies = [("nil", None), ("status", "OK"), ("status", "QUEUED"), ("bulk", "OK"), ("bulk", entry),
               ("status", entry), ("integer", 0), ("integer", 1), ("integer", 2), ("integer", -1),
               ("error", "ERR wrong number of arguments"), ("error", "NOSCRIPT No matching script")]
    out = []
    for command in ("claim", "read", "complete", "release"):
        for type, value in replies:
            if command != "read" and value == entry:
                continue
            reply = {"type": type} if value is None else {"type": type, "value": value}
            meaning = reply_meaning(command, type, value)
            expect = {"meaning": meaning}
            if meaning == "held":
                expect["held"] = value
            shown = "" if value is None else " " + (str(value) if len(str(value)) < 40 else "<entry>")
            out.append(case("redis reply: %s, %s%s" % (command, type, shown), "idempotency.redis_reply",
                            {"command": command, "reply": reply}, expect))
    out.append(case("redis reply: read, bulk bytes that are not UTF-8", "idempotency.redis_reply",
                    {"command": "read", "reply": {"type": "bulk", "value_hex": "ff00"}},
                    {"meaning": "held", "held_hex": "ff00"}))
    return out


# The replay guard's claim (CONTRACT §3): one key per token id, set only if
# absent, kept for the token's remaining life and never under one second.
REPLAY_PREFIX = "toolctx:jti:"
REPLAY_REASON = {"first_use": None, "used": "token_replayed", "failed": "internal_error"}


def replay_redis_claims():
    rows = [("default prefix", REPLAY_PREFIX, "j-1", 130, 100),
            ("other prefix, colons in the id", "app:", "a:b:c", 1000, 999),
            ("empty prefix, unicode id", "", "jti-\u00e9\u2603\U0001f600", 3600, 0),
            ("until equals now is one second", REPLAY_PREFIX, "j", 100, 100),
            ("until before now is one second", REPLAY_PREFIX, "j", 100, 200),
            ("large times", REPLAY_PREFIX, "%", 4102444800, 1767225600)]
    out = []
    for name, prefix, jti, until, now in rows:
        ms = max(until - now, 1) * 1000
        out.append(case("replay claim: " + name, "replay.redis_claim",
                        {"prefix": prefix, "jti": jti, "until": until, "now": now},
                        {"args": ["SET", prefix + jti, "1", "NX", "PX", str(ms)]}))
    return out


def replay_redis_replies():
    replies = [("nil", None), ("status", "OK"), ("bulk", "OK"), ("status", "ok"), ("bulk", "ok"),
               ("status", "OK "), ("status", "QUEUED"), ("status", ""), ("bulk", ""), ("bulk", "1"),
               ("integer", 1), ("integer", 0), ("error", "OK"), ("error", "OOM command not allowed"),
               ("other", None)]
    out = []
    for type, value in replies:
        if (type, value) in (("status", "OK"), ("bulk", "OK")):
            answer = "first_use"
        elif type == "nil":
            answer = "used"
        else:
            answer = "failed"
        reply = {"type": type} if value is None else {"type": type, "value": value}
        shown = "" if value is None else " %r" % value
        out.append(case("replay reply: %s%s" % (type, shown), "replay.redis_reply",
                        {"reply": reply}, {"answer": answer, "reason": REPLAY_REASON[answer]}))
    return out


def idempotency_defaults():
    return [case("defaults", "idempotency.defaults", {}, dict(DEFAULTS))]


SECTIONS = [
    idempotency_store_keys,
    idempotency_argument_hashes,
    idempotency_entries,
    idempotency_held,
    idempotency_waits,
    idempotency_refusals,
    idempotency_redis_commands,
    idempotency_redis_replies,
    idempotency_defaults,
    replay_redis_claims,
    replay_redis_replies,
    helpers_limits_cases.result_limit_cases,
    helpers_limits_cases.progress_cases,
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


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate_helpers.py", HERE, lambda: {FILE: render()}))
