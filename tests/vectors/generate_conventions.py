#!/usr/bin/env python3
"""Writes the tables for the neighbouring conventions (CONTRACT §6 and §7)
into tests/vectors/conventions/, without using any of toolctx's code:

- tool_names.json: model-facing tool names, computed here from the rules as
  documented in crates/core/src/names.rs;
- tuix_keys.json: Tuix idempotency keys, SHA-256 over a canonical JSON form
  written here with the standard library (ASCII member names and integer or
  string values only, where Python's sort order and number text agree with
  RFC 8785; the number forms themselves are checked against RFC 8785's own
  test data in the core's unit tests);
- aivax.json: AIVAX calls in the conformance vector format, with nonces
  hashed by Python's `bcrypt` package (PyPI), fixed salts.

Run it again to rewrite the files; `--check` compares instead and exits 1
when a file differs. Needs `bcrypt` (scripts/test-core installs it).
"""

import base64
import calendar
import datetime
import hashlib
import json
import os
import sys
import unicodedata

import bcrypt

import vectorfile

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conventions")

# ---------------------------------------------------------------- tool names

CYRILLIC = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh",
    "з": "z", "и": "i", "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o",
    "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f", "х": "kh", "ц": "ts",
    "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y", "ь": "", "э": "e", "ю": "iu",
    "я": "ia", "є": "ie", "і": "i", "ї": "i", "ґ": "g", "ў": "u", "ђ": "dj", "ј": "j",
    "љ": "lj", "њ": "nj", "ћ": "c", "џ": "dz", "ѓ": "gj", "ќ": "kj", "ѕ": "dz",
}
SPECIAL = {"æ": "ae", "ð": "d", "ø": "o", "þ": "th", "ß": "ss", "đ": "d", "ħ": "h",
           "ı": "i", "ĳ": "ij", "ĸ": "k", "ŀ": "l", "ł": "l", "ŉ": "n", "ŋ": "n",
           "œ": "oe", "ŧ": "t", "ſ": "s"}


def latin_base(c):
    """Base letter of a Latin-1 Supplement / Latin Extended-A letter."""
    if c in SPECIAL:
        return SPECIAL[c]
    if not ("\u00c0" <= c <= "\u017f"):
        return None
    base = unicodedata.normalize("NFD", c)[0]
    return base if base.isascii() and base.isalpha() else None


def allowed(c):
    return c.isascii() and (c.isalnum() or c in "_-")


def server_label(name):
    if name.isascii():
        return "".join(c if allowed(c) else "_" for c in name.lower())
    out, gap = "", False
    for c in name.lower():
        if c.isascii() and (c.isalnum() or c == "-"):
            piece = c
        elif c in CYRILLIC:
            piece = CYRILLIC[c]
        elif latin_base(c) is not None:
            piece = latin_base(c)
        else:
            if not ("\u0300" <= c <= "\u036f"):
                gap = True
            continue
        if piece:
            if gap and out:
                out += "_"
            gap = False
            out += piece
    return out or "server"


def qualified(instance, tool):
    name = "mcp__" + server_label(instance) + "__" + "".join(c if allowed(c) else "_" for c in tool)
    if len(name) > 64:
        name = name[:55] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return name


