#!/usr/bin/env python3
"""Independent check of the committed helper vectors (stdlib only).

It shares no code with generate_helpers.py and derives every expectation a
second way: store keys by a regular expression (and read back: the
namespace comes back by unescaping), RFC 8785 through json.dumps with its
own UTF-16 sort and number writer, entries and replays compared as parsed
trees with number texts kept and no whitespace outside strings (a stored
result without `resultType` and every object sorted by its own UTF-16
key; a replay stamped `resultType` by comparing the revision's year,
month and day as integers), entry validation by its own model, the wait by stepping a doubling pause, Redis
commands built from the CONTRACT §5 table, reply meanings from a table per
command; result limits and progress in selfcheck_helpers_limits.py.
Exit status 1 on any disagreement.

    python3 tests/vectors/selfcheck_helpers.py [file]
"""

import hashlib
import json
import os
import re
import sys
import urllib.parse

import selfcheck_helpers_limits

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = ("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
          "end return 0")
MARK = "agentarea/replayed"


class Obj(list):
    """An object in an `otree`: its members as [name, value] lists, in order."""


def otree(text):
    """A JSON text as a tree that tells objects (Obj) from arrays, numbers as text."""
    return json.loads(text, object_pairs_hook=lambda ps: Obj([list(p) for p in ps]), parse_int=str,
                      parse_float=str)


def ordered(v):
    """Every object's members sorted by the UTF-16 units of their names."""
    if isinstance(v, Obj):
        return Obj([[k, ordered(x)] for k, x in sorted(v, key=lambda m: units(m[0]))])
    if isinstance(v, list):
        return [ordered(x) for x in v]
    return v


def stamped(revision):
    """Whether a replay for `revision` carries resultType: a date
    YYYY-MM-DD from 2026-07-28 on, or anything that is not such a date."""
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", revision)
    if m is None:
        return True
    return tuple(int(g) for g in m.groups()) >= (2026, 7, 28)


def result_kind_ok(result):
    """A stored or storable result: resultType absent or exactly "complete"."""
    kinds = [v for k, v in result if k == "resultType"]
    return not kinds or kinds == ["complete"]


def strict(text):
    """Parse or None: duplicates and non-finite numbers refused."""
    def pairs(items):
        if len({k for k, _ in items}) != len(items):
            raise ValueError("dup")
        return dict(items)
    try:
        v = json.loads(text, object_pairs_hook=pairs, parse_constant=lambda c: 1 / 0)
    except (ValueError, ZeroDivisionError):
        return None
    return v


def bare(text):
    """No whitespace outside strings."""
    inside = escaped = False
    for ch in text:
        if inside:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                inside = False
        elif ch == '"':
            inside = True
        elif ch in " \t\r\n":
            return False
    return True


def units(name):
    out = []
    for ch in name:
        c = ord(ch)
        if c > 0xFFFF:
            c -= 0x10000
            out += [0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF)]
        else:
            out.append(c)
    return out