NAME_CASES = [
    ("contract: ASCII instance", "My GitHub!", "create_issue"),
    ("contract: Cyrillic instance", "Constractio — инструменты сметчика", "estimate"),
    ("contract: nothing readable", "工具", "lookup"),
    ("ASCII keeps hyphen and underscore", "orders-v2_prod", "get-order_v1"),
    ("tool characters become underscores", "orders", "get order (v2)!"),
    ("non-ASCII tool characters, one underscore each", "orders", "заказ"),
    ("accents dropped", "Café Ünïcode", "x"),
    ("decomposed accents dropped", "Cafe\u0301 U\u0308", "x"),
    ("sharp s and ligatures", "Straße Œuvre Æther", "x"),
    ("hard and soft signs vanish", "Объект Мышь", "x"),
    ("Ukrainian letters", "Київ ґанок", "x"),
    ("Serbian letters", "Ђорђе Љубав", "x"),
    ("runs collapse and trim", "  ¡¡ Привет —— мир !!  ", "x"),
    ("underscores inside a non-ASCII name collapse", "тест__тест", "x"),
    ("digits kept", "Сервер 42", "x"),
    ("emoji only", "🚀🚀", "x"),
    ("mixed CJK and Latin", "工具 Tools", "x"),
    ("exactly 64 characters stays", "orders", "t" * (64 - len("mcp__orders__"))),
    ("65 characters gets a digest", "orders", "t" * (65 - len("mcp__orders__"))),
    ("long Cyrillic instance", "Очень длинное название сервера инструментов", "получить_данные_по_заказу"),
    ("long tool", "GitHub", "x" * 200),
]

# --------------------------------------------------------------- Tuix keys


def canonical(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tuix_key(session_id, turn, tool, arguments):
    if isinstance(arguments, dict):
        arguments = {k: v for k, v in arguments.items() if v is not None and v != ""}
    doc = {"arguments": arguments, "sessionId": session_id, "tool": tool, "turn": turn}
    return hashlib.sha256(canonical(doc).encode("utf-8")).hexdigest()


TUIX_CASES = [
    ("seed example", "sess-1", "msg-1", "get_employees", '{"page":1}'),
    ("member order does not matter", "sess-1", "msg-1", "get_employees", '{"b":"2","a":1,"c":{"y":1,"x":2}}'),
    ("same, reordered", "sess-1", "msg-1", "get_employees", '{"c":{"x":2,"y":1},"a":1,"b":"2"}'),
    ("null and empty string ignored", "sess-1", "msg-1", "get_employees", '{"a":1,"b":"2","c":{"x":2,"y":1},"d":null,"e":""}'),
    ("nested null is kept", "sess-1", "msg-1", "get_employees", '{"a":{"n":null}}'),
    ("another turn", "sess-1", "msg-2", "get_employees", '{"page":1}'),
    ("another tool", "sess-1", "msg-1", "get_employee", '{"page":1}'),
    ("another session", "sess-2", "msg-1", "get_employees", '{"page":1}'),
    ("non-ASCII values", "sess-1", "msg-1", "create_invoice", '{"customer":"Zoë Ünal","amount":1200}'),
    ("no arguments", "sess-1", "msg-1", "ping", "{}"),
    ("arrays keep their order", "sess-1", "msg-1", "tag", '{"tags":["b","a"]}'),
]

# ------------------------------------------------------------------- AIVAX

HOOK_KEY = "aivax-hook-key-5f1c9e2a"
OTHER_KEY = "another-account-hook-key"
SALTS = {"a": b"$2b$04$abcdefghijklmnopqrstuu", "b": b"$2b$05$0123456789ABCDEFGHIJKu"}
NOW = 1767225600
STATUS = {"nonce_missing": (401, -32001), "nonce_invalid": (401, -32001), "context_malformed": (400, -32602),
          "credential_missing": (401, -32001), "batch_with_tools_call": (400, -32600),
          "duplicate_member": (400, -32600), "invalid_params": (400, -32602), "parse_error": (400, -32700)}


def nonce(key=HOOK_KEY, salt="a", prefix=None):
    h = bcrypt.hashpw(key.encode(), SALTS[salt]).decode()
    return prefix + h[4:] if prefix else h


def moment_unix(text):
    dt = datetime.datetime.fromisoformat(text)
    return calendar.timegm(dt.utctimetuple()), int(dt.utcoffset().total_seconds() // 60)


def aiv_body(meta, id=7, method="tools/call"):
    params = {"name": "get_weather", "arguments": {"location": "New York"}}
    if meta is not None:
        params["_meta"] = meta
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}, ensure_ascii=False)


def full_meta(**over):
    m = {
        "progressToken": 7,
        "_aiv_nonce": nonce(),
        "_aiv_external_user_id": "user-981",
        "_aiv_call_source": "WebChatClient",
        "_aiv_conversation_token": "conv-77",
        "_aiv_moment": "2025-09-09T16:58:05.0000000+00:00",
        "tenant_id": "tenant-3",
        "request_id": "req-41",
    }
    for k, v in over.items():
        if k in ("nonce", "external_user_id", "call_source", "conversation_token", "moment"):
            k = "_aiv_" + k
        if v is ...:
            m.pop(k, None)
        else:
            m[k] = v
    return m


def aivax_cases():
    cases = []

    def case(name, body, expect, headers=(), method="POST", config=None):
        c = {"name": name, "request": {"method": method, "headers": [["content-type", "application/json"], *headers],
                                       "body": body}, "expect": expect}
        if config:
            c["config"] = config
        cases.append(c)

    def reject(reason, id=7):
        status, code = STATUS[reason]
        return {"outcome": "reject", "status": status, "code": code, "reason": reason, "id": id}

    unix, offset = moment_unix("2025-09-09T16:58:05+00:00")
    case("valid nonce and every field", aiv_body(full_meta()), {"outcome": "accept", "context": {
        "nonce_verified": True, "external_user_id": "user-981", "call_source": "WebChatClient",
        "conversation_token": "conv-77", "moment": "2025-09-09T16:58:05.0000000+00:00", "moment_unix": unix,
        "moment_offset_minutes": offset, "metadata": {"tenant_id": "tenant-3", "request_id": "req-41"}}})
    case("nonce with cost 5 and another salt", aiv_body(full_meta(_aiv_nonce=nonce(salt="b"))),
         {"outcome": "accept", "context": {"nonce_verified": True}})
    for prefix in ("$2a$", "$2y$"):
        case("nonce with the %s prefix" % prefix, aiv_body(full_meta(_aiv_nonce=nonce(prefix=prefix))),
             {"outcome": "accept", "context": {"nonce_verified": True}})
    case("nonce of another account's key", aiv_body(full_meta(_aiv_nonce=nonce(OTHER_KEY))), reject("nonce_invalid"))
    good = nonce()
    case("nonce with one hash symbol changed", aiv_body(full_meta(_aiv_nonce=good[:-1] + ("a" if good[-1] != "a" else "b"))),
         reject("nonce_invalid"))
    case("nonce cost 31 is refused before any work", aiv_body(full_meta(_aiv_nonce="$2b$31$" + good[7:])),
         reject("nonce_invalid"))
    case("nonce cost 13 is over the default cap of 12", aiv_body(full_meta(_aiv_nonce="$2b$13$" + good[7:])),
         reject("nonce_invalid"))
    case("nonce cost 03 is below bcrypt's minimum", aiv_body(full_meta(_aiv_nonce="$2b$03$" + good[7:])),
         reject("nonce_invalid"))
    case("nonce with an unknown prefix", aiv_body(full_meta(_aiv_nonce="$2c$" + good[4:])), reject("nonce_invalid"))
    case("nonce truncated", aiv_body(full_meta(_aiv_nonce=good[:-1])), reject("nonce_invalid"))
    case("nonce compared as a string is not enough: the plain key", aiv_body(full_meta(_aiv_nonce=HOOK_KEY)),
         reject("nonce_invalid"))
    case("nonce that is a number", aiv_body(full_meta(_aiv_nonce=12)), reject("nonce_invalid"))
    case("nonce missing", aiv_body(full_meta(_aiv_nonce=...)), reject("nonce_missing"))
    case("nonce null (no hook key on the account)", aiv_body(full_meta(_aiv_nonce=None)), reject("nonce_missing"))
    case("no _meta at all", aiv_body(None), reject("nonce_missing"))
    case("nonce not required and missing", aiv_body(full_meta(_aiv_nonce=...)),
         {"outcome": "accept", "context": {"nonce_verified": False, "external_user_id": "user-981"}},
         config={"require_nonce": False})
    case("nonce not required but present and wrong", aiv_body(full_meta(_aiv_nonce=nonce(OTHER_KEY))),
         reject("nonce_invalid"), config={"require_nonce": False})
    case("cost cap raised to 13 still refuses cost 31", aiv_body(full_meta(_aiv_nonce="$2b$31$" + good[7:])),
         reject("nonce_invalid"), config={"max_bcrypt_cost": 13})
    case("null user and conversation", aiv_body(full_meta(external_user_id=None, conversation_token=None)),
         {"outcome": "accept", "context": {"external_user_id": None, "conversation_token": None}})
    case("unknown call source kept", aiv_body(full_meta(call_source="HoloDeckClient")),
         {"outcome": "accept", "context": {"call_source": "HoloDeckClient"}})
    for text in ("2025-09-09T19:58:05.123+03:00", "2025-09-09T08:28:05-08:30", "2024-02-29T23:59:59Z"):
        u, o = moment_unix(text.replace("Z", "+00:00"))
        case("moment %s" % text, aiv_body(full_meta(moment=text)),
             {"outcome": "accept", "context": {"moment": text, "moment_unix": u, "moment_offset_minutes": o}})
    for text in ("2025-09-09T16:58:05", "2025-02-29T00:00:00Z", "09/09/2025 16:58", "2025-09-09T16:58:05+0000", ""):
        case("moment %r refused" % text, aiv_body(full_meta(moment=text)), reject("context_malformed"))
    case("external user id that is a number", aiv_body(full_meta(external_user_id=981)), reject("context_malformed"))
    case("call source that is an object", aiv_body(full_meta(call_source={"x": 1})), reject("context_malformed"))
    case("metadata keeps string members only", aiv_body(full_meta(tenant_id="t", count=3, flag=True)),
         {"outcome": "accept", "context": {"metadata": {"tenant_id": "t", "request_id": "req-41"}}})
    case("unknown _aiv field tolerated, not metadata", aiv_body(full_meta(_aiv_future="x")),
         {"outcome": "accept", "context": {"metadata": {"tenant_id": "tenant-3", "request_id": "req-41"}}})
    # Steps 0 to 7 are the same as for AgentArea calls.
    case("GET passes", "", {"outcome": "pass"}, method="GET")
    case("tools/list passes", aiv_body(full_meta(), method="tools/list"), {"outcome": "pass"})
    case("batch with tools/call", "[" + aiv_body(full_meta()) + "]", reject("batch_with_tools_call", None))
    case("duplicate member in _meta", aiv_body(full_meta()).replace('"tenant_id"', '"request_id":"x","tenant_id"', 1),
         reject("duplicate_member", None))
    case("not JSON", "{", reject("parse_error", None))
    case("params not an object", json.dumps({"jsonrpc": "2.0", "id": "s-1", "method": "tools/call", "params": 1}),
         reject("invalid_params", "s-1"))
    case("credential missing", aiv_body(full_meta()), reject("credential_missing", None),
         config={"credential": {"header": "Authorization", "values": ["Bearer aivax-gateway"]}})
    case("credential given", aiv_body(full_meta()), {"outcome": "accept", "context": {"nonce_verified": True}},
         headers=[["authorization", "Bearer aivax-gateway"]],
         config={"credential": {"header": "Authorization", "values": ["Bearer aivax-gateway"]}})
    # What reaches the upstream (CONTRACT §7, precise point), AgentArea's
    # forward.json rule on the AIVAX fields.
    fwd = {"headers": {"nonce_verified": "x-aivax-nonce-verified", "external_user_id": "X-Aivax-User",
                       "call_source": "x-aivax-source", "conversation_token": "x-aivax-conversation",
                       "moment": "x-aivax-moment", "moment_unix": "x-aivax-moment-unix",
                       "moment_offset_minutes": "x-aivax-moment-offset", "metadata": "x-aivax-metadata"},
           "tuix": True}
    names = [n.lower() for n in fwd["headers"].values()] + ["x-session-id", "x-idempotency-key"]
    spoofed = [[h, "spoofed"] for n in names for h in (n.upper(), n.title())]
    text = "2025-09-09T08:28:05.5-08:30"
    u, o = moment_unix("2025-09-09T08:28:05-08:30")
    meta = full_meta(external_user_id="Zoë 100%", call_source="Web Chat", moment=text, tenant_id="t ü",
                     sessionId="a b", idempotencyKey=5)
    forward = {"x-aivax-nonce-verified": "true", "x-aivax-user": "Zo%C3%AB%20100%25",
               "x-aivax-source": "Web%20Chat", "x-aivax-conversation": "conv-77", "x-aivax-moment": text,
               "x-aivax-moment-unix": str(u), "x-aivax-moment-offset": str(o),
               "x-aivax-metadata": header_text(canonical(flat_metadata(meta))),
               "x-session-id": "a%20b", "x-idempotency-key": "5"}
    assert o == -510 and forward["x-aivax-metadata"] == \
        '{"request_id":"req-41","sessionId":"a%20b","tenant_id":"t%20%C3%BC"}'
    case("forwarded headers: every field, spoofed copies replaced", aiv_body(meta),
         {"outcome": "accept", "context": {"nonce_verified": True}, "forward": forward},
         headers=spoofed, config={"forward": fwd})
    meta = full_meta(external_user_id=None, conversation_token=None, call_source=..., moment=...,
                     tenant_id=..., request_id=..., sessionId=None, idempotencyKey="")
    # An empty string forwards no header, as null does (CONTRACT §7).
    forward = dict({n: None for n in names}, **{"x-aivax-nonce-verified": "true",
                                                  "x-aivax-metadata": '{"idempotencyKey":""}'})
    case("forwarded headers: null, absent and empty fields forward nothing, spoofed copies removed",
         aiv_body(meta), {"outcome": "accept", "context": {"nonce_verified": True}, "forward": forward},
         headers=spoofed, config={"forward": fwd})
    case("forwarded headers: tools/list passes with spoofed copies removed",
         aiv_body(full_meta(sessionId="s-1"), method="tools/list"),
         {"outcome": "pass", "forward": {n: None for n in names}}, headers=spoofed, config={"forward": fwd})
    return cases