def canon(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("not finite")
        return str(int(v)) if v.is_integer() else repr(v)
    if isinstance(v, list):
        return "[%s]" % ",".join(canon(x) for x in v)
    return "{%s}" % ",".join("%s:%s" % (json.dumps(k, ensure_ascii=False), canon(v[k]))
                             for k in sorted(v, key=units))


def raw(d, name):
    if name in d:
        return d[name].encode("utf-8")
    return bytes.fromhex(d[name + "_hex"])


def check_store_key(i, e):
    sk = re.sub(r"[%:]", lambda m: "%%%02X" % ord(m.group()), i["namespace"]) + ":" + i["key"]
    ns, _, key = e["store_key"].partition(":")
    assert urllib.parse.unquote(ns) == i["namespace"] and key == i["key"], "not read back"
    return {"store_key": sk, "redis_key": i["prefix"] + sk}


def check_argument_hash(i, e):
    v = strict(i["arguments_json"])
    try:
        c = canon(v) if v is not None or i["arguments_json"].strip() == "null" else None
    except ValueError:
        c = None
    if c is None:
        return {"error": True}
    return {"canonical": c, "hash": hashlib.sha256(c.encode()).hexdigest()}


def entry_model(data):
    """The entry an entry text holds, or None: state/hash strings, owner a
    string for running, result an object for done."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    v = strict(text)
    if not isinstance(v, dict) or not isinstance(v.get("hash"), str):
        return None
    if v.get("state") == "running" and isinstance(v.get("owner"), str):
        return ("running", v["hash"])
    if v.get("state") == "done" and isinstance(v.get("result"), dict) and v["result"].get(
            "resultType", "complete") == "complete":
        return ("done", v["hash"])
    return None


def check_entry(i, e):
    if i["state"] == "running":
        want = json.dumps({"state": "running", "hash": i["hash"], "owner": i["owner"]},
                          separators=(",", ":"), ensure_ascii=False)
        return {"text": want}
    if not isinstance(strict(i["result_json"]), dict) or not result_kind_ok(otree(i["result_json"])):
        return {"error": "idempotency_entry_invalid"}
    got = e.get("text", "")
    assert bare(got), "whitespace left in the entry"
    assert otree(got) == [["state", "done"], ["hash", i["hash"]], ["result", stored(i["result_json"])]], "tree"
    return {"text": got}


def stored(result_json):
    """The era-neutral result tree: no resultType, every object sorted."""
    return ordered(Obj([m for m in otree(result_json) if m[0] != "resultType"]))


def replay_tree(result, revision):
    """The replay of a stored result tree for `revision`: resultType
    dropped, `_meta` an object with the mark true (its other members kept;
    anything else replaced, or added), resultType "complete" added where the
    revision is stamped; then every object sorted."""
    out = Obj([list(m) for m in result if m[0] != "resultType"])
    metas = [m for m in out if m[0] == "_meta"]
    if metas and isinstance(metas[0][1], Obj):
        meta = Obj([x for x in metas[0][1] if x[0] != MARK] + [[MARK, True]])
    else:
        meta = Obj([[MARK, True]])
    out = Obj([m for m in out if m[0] != "_meta"] + [["_meta", meta]])
    if stamped(revision):
        out.append(["resultType", "complete"])
    return ordered(out)


def check_held(i, e):
    data = raw(i, "held")
    model = entry_model(data)
    if model is None:
        return {"error": "idempotency_entry_invalid"}
    state, h = model
    if h != i["hash"]:
        return {"answer": "conflict"}
    if state == "running":
        return {"answer": "in_flight"}
    result = [v for k, v in otree(data.decode("utf-8")) if k == "result"][0]
    got = e.get("replayed", "")
    assert bare(got), "whitespace left in the replay"
    assert otree(got) == replay_tree(result, i["revision"]), "replay tree"
    assert any(k == "resultType" for k, _ in otree(got)) == stamped(i["revision"]), "resultType"
    return {"answer": "replay", "replayed": got}


def check_wait(i, e):
    now, deadline, rnd = i["now_ms"], i["deadline_ms"], i["round"]
    if now >= deadline:
        return {"answer": "in_progress"}
    pause = 10
    for _ in range(rnd):
        pause = min(pause * 2, 250)
    return {"sleep_ms": max(1, min(pause, deadline - now))}


TEXTS = {
    "conflict": lambda k: "idempotency conflict: key %s was already used with different arguments" % k,
    "in_progress": lambda k: "call %s is still running; retry later" % k,
    "unverified": lambda k: ("refused: this tool is idempotent and the call carries no verified toolctx context, "
                             "so it cannot be guarded (is toolctx in front of the MCP server, and its context "
                             "handed to the tool?)"),
}


def check_refusal(i, e):
    want = {"content": [{"type": "text", "text": TEXTS[i["outcome"]](i["key"])}], "isError": True,
            "_meta": {"toolctx/idempotency": i["outcome"]}}
    got = e["result_json"]
    assert bare(got) and json.loads(got) == want, "refusal"
    return {"result_json": got}


def check_redis_commands(i, e):
    k = i["prefix"] + i["namespace"].replace("%", "%25").replace(":", "%3A") + ":" + i["key"]
    mine = json.dumps({"state": "running", "hash": i["hash"], "owner": i["owner"]}, separators=(",", ":"))
    done = e["complete"][2]
    assert otree(done) == [["state", "done"], ["hash", i["hash"]], ["result", stored(i["result_json"])]]
    ms = lambda n: "%d" % (n if n > 0 else 1)  # noqa: E731
    return {"claim": ["SET", k, mine, "NX", "PX", ms(i["lease_ms"])], "read": ["GET", k],
            "complete": ["SET", k, done, "PX", ms(i["ttl_ms"])], "release": ["EVAL", SCRIPT, "1", k, mine]}


OK = {("status", "OK"), ("bulk", "OK")}
ACCEPTED = {
    "claim": {**{ok: "claimed" for ok in OK}, ("nil", None): "taken"},
    "complete": {ok: "stored" for ok in OK},
    "release": {("integer", 1): "released", ("integer", 0): "not_held"},
}


def check_redis_reply(i, e):
    r, cmd = i["reply"], i["command"]
    value = r.get("value")
    if cmd == "read":
        if r["type"] == "nil":
            return {"meaning": "gone"}
        if r["type"] in ("bulk", "status"):
            if "value_hex" in r:
                return {"meaning": "held", "held_hex": r["value_hex"]}
            return {"meaning": "held", "held": value}
        return {"meaning": "failed"}
    return {"meaning": ACCEPTED[cmd].get((r["type"], value), "failed")}


def check_defaults(i, e):
    return {"ttl_ms": 86400000, "lease_ms": 1800000, "wait_ms": 60000, "memory_entries": 10000,
            "store_timeout_ms": 500, "claim_rounds": 3, "first_pause_ms": 10, "max_pause_ms": 250,
            "key_prefix": "toolctx:idem:", "release_script": SCRIPT, "replayed_key": MARK,
            "outcome_key": "toolctx/idempotency"}


def check_replay_claim(i, e):
    # Seconds left of the token, in ms; Redis refuses PX 0, so one second at least.
    left = i["until"] - i["now"]
    return {"args": ["SET", "%s%s" % (i["prefix"], i["jti"]), "1", "NX", "PX", "%d000" % (left if left > 0 else 1)]}


def check_replay_reply(i, e):
    r = i["reply"]
    if r["type"] == "nil":
        return {"answer": "used", "reason": "token_replayed"}
    if r["type"] in ("status", "bulk") and r.get("value") == "OK":
        return {"answer": "first_use", "reason": None}
    return {"answer": "failed", "reason": "internal_error"}


CHECKS = {
    "idempotency.store_key": check_store_key,
    "idempotency.argument_hash": check_argument_hash,
    "idempotency.entry": check_entry,
    "idempotency.held": check_held,
    "idempotency.wait": check_wait,
    "idempotency.refusal": check_refusal,
    "idempotency.redis_commands": check_redis_commands,
    "idempotency.redis_reply": check_redis_reply,
    "idempotency.defaults": check_defaults,
    "replay.redis_claim": check_replay_claim,
    "replay.redis_reply": check_replay_reply,
    **selfcheck_helpers_limits.CHECKS,
}


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(HERE, "helpers.json")
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if doc.get("format") != "toolctx-helpers":
        print("%s: not helper vectors" % path)
        return 1
    passed = failed = 0
    for c in doc["cases"]:
        check = CHECKS.get(c["kind"])
        try:
            if check is None:
                raise AssertionError("no check for kind %r" % c["kind"])
            want = check(c["input"], c["expect"])
            if want != c["expect"]:
                raise AssertionError("expected %r, the check derives %r" % (c["expect"], want))
            passed += 1
        except (AssertionError, KeyError, ValueError, TypeError) as err:
            failed += 1
            print("%s: %s: %s" % (os.path.relpath(path), c["name"], err))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