def flat_metadata(meta):
    """The AIVAX metadata: every string member of `_meta` but the `_aiv_*` ones
    (the Tuix members included)."""
    return {k: v for k, v in meta.items() if isinstance(v, str) and not k.startswith("_aiv_")}


def header_text(value):
    """CONTRACT §7: UTF-8 bytes `!`..`~` but `%` kept, every other byte %XX."""
    return "".join(chr(b) if 0x21 <= b <= 0x7e and b != 0x25 else "%%%02X" % b for b in value.encode("utf-8"))


def render():
    names = {
        "description": "Model-facing tool names: mcp__<server>__<tool> (CONTRACT §6, rules in crates/core/src/names.rs)",
        "cases": [{"name": n, "instance": i, "tool": t, "expected": qualified(i, t)} for n, i, t in NAME_CASES],
    }
    tuix = {
        "description": "Tuix idempotency keys: SHA-256 of the canonical {arguments, sessionId, tool, turn}",
        "cases": [{"name": n, "session_id": s, "turn": u, "tool": t, "arguments": a,
                   "expected": tuix_key(s, u, t, json.loads(a))} for n, s, u, t, a in TUIX_CASES],
    }
    aivax = {
        "description": "AIVAX profile: _aiv_* members of _meta, nonces hashed by Python's bcrypt",
        "profile": "aivax",
        "now": NOW,
        "config": {"hook_key": HOOK_KEY, "require_nonce": True, "max_bcrypt_cost": 12},
        "cases": aivax_cases(),
    }
    return {name: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
            for name, doc in (("tool_names.json", names), ("tuix_keys.json", tuix), ("aivax.json", aivax))}


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate_conventions.py", HERE, render))
