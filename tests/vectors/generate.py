#!/usr/bin/env python3
"""Generate the toolctx conformance vectors (tests/vectors/*.json).

Standard library only; never imports or runs project code. The output is
deterministic: fixed `now`, secrets, ids and jti values, insertion-ordered
keys, two-space indentation, a trailing newline.

    python3 tests/vectors/generate.py           # rewrite the files
    python3 tests/vectors/generate.py --check   # exit 1 if a file differs

The file format is the shared spec's VECTORS.md; the expectations follow
its CONTRACT.md (steps 0-14, "Precise points", the table in section 3) as
read by docs/READINGS.md. tests/vectors/selfcheck.py re-checks the output
with an independent reference model.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import sys

import vectorfile

# Integers of any length (a 4,500-digit exponent is read as one).
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# CONTRACT.md section 3, written once: reason -> (HTTP status, JSON-RPC code,
# step). Every reject case takes its status and code from here.
# ---------------------------------------------------------------------------
REASONS = {
    "credential_missing": (401, -32001, 1),
    "credential_invalid": (401, -32001, 1),
    "body_too_large": (413, -32600, 2),
    "parse_error": (400, -32700, 3),
    "duplicate_member": (400, -32600, 3),
    "too_deep": (400, -32600, 3),
    "batch_with_tools_call": (400, -32600, 4),
    "invalid_params": (400, -32602, 6),
    "header_mismatch": (400, -32020, 7),
    "token_missing": (401, -32001, 8),
    "token_duplicated": (401, -32001, 8),
    "token_too_large": (401, -32001, 9),
    "token_malformed": (401, -32001, 9),
    "alg_not_allowed": (401, -32001, 9),
    "crit_not_supported": (401, -32001, 9),
    "signature_invalid": (401, -32001, 9),
    "issuer_invalid": (401, -32001, 10),
    "audience_invalid": (401, -32001, 10),
    "claim_invalid": (401, -32001, 10),
    "token_expired": (401, -32001, 10),
    "token_issued_in_future": (401, -32001, 10),
    "token_too_old": (401, -32001, 10),
    "token_not_yet_valid": (401, -32001, 10),
    "context_malformed": (400, -32602, 11),
    "tool_mismatch": (403, -32003, 12),
    "protocol_unsupported": (403, -32003, 13),
    "meta_mismatch": (403, -32003, 14),
    "meta_missing": (403, -32003, 14),
    "claim_missing": (403, -32003, 14),
    # After the verdict (CONTRACT §8): tests/vectors/policy.json's.
    "policy_denied": (403, -32004, 15),
    "token_replayed": (401, -32001, 15),
}

# ---------------------------------------------------------------------------
# Fixed inputs.
# ---------------------------------------------------------------------------
NOW = 1767225600  # 2026-01-01T00:00:00Z
INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
S1 = "toolctx-vectors-secret-one-4f8a2c9e71d05b"  # 41 bytes
S2 = "toolctx-vectors-secret-two-b3d7e05a16c94f"  # 41 bytes
S3 = "toolctx-vectors-secret-three-0a1b2c3d4e5f6"  # 42 bytes
S_OTHER = "toolctx-vectors-secret-nobody-configured-x"  # never configured
CRED = "Bearer static-credential-7f3a91"
TASK = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
CALL = "call_abc"
WS = "1b2e3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
AGENT = "9d4a1b2c-3d4e-4f5a-9b7c-8d9e0f1a2b3c"
TOOL = "get_order"
MAX53 = 2**53 - 1

CONTEXT_NAMES = ["protocol", "task_id", "tool_call_id", "workspace_id",
                 "agent_id", "end_user_id", "metadata", "idempotency_key"]

BASE_CONFIG = {
    "instance_id": INSTANCE,
    "secrets": [S1],
    "require_context": True,
    "clock_skew_s": 30,
    "max_token_age_s": 600,
    "max_body_bytes": 1048576,
    "max_token_bytes": 8192,
    "protocol_majors": [1],
}


# ---------------------------------------------------------------------------
# A tiny JSON writer that can also emit raw JSON text and duplicate members.
# ---------------------------------------------------------------------------
class Raw:
    """Raw JSON text, emitted as is (floats like 1767225600.0, escapes...)."""

    def __init__(self, text):
        self.text = text


class Obj:
    """An object written member by member: allows duplicates and raw names."""

    def __init__(self, *pairs):
        self.pairs = list(pairs)


class _Absent:
    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()  # "leave this member out"


def J(v):
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Obj):
        return "{" + ",".join(_key(k) + ":" + J(x) for k, x in v.pairs) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(_key(k) + ":" + J(x) for k, x in v.items()
                              if x is not ABSENT) + "}"
    if isinstance(v, list):
        return "[" + ",".join(J(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def _key(k):
    return k.text if isinstance(k, Raw) else json.dumps(k, ensure_ascii=False)


def exact_loads(text):
    """json.loads with every number kept as its text (a Raw), so that 1e400,
    -0 or 0.1000000000000000000000000001 stay as they are written."""
    return json.loads(text, parse_float=Raw, parse_int=Raw)


NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def exact_value(text):
    """A JSON number's exact value as (m, e), the value being m * 10**e with
    m not a multiple of 10 (zero is (0, 0)): Python ints, never a float, and
    10**e is never computed, so exponents of any length compare exactly."""
    assert NUMBER.fullmatch(text), text
    mantissa, _, exp = text.lower().partition("e")
    int_part, _, frac = mantissa.partition(".")
    m, e = int(int_part + frac), int(exp or "0") - len(frac)
    if m == 0:
        return (0, 0)
    while m % 10 == 0:
        m, e = m // 10, e + 1
    return (m, e)


def nest(depth, inner="0"):
    """`depth` nested arrays around `inner` (so nest(2) is [[0]])."""
    return Raw("[" * depth + inner + "]" * depth)


# ---------------------------------------------------------------------------
# Tokens.
# ---------------------------------------------------------------------------
def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def hs256(secret, signing_input):
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return hmac.new(key, signing_input.encode("ascii"), hashlib.sha256).digest()


def seg(x):
    """Encode a header or payload: bytes as they are, a str as raw JSON text,
    anything else through J()."""
    if isinstance(x, bytes):
        return b64u(x)
    if isinstance(x, str):
        return b64u(x.encode("utf-8"))
    return b64u(J(x).encode("utf-8"))


def sign_segments(h, p, secret=S1):
    """Join already-encoded segments and append the HS256 signature of the
    exact ASCII text `h.p` (so a non-canonical segment is signed as sent)."""
    return h + "." + p + "." + b64u(hs256(secret, h + "." + p))


def mint(header, payload, secret=S1):
    """header/payload: a dict/Obj/list, or a raw JSON string, or bytes."""
    return sign_segments(seg(header), seg(payload), secret)


HDR = {"alg": "HS256", "typ": "JWT"}


class Jti:
    """Deterministic per-file jti values (unique, so a replay guard run over
    a whole file never sees the same jti twice)."""

    def __init__(self, tag):
        self.tag = tag
        self.n = 0

    def next(self):
        self.n += 1
        h = hashlib.sha256(("%s/%d" % (self.tag, self.n)).encode()).hexdigest()
        return "%s-%s-4%s-8%s-%s" % (h[:8], h[8:12], h[13:16], h[17:20], h[20:32])


JTI = Jti("init")


def claims(**kw):
    """The standard claims, with overrides; a value ABSENT drops the claim."""
    c = {
        "iss": "agentarea",
        "aud": INSTANCE,
        "iat": NOW,
        "exp": NOW + 300,
        "jti": JTI.next(),
        "tool": TOOL,
        "protocol": "1",
        "task_id": TASK,
        "tool_call_id": CALL,
        "workspace_id": WS,
        "idempotency_key": TASK + ":" + CALL,
        "agent_id": AGENT,
        "end_user_id": "user-42",
        "metadata": {"chatId": "c-9"},
    }
    for k, v in kw.items():
        c[k] = v
    return {k: v for k, v in c.items() if v is not ABSENT}


def required_claims(**kw):
    base = dict(agent_id=ABSENT, end_user_id=ABSENT, metadata=ABSENT)
    base.update(kw)
    return claims(**base)


def meta_for(c, progress=3, **kw):
    """The `_meta` matching claims `c` (context keys only), with overrides:
    keyword names are the part after `agentarea/`, ABSENT drops a key."""
    m = {"progressToken": progress} if progress is not ABSENT else {}
    for k in CONTEXT_NAMES:
        if k in c:
            m["agentarea/" + k] = c[k]
    for k, v in kw.items():
        m["agentarea/" + k] = v
    return {k: v for k, v in m.items() if v is not ABSENT}


ARGS = {"orderId": "A-17"}


def body(meta=ABSENT, *, id=3, name=TOOL, args=ARGS, method="tools/call",
         params=None, extra=None):
    """A JSON-RPC request text. `params` replaces the params object as a
    whole when given; `meta` ABSENT leaves `_meta` out."""
    if params is None:
        params = {"name": name, "arguments": args, "_meta": meta}
    top = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
    if extra:
        top.update(extra)
    return J(top)


# ---------------------------------------------------------------------------
# Cases and files.
# ---------------------------------------------------------------------------
NO_TOKEN = object()


def headers_for(token=NO_TOKEN, extra=(), credential=None):
    h = [["content-type", "application/json"]]
    if credential is not None:
        h.append(["authorization", credential])
    if token is not NO_TOKEN:
        h.append(["x-agentarea-context", token])
    h.extend([list(x) for x in extra])
    return h


def reject(reason, id=None, *, explicit_id=False):
    return {"reason": reason, "_id": id, "_explicit_id": explicit_id}


ACCEPT = "accept"
PASS = "pass"


class VFile:
    def __init__(self, fname, description, config, now=NOW, credential=None):
        global JTI
        JTI = Jti(fname)
        self.fname = fname
        self.description = description
        self.config = config
        self.now = now
        self.credential = credential  # sent by default on every request
        self.cases = []
        self.names = set()

    def effective_config(self, override):
        c = dict(BASE_CONFIG)
        c.update(self.config)
        if override:
            c.update(override)
        return c

    def add(self, name, *, body=None, body_b64=None, headers=None, token=NO_TOKEN,
            extra_headers=(), method="POST", expect, now=None, config=None,
            claims=None, secret=S1, context=None, context_drop=(), credential=True,
            forward=None):
        """One case. `claims`/`secret` describe the token when an accept
        expectation should be derived from them; `context` adds to or
        replaces derived fields; `context_drop` removes fields; `forward`
        (pass and accept only) is `expect.forward`."""
        assert name not in self.names, name
        self.names.add(name)
        if headers is None:
            cred = self.credential if credential is True else credential
            headers = headers_for(token, extra_headers, cred)
        for hn, hv in headers:
            assert hv == hv.strip(" \t"), (name, hn)
            assert all(32 <= ord(ch) < 127 for ch in hv), (name, hn)
        case = {"name": name}
        if now is not None:
            case["now"] = now
        if config is not None:
            case["config"] = config
        req = {"method": method, "headers": headers}
        if body_b64 is not None:
            req["body_b64"] = base64.b64encode(body_b64).decode("ascii")
        else:
            assert body is not None, name
            req["body"] = body
        case["request"] = req

        if expect == PASS:
            case["expect"] = {"outcome": "pass"}
        elif expect == ACCEPT:
            cfg = self.effective_config(config)
            ctx = {}
            if claims is not None:
                for k in ["task_id", "tool_call_id", "workspace_id", "idempotency_key",
                          "protocol", "agent_id", "end_user_id", "metadata", "tool",
                          "jti", "iat", "exp"]:
                    if k in claims and not isinstance(claims[k], (Raw, Obj)):
                        ctx[k] = claims[k]
                ctx["secret_index"] = cfg["secrets"].index(secret)
            if context:
                ctx.update(context)
            for k in context_drop:
                ctx.pop(k, None)
            case["expect"] = {"outcome": "accept"}
            if ctx:
                case["expect"]["context"] = ctx
        else:
            assert forward is None, name
            reason = expect["reason"]
            status, code, step = REASONS[reason]
            if expect["_explicit_id"] or step <= 4:
                rid = expect["_id"] if expect["_explicit_id"] else None
            else:
                rid = request_id(body)
            case["expect"] = {"outcome": "reject", "status": status, "code": code,
                              "reason": reason, "id": rid}
        if forward is not None:
            case["expect"]["forward"] = forward
        self.cases.append(case)

    def doc(self):
        return {
            "description": self.description,
            "now": self.now,
            "config": self.config,
            "cases": self.cases,
        }


def request_id(text):
    """The id a step 5+ refusal echoes: a string or number id, else null.
    Only used for bodies that are valid JSON without duplicates."""
    v = exact_loads(text)
    i = v.get("id") if isinstance(v, dict) else None
    if not isinstance(i, (str, Raw)):
        return None
    return i


def full_config(**kw):
    c = dict(BASE_CONFIG)
    c.update(kw)
    return c


def std(f, name, *, c=None, m=None, b=None, secret=S1, hdr=HDR, token=None,
        expect=ACCEPT, **kw):
    """A tools/call with a token minted from claims `c` and a body whose
    `_meta` is `m` (by default the one that matches `c`)."""
    if c is None:
        c = claims()
    if m is None:
        m = meta_for(c)
    if b is None:
        b = body(m)
    if token is None:
        token = mint(hdr, c, secret)
    f.add(name, body=b, token=token, expect=expect, claims=c, secret=secret, **kw)


def find(pred, make, limit=10000):
    """Deterministic search: the first i for which pred(make(i)) holds."""
    for i in range(limit):
        x = make(i)
        if pred(x):
            return x
    raise RuntimeError("search failed")


# ===========================================================================
# valid.json
# ===========================================================================
def gen_valid():
    f = VFile("valid.json",
              "Well-formed, correctly signed tools/call requests that must be "
              "accepted, with the verified context each one yields.",
              full_config())
    c = claims()
    std(f, "valid call with every optional claim", c=c)

    c = required_claims(tool=ABSENT, jti=ABSENT)
    std(f, "valid call with only the required claims", c=c)

    # bench case: ~1 KB body, ~800-char token with every optional claim.
    def bench_token(n):
        return claims(nbf=NOW - 60, jti="5d0c6a1e-7b2f-4c3d-9e8f-0a1b2c3d4e5f",
                      metadata={"chatId": "c-9", "plan": "pro", "ref": "r" * n},
                      end_user_id="user-42@acme.example", tool="search_orders")
    c = find(lambda c: len(mint(HDR, c)) >= 800, bench_token)
    args = {"query": "status:open customer:acme", "limit": 50, "offset": 0,
            "sort": [{"field": "created_at", "order": "desc"}],
            "fields": ["id", "status", "total", "currency", "created_at",
                       "customer", "lines"],
            "filters": {"total": {"gte": 100, "lte": 25000.5},
                        "currency": ["EUR", "USD"], "archived": False},
            "note": ""}
    def bench_body(n):
        a = dict(args)
        a["note"] = "x" * n
        return body(meta_for(c), id=1017, name="search_orders", args=a)
    b = find(lambda b: len(b.encode()) >= 1024, bench_body)
    assert len(b.encode()) == 1024, len(b.encode())
    std(f, "bench: 1 KB tools/call, 800-char token", c=c, b=b)

    c = claims()
    std(f, "valid call with a string id", c=c, b=body(meta_for(c, progress="p-1"), id="req-1"))
    c = claims()
    std(f, "valid tools/call without an id is verified and accepted", c=c,
        b=body(meta_for(c), id=ABSENT))
    c = claims()
    f.add("valid call, header names in mixed case", body=body(meta_for(c)),
          headers=[["Content-Type", "application/json"], ["X-AgentArea-Context", mint(HDR, c)]],
          expect=ACCEPT, claims=c)
    c = claims()
    std(f, "valid call with matching Mcp-Method and Mcp-Name", c=c,
        extra_headers=[["Mcp-Method", "tools/call"], ["Mcp-Name", TOOL]])
    c = claims(aud=["d3b07384-d113-4ec6-a0b2-2c3d4e5f6a7b", INSTANCE])
    std(f, "valid call, aud is an array that contains the instance id", c=c)
    std(f, "valid call without typ in the header", c=claims(), hdr={"alg": "HS256"})
    c = claims()
    std(f, "valid call, header members in another order", c=c, hdr={"typ": "JWT", "alg": "HS256"})
    c = claims()
    m = meta_for(c)
    m = dict(reversed(list(m.items())))
    std(f, "valid call, _meta keys in another order than the claims", c=c, m=m)
    c = claims(tool=ABSENT)
    std(f, "valid call without a tool claim", c=c)
    c = claims(protocol="1.3")
    std(f, "valid call with a protocol minor", c=c)
    c = claims(tool="überprüfe_bestellung", end_user_id="Zoë Ünal",
               metadata={"city": "Köln", "note": "日本語"})
    std(f, "valid call with non-ASCII strings", c=c,
        b=body(meta_for(c), name="überprüfe_bestellung", args={"q": "straße"}))
    c = claims(metadata={"chatId": "c-9", "nested": {"a": [1, 2, {"b": None}], "t": True},
                         "n": -12.5})
    std(f, "valid call with nested metadata", c=c)
    c = claims()
    b = J({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
           "params": {"name": TOOL, "arguments": ARGS, "_meta": meta_for(c),
                      "task": {"ttl": 60}},
           "extra": "ignored"})
    std(f, "valid call with extra top-level and params members", c=c, b=b)
    c = claims(iat=NOW - 120, exp=NOW + 180)
    std(f, "valid call with a token issued two minutes ago", c=c)
    c = claims()
    std(f, "valid call with empty arguments and no progressToken", c=c,
        b=body(meta_for(c, progress=ABSENT), args={}))
    c = claims(task_id="t", tool_call_id="c", idempotency_key="t:c", workspace_id="w")
    std(f, "valid call with one-character ids", c=c)
    c = claims(task_id="a:b", tool_call_id="c:d", idempotency_key="a:b:c:d")
    std(f, "valid call, ids containing colons", c=c)
    return f


# ===========================================================================
# transport.json: method, credential, body size, batch, pass, shape, headers
# ===========================================================================
def gen_transport():
    f = VFile("transport.json",
              "Steps 0-8 around the token: HTTP method, static credential, body "
              "size, batches, requests that are not tools/call, params shape, "
              "MCP headers, token presence. A static credential is configured; "
              "cases send it unless they are about it.",
              full_config(credential={"header": "authorization", "values": [CRED]}),
              credential=CRED)
    garbage = "\x00not json at all {{{"

    # -- step 0
    for m in ["GET", "DELETE", "post", "PUT", "OPTIONS", "PATCH"]:
        f.add("method %s passes untouched, even with a garbage body and no credential" % m,
              method=m, body=garbage, credential=None, expect=PASS)
    c = claims()
    f.add("method HEAD with a tools/call body and a bad token passes", method="HEAD",
          body=body(meta_for(c)), token=mint(HDR, c, S_OTHER), expect=PASS)

    # -- step 1
    c = claims()
    ok_body = body(meta_for(c))
    ok_tok = mint(HDR, c)
    f.add("credential missing", body=ok_body, token=ok_tok, credential=None,
          expect=reject("credential_missing"))
    f.add("credential missing, garbage body: refused with id null", body=garbage,
          credential=None, expect=reject("credential_missing"))
    f.add("credential missing, body over max_body_bytes", body="x" * 200,
          credential=None, config={"max_body_bytes": 100}, expect=reject("credential_missing"))
    f.add("credential wrong", body=ok_body, token=ok_tok,
          credential="Bearer static-credential-7f3a92", expect=reject("credential_invalid"))
    f.add("credential wrong, garbage body: refused with id null", body=garbage,
          credential="Bearer nope", expect=reject("credential_invalid"))
    f.add("credential differs only in letter case", body=ok_body, token=ok_tok,
          credential=CRED.lower(), expect=reject("credential_invalid"))
    f.add("credential is a prefix of the accepted value", body=ok_body, token=ok_tok,
          credential=CRED[:-1], expect=reject("credential_invalid"))
    f.add("credential has the accepted value as a prefix", body=ok_body, token=ok_tok,
          credential=CRED + "0", expect=reject("credential_invalid"))
    f.add("credential without its scheme", body=ok_body, token=ok_tok,
          credential=CRED.split(" ", 1)[1], expect=reject("credential_invalid"))
    f.add("credential sent twice, both correct", body=ok_body,
          headers=[["content-type", "application/json"], ["authorization", CRED],
                   ["authorization", CRED], ["x-agentarea-context", ok_tok]],
          expect=reject("credential_invalid"))
    f.add("credential sent twice, wrong then correct", body=garbage,
          headers=[["authorization", "Bearer x"], ["authorization", CRED]],
          expect=reject("credential_invalid"))
    f.add("credential header empty", body=ok_body, token=ok_tok, credential="",
          expect=reject("credential_invalid"))
    c = claims()
    f.add("credential header name in upper case", body=body(meta_for(c)),
          headers=[["content-type", "application/json"], ["AUTHORIZATION", CRED],
                   ["x-agentarea-context", mint(HDR, c)]], expect=ACCEPT, claims=c)
    c = claims()
    f.add("credential correct, token signed with another secret", body=body(meta_for(c)),
          token=mint(HDR, c, S_OTHER), expect=reject("signature_invalid"))

    # -- step 2
    c = claims()
    b = body(meta_for(c))
    n = len(b.encode())
    f.add("body exactly max_body_bytes is read", body=b, token=mint(HDR, c),
          config={"max_body_bytes": n}, expect=ACCEPT, claims=c)
    c = claims()
    b = body(meta_for(c))
    f.add("body one byte over max_body_bytes", body=b, token=mint(HDR, c),
          config={"max_body_bytes": len(b.encode()) - 1}, expect=reject("body_too_large"))
    f.add("body over max_body_bytes, garbage", body=garbage * 10,
          config={"max_body_bytes": 64}, expect=reject("body_too_large"))
    c = claims(end_user_id="é" * 40)
    b = body(meta_for(c))
    nb = len(b.encode())
    assert len(b) <= nb - 40
    f.add("body size counts UTF-8 bytes: at the limit", body=b, token=mint(HDR, c),
          config={"max_body_bytes": nb}, expect=ACCEPT, claims=c)
    c = claims(end_user_id="é" * 40)
    b = body(meta_for(c))
    f.add("body size counts UTF-8 bytes: one over, fewer characters than the limit",
          body=b, token=mint(HDR, c), config={"max_body_bytes": len(b.encode()) - 1},
          expect=reject("body_too_large"))
    f.add("body over max_body_bytes is refused even for tools/list",
          body=J({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "y" * 80}}),
          config={"max_body_bytes": 64}, expect=reject("body_too_large"))

    # -- step 4
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": TOOL, "arguments": ARGS}}
    lst = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}
    f.add("batch with one tools/call", body=J([call]), expect=reject("batch_with_tools_call"))
    f.add("batch with tools/list then tools/call", body=J([lst, call]),
          expect=reject("batch_with_tools_call"))
    c = claims()
    f.add("batch with a fully valid tools/call and token is still refused",
          body=J([{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": TOOL, "arguments": ARGS, "_meta": meta_for(c)}}]),
          token=mint(HDR, c), expect=reject("batch_with_tools_call"))
    f.add("batch element with method tools/call and nothing else",
          body='[{"method":"tools/call"}]', expect=reject("batch_with_tools_call"))
    f.add("batch element method written with escapes",
          body='[{"jsonrpc":"2.0","id":1,"method":"tools\\/\\u0063all"}]',
          expect=reject("batch_with_tools_call"))
    f.add("batch with tools/call after non-object elements",
          body='[1,"x",null,{"jsonrpc":"2.0","method":"tools/call","id":2}]',
          expect=reject("batch_with_tools_call"))
    f.add("batch without tools/call passes", body=J([lst, {"jsonrpc": "2.0", "id": 9,
                                                            "method": "initialize",
                                                            "params": {}}]),
          expect=PASS)
    f.add("empty batch passes", body="[]", expect=PASS)
    f.add("batch of notifications passes",
          body='[{"jsonrpc":"2.0","method":"notifications/initialized"}]', expect=PASS)
    f.add("batch with a nested array holding tools/call passes (element is not an object)",
          body='[[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]]', expect=PASS)
    f.add("batch of scalars passes, even the string tools/call",
          body='[1,"tools/call",null,true]', expect=PASS)
    f.add("batch element with method Tools/call passes",
          body='[{"jsonrpc":"2.0","id":1,"method":"Tools/call"}]', expect=PASS)
    f.add("batch element whose params.method is tools/call passes",
          body='[{"jsonrpc":"2.0","id":1,"method":"x","params":{"method":"tools/call"}}]',
          expect=PASS)
    f.add("batch element with method as an array passes",
          body='[{"jsonrpc":"2.0","id":1,"method":["tools/call"]}]', expect=PASS)

    # -- step 5
    passes = [
        ("tools/list passes", J(lst)),
        ("initialize passes", J({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                 "params": {"protocolVersion": "2026-07-28",
                                            "capabilities": {},
                                            "clientInfo": {"name": "c", "version": "1"}}})),
        ("notification passes", '{"jsonrpc":"2.0","method":"notifications/initialized"}'),
        ("cancel notification passes",
         '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}'),
        ("response with result passes", '{"jsonrpc":"2.0","id":3,"result":{"content":[]}}'),
        ("response with error passes",
         '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}'),
        ("top-level string tools/call passes", '"tools/call"'),
        ("top-level number passes", "42"),
        ("top-level null passes", "null"),
        ("top-level true passes", "true"),
        ("method that is not a string passes", '{"jsonrpc":"2.0","id":1,"method":["tools/call"]}'),
        ("method missing passes", '{"jsonrpc":"2.0","id":1,"params":{"name":"get_order"}}'),
        ("method tools/call with a trailing space passes",
         '{"jsonrpc":"2.0","id":1,"method":"tools/call ","params":{"name":"get_order"}}'),
        ("method TOOLS/CALL passes", '{"jsonrpc":"2.0","id":1,"method":"TOOLS/CALL"}'),
        ("method tools/call in params only passes",
         '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"method":"tools/call"}}'),
        ("member Method tools/call next to method tools/list passes (not a duplicate)",
         '{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}'),
    ]
    for name, b in passes:
        f.add(name, body=b, expect=PASS)
    f.add("tools/list with a garbage token and a mismatching Mcp-Method passes",
          body=J(lst), token="garbage",
          extra_headers=[["Mcp-Method", "tools/call"]], expect=PASS)
    f.add("method written with escapes is tools/call and is verified",
          body='{"jsonrpc":"2.0","id":3,"method":"tools\\/c\\u0061ll","params":{"name":"get_order"}}',
          expect=reject("token_missing"))

    # -- step 6
    def shape(name, params, id=3, **kw):
        top = {"jsonrpc": "2.0", "id": id, "method": "tools/call"}
        if params is not ABSENT:
            top["params"] = params
        if id is ABSENT:
            del top["id"]
        f.add(name, body=J(top), expect=reject("invalid_params"), **kw)
    shape("params missing", ABSENT)
    shape("params null", None)
    shape("params an array", [TOOL, ARGS])
    shape("params a string", "get_order")
    shape("params a number", 1)
    shape("params.name missing", {"arguments": ARGS})
    shape("params.name a number", {"name": 7, "arguments": ARGS})
    shape("params.name null", {"name": None, "arguments": ARGS})
    shape("params.name an object", {"name": {"n": TOOL}, "arguments": ARGS})
    shape("params.name an array", {"name": [TOOL]})
    shape("params._meta null", {"name": TOOL, "arguments": ARGS, "_meta": None})
    shape("params._meta an array", {"name": TOOL, "arguments": ARGS, "_meta": [{"progressToken": 3}]})
    shape("params._meta a string", {"name": TOOL, "_meta": "agentarea/task_id"})
    shape("params._meta a number", {"name": TOOL, "_meta": 0})
    shape("params missing, no id: refused with id null", ABSENT, id=ABSENT)
    shape("params null, string id", None, id="abc-1")
    shape("params null, id -1", None, id=-1)
    shape("params null, id 0", None, id=0)
    shape("params null, id 2.5", None, id=2.5)
    shape("params null, id 2^53+1 echoed unchanged", None, id=2**53 + 1)
    shape("params null, empty string id", None, id="")
    shape("params null, id \"3\" stays a string", None, id="3")
    shape("params null, id null", None, id=None)
    shape("params null, id true: refused with id null", None, id=True)
    shape("params null, id an object: refused with id null", None, id={"n": 3})
    shape("params null, id an array: refused with id null", None, id=[3])
    f.add("params null, id written with an escape",
          body='{"jsonrpc":"2.0","id":"a\\u0062c","method":"tools/call","params":null}',
          expect=reject("invalid_params"))
    shape("shape is checked before MCP headers", None,
          extra_headers=[["Mcp-Method", "tools/list"]])
    shape("shape is checked before token presence", {"arguments": ARGS}, token=NO_TOKEN)
    c = claims()
    std(f, "arguments a string is not inspected", c=c,
        b=J({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": TOOL, "arguments": "not an object", "_meta": meta_for(c)}}))
    c = claims()
    std(f, "arguments missing is not inspected", c=c,
        b=J({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": TOOL, "_meta": meta_for(c)}}))

    # -- step 7
    def hdrcase(name, hdrs, expect, tool=TOOL, raw_name=None):
        c = claims(tool=tool)
        b = body(meta_for(c), name=tool)
        if raw_name is not None:
            b = b.replace(json.dumps(tool, ensure_ascii=False), raw_name, 1)
        std(f, name, c=c, b=b, extra_headers=hdrs, expect=expect)
    hdrcase("Mcp-Method tools/call", [["Mcp-Method", "tools/call"]], ACCEPT)
    hdrcase("Mcp-Method header name in lower case", [["mcp-method", "tools/call"]], ACCEPT)
    hdrcase("Mcp-Method tools/list", [["Mcp-Method", "tools/list"]], reject("header_mismatch"))
    hdrcase("Mcp-Method Tools/Call", [["Mcp-Method", "Tools/Call"]], reject("header_mismatch"))
    hdrcase("Mcp-Method upper-case name, wrong value", [["MCP-METHOD", "initialize"]],
            reject("header_mismatch"))
    hdrcase("Mcp-Method sent twice, both tools/call",
            [["Mcp-Method", "tools/call"], ["mcp-method", "tools/call"]], reject("header_mismatch"))
    hdrcase("Mcp-Name equal", [["Mcp-Name", TOOL]], ACCEPT)
    hdrcase("Mcp-Name different", [["Mcp-Name", "delete_order"]], reject("header_mismatch"))
    hdrcase("Mcp-Name differs in letter case", [["Mcp-Name", "Get_Order"]], reject("header_mismatch"))
    hdrcase("Mcp-Name sent twice, both equal", [["Mcp-Name", TOOL], ["Mcp-Name", TOOL]],
            reject("header_mismatch"))
    hdrcase("Mcp-Name equal to a name written with escapes in the body",
            [["Mcp-Name", TOOL]], ACCEPT, raw_name='"get\\u005forder"')
    uname = "получить_заказ"  # 27 UTF-8 bytes: base64 needs padding? check below
    enc = base64.b64encode(uname.encode()).decode()
    hdrcase("Mcp-Name base64 form, non-ASCII name", [["Mcp-Name", "=?base64?%s?=" % enc]],
            ACCEPT, tool=uname)
    pname = "bestätigen"  # 11 bytes -> one '=' of padding
    penc = base64.b64encode(pname.encode()).decode()
    assert penc.endswith("=") and not penc.endswith("==")
    hdrcase("Mcp-Name base64 form with padding", [["Mcp-Name", "=?base64?%s?=" % penc]],
            ACCEPT, tool=pname)
    hdrcase("Mcp-Name base64 form without its padding",
            [["Mcp-Name", "=?base64?%s?=" % penc.rstrip("=")]], reject("header_mismatch"),
            tool=pname)
    aenc = base64.b64encode(TOOL.encode()).decode()
    hdrcase("Mcp-Name base64 form of an ASCII name", [["Mcp-Name", "=?base64?%s?=" % aenc]], ACCEPT)
    hdrcase("Mcp-Name base64 form of another name",
            [["Mcp-Name", "=?base64?%s?=" % base64.b64encode(b"get_orders").decode()]],
            reject("header_mismatch"))
    hdrcase("Mcp-Name base64 form that does not decode", [["Mcp-Name", "=?base64?@@not*base64@@?=" ]],
            reject("header_mismatch"))
    hdrcase("Mcp-Name base64 form that decodes to invalid UTF-8",
            [["Mcp-Name", "=?base64?%s?=" % base64.b64encode(b"\xff\xfe_order").decode()]],
            reject("header_mismatch"))
    # a name whose standard base64 has '+' or '/', sent in the url-safe alphabet
    sname = "größe_ändern"
    senc = base64.b64encode(sname.encode()).decode()
    assert "/" in senc
    hdrcase("Mcp-Name base64 form in the url-safe alphabet",
            [["Mcp-Name", "=?base64?%s?=" % senc.replace("+", "-").replace("/", "_")]],
            reject("header_mismatch"), tool=sname)
    hdrcase("Mcp-Name base64 form in the standard alphabet with + or /",
            [["Mcp-Name", "=?base64?%s?=" % senc]], ACCEPT, tool=sname)
    # Only the canonical encoding (CONTRACT step 7): each variant below is
    # not what encoding the name gives, though lenient decoders (Python's
    # b64decode among them) read the name from some of them.
    def canonical_b64(text):
        try:
            raw = base64.b64decode(text, validate=True)
        except ValueError:
            return False
        return base64.b64encode(raw).decode("ascii") == text

    def trailing_bits(enc):
        """`enc` with the unused low bits of its last data character set."""
        data = enc.rstrip("=")
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        last = alphabet[alphabet.index(data[-1]) | 1]
        return data[:-1] + last + enc[len(data):]
    two = "get_orders"  # 10 bytes: "==", 4 unused bits
    two_enc = base64.b64encode(two.encode()).decode()
    assert two_enc.endswith("==")
    noncanonical = [
        ("non-zero trailing bits before one =", trailing_bits(penc), pname),
        ("non-zero trailing bits before ==", trailing_bits(two_enc), two),
        ("= after a whole group", aenc + "=", TOOL),
        ("==== after a whole group", aenc + "====", TOOL),
        ("one = too many", penc + "=", pname),
        ("= between two padded groups",
         base64.b64encode(b"ge").decode() + base64.b64encode(b"t_order").decode(), TOOL),
        ("one character past whole groups", aenc + "A", TOOL),
        ("a space inside", aenc[:4] + " " + aenc[4:], TOOL),
    ]
    for label, enc, name in noncanonical:
        assert not canonical_b64(enc), label
        hdrcase("Mcp-Name base64 form not canonical: %s" % label,
                [["Mcp-Name", "=?base64?%s?=" % enc]], reject("header_mismatch"), tool=name)
    assert base64.b64decode(trailing_bits(penc)) == pname.encode()
    assert base64.b64decode(trailing_bits(two_enc)) == two.encode()
    hdrcase("Mcp-Name upper-case =?BASE64?...?= is compared as plain text",
            [["Mcp-Name", "=?BASE64?%s?=" % aenc]], reject("header_mismatch"))
    hdrcase("Mcp-Name base64 form sent twice",
            [["Mcp-Name", "=?base64?%s?=" % aenc], ["Mcp-Name", "=?base64?%s?=" % aenc]],
            reject("header_mismatch"))
    f.add("header mismatch is checked before token presence", body=body(meta_for(claims())),
          extra_headers=[["Mcp-Name", "other"]], expect=reject("header_mismatch"))

    # -- step 8
    c = claims()
    f.add("token missing", body=body(meta_for(c)), expect=reject("token_missing"))
    f.add("token missing, no _meta", body=body(), expect=reject("token_missing"))
    f.add("token missing, string id", body=body(id="call-7"), expect=reject("token_missing"))
    f.add("token missing, no id: refused with id null", body=body(id=ABSENT),
          expect=reject("token_missing"))
    c = claims()
    t = mint(HDR, c)
    f.add("token sent twice, identical", body=body(meta_for(c)),
          headers=[["authorization", CRED], ["x-agentarea-context", t],
                   ["X-AgentArea-Context", t]], expect=reject("token_duplicated"))
    f.add("token sent twice, one garbage", body=body(meta_for(c)),
          headers=[["authorization", CRED], ["x-agentarea-context", "garbage"],
                   ["x-agentarea-context", t]], expect=reject("token_duplicated"))
    f.add("token sent twice, one over max_token_bytes", body=body(meta_for(c)),
          headers=[["authorization", CRED], ["x-agentarea-context", t],
                   ["x-agentarea-context", "x" * 9000]], expect=reject("token_duplicated"))
    f.add("token header present but empty", body=body(meta_for(c)), token="",
          expect=reject("token_malformed"))
    return f


# ===========================================================================
# json.json: the strict JSON reader (step 3)
# ===========================================================================
def gen_json():
    f = VFile("json.json",
              "Step 3, the strict JSON reader: RFC 8259 grammar, duplicate member "
              "names (compared after unescaping), the 64-container depth limit, "
              "surrogates, UTF-8, and first-offending-position-wins ordering.",
              full_config())

    def tc(args_raw, meta={"progressToken": 5}, tail=""):
        """A tools/call body text with raw `arguments` (and raw _meta)."""
        return ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_order",'
                '"arguments":%s,"_meta":%s}%s}' % (args_raw, J(meta), tail))

    # duplicates
    P = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_order","arguments":{}}}'
    dup = reject("duplicate_member")
    f.add("duplicate top-level id", body='{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"get_order"}}', expect=dup)
    f.add("duplicate method, tools/list then tools/call",
          body='{"jsonrpc":"2.0","id":5,"method":"tools/list","method":"tools/call","params":{"name":"get_order"}}', expect=dup)
    f.add("duplicate method in a notification (not tools/call) is still refused",
          body='{"jsonrpc":"2.0","method":"notifications/initialized","method":"x"}', expect=dup)
    f.add("duplicate params", body='{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a"},"params":{"name":"get_order"}}', expect=dup)
    f.add("duplicate name inside params",
          body='{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_order","name":"get_order","arguments":{}}}', expect=dup)
    c = claims()
    m = meta_for(c)
    pairs = list(m.items())
    pairs.insert(2, ("agentarea/task_id", "attacker-task"))
    f.add("duplicate agentarea/task_id inside _meta", body=body(Obj(*pairs)),
          token=mint(HDR, c), expect=dup)
    f.add("duplicate progressToken inside _meta", body=tc("{}", Obj(("progressToken", 1), ("progressToken", 2))), expect=dup)
    f.add("duplicate inside nested arguments",
          body=tc('{"order":{"id":"A-17","lines":[{"sku":"x","qty":1,"qty":100}]}}'), expect=dup)
    f.add("duplicate differing only by escaping (a vs \\u0061)",
          body=tc('{"a":1,"\\u0061":2}'), expect=dup)
    f.add("duplicate differing only by escaping (\\u00e9 vs raw é)",
          body=tc('{"\\u00e9":1,"é":2}'), expect=dup)
    f.add("duplicate with escaped solidus (a/b vs a\\/b)",
          body=tc('{"a/b":1,"a\\/b":2}'), expect=dup)
    f.add("duplicate empty member names", body=tc('{"":1,"":2}'), expect=dup)
    f.add("duplicate in a batch element", body='[{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}]',
          expect=dup)
    f.add("duplicate inside a response", body='{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":1}}', expect=dup)
    f.add("duplicate name read, then the document ends (found when the name is read)",
          body='{"jsonrpc":"2.0","id":5,"id"', expect=dup)
    f.add("duplicate name read, then a missing value",
          body='{"jsonrpc":"2.0","id":5,"id":}', expect=dup)

    # not duplicates
    c = claims()
    std(f, "member Method next to method is not a duplicate", c=c,
        b=body(meta_for(c), extra={"Method": "tools/list"}))
    c = claims(Task_id="T-upper")
    m = meta_for(c)
    m["agentarea/Task_id"] = "T-upper"
    std(f, "_meta agentarea/Task_id next to agentarea/task_id is not a duplicate", c=c, m=m,
        context={"task_id": TASK})
    c = claims()
    std(f, "names in NFC and NFD are not duplicates", c=c,
        b=body(meta_for(c), args={"caf\u00e9": 1, "cafe\u0301": 2}))
    c = claims()
    std(f, "the same name in sibling objects is not a duplicate", c=c,
        b=body(meta_for(c), args={"a": {"id": 1}, "b": {"id": 1}, "c": [{"id": 1}, {"id": 1}]}))

    # depth: top level is depth 1; arguments is depth 3, so nest(61) reaches 64
    c = claims()
    std(f, "64 nested containers pass", c=c,
        b=body(meta_for(c), args={"deep": nest(61)}))
    f.add("65 nested containers: too_deep", body=body(meta_for(claims()), args={"deep": nest(62)}),
          token=mint(HDR, claims()), expect=reject("too_deep"))
    f.add("100 nested containers: too_deep", body=body(args={"deep": nest(97)}),
          expect=reject("too_deep"))
    f.add("64 nested arrays at top level pass (batch without tools/call)",
          body="[" * 64 + "]" * 64, expect=PASS)
    f.add("65 nested arrays at top level: too_deep", body="[" * 65 + "]" * 65,
          expect=reject("too_deep"))
    f.add("64 nested objects pass", body='{"a":' * 63 + "{}" + "}" * 63, expect=PASS)
    f.add("65 nested objects: too_deep", body='{"a":' * 64 + "{}" + "}" * 64,
          expect=reject("too_deep"))
    f.add("65 levels mixing objects and arrays: too_deep",
          body='{"a":[' * 32 + "{}" + "]}" * 32, expect=reject("too_deep"))
    f.add("too_deep in a notification is still refused",
          body='{"jsonrpc":"2.0","method":"notifications/x","params":%s}' % ("[" * 64 + "]" * 64),
          expect=reject("too_deep"))
    f.add("65 containers opened, never closed: too_deep", body="[" * 65,
          expect=reject("too_deep"))

    # first offending position wins
    deep65 = "[" * 64 + "]" * 64  # 64 arrays under a depth-1 object: 65 total
    f.add("order: duplicate before a too-deep region -> duplicate_member",
          body='{"a":1,"a":2,"b":%s}' % deep65, expect=dup)
    f.add("order: too-deep region before a duplicate -> too_deep",
          body='{"a":1,"b":%s,"a":2}' % deep65, expect=reject("too_deep"))
    f.add("order: too-deep before a syntax error -> too_deep",
          body='{"a":' + "[" * 64 + "]" * 64 + ",}", expect=reject("too_deep"))
    f.add("order: too-deep before truncation -> too_deep",
          body='{"a":' + "[" * 64 + "1,", expect=reject("too_deep"))
    f.add("order: syntax error before a duplicate -> parse_error",
          body='{"a":tru,"a":2}', expect=reject("parse_error"))
    f.add("order: syntax error before a too-deep region -> parse_error",
          body='{"a":01,"b":%s}' % deep65, expect=reject("parse_error"))
    f.add("order: duplicate before a syntax error -> duplicate_member",
          body='{"a":1,"a":2,"b":tru}', expect=dup)
    f.add("order: duplicate before invalid UTF-8 -> duplicate_member",
          body_b64=b'{"a":1,"a":2,"b":"\xff"}', expect=dup)
    f.add("order: invalid UTF-8 before a duplicate -> parse_error",
          body_b64=b'{"b":"\xff","a":1,"a":2}', expect=reject("parse_error"))
    f.add("order: lone surrogate before a duplicate -> parse_error",
          body='{"b":"\\ud800","a":1,"a":2}', expect=reject("parse_error"))

    # surrogates and escapes
    pe = reject("parse_error")
    f.add("unpaired high surrogate escape", body=tc('{"s":"\\ud800"}'), expect=pe)
    f.add("unpaired low surrogate escape", body=tc('{"s":"\\udc00"}'), expect=pe)
    f.add("high surrogate followed by a non-surrogate escape", body=tc('{"s":"\\ud83d\\u0041"}'), expect=pe)
    f.add("two high surrogates", body=tc('{"s":"\\ud83d\\ud83d"}'), expect=pe)
    f.add("low then high surrogate", body=tc('{"s":"\\ude00\\ud83d"}'), expect=pe)
    f.add("high surrogate at the end of the string", body=tc('{"s":"x\\udbff"}'), expect=pe)
    f.add("unpaired surrogate in a member name", body=tc('{"\\ud800":1}'), expect=pe)
    c = claims()
    std(f, "valid surrogate pair escape", c=c,
        b=body(meta_for(c), args={"s": Raw('"\\ud83d\\ude00 \\uD834\\uDD1E"')}))
    c = claims()
    std(f, "every simple escape", c=c,
        b=body(meta_for(c), args={"s": Raw('"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u0000"')}))
    f.add("invalid escape \\x", body=tc('{"s":"\\x41"}'), expect=pe)
    f.add("short unicode escape", body=tc('{"s":"\\u12"}'), expect=pe)
    f.add("unicode escape with a non-hex digit", body=tc('{"s":"\\u12g4"}'), expect=pe)
    f.add("single-quoted escape", body=tc('{"s":"\\\'"}'), expect=pe)

    # UTF-8
    ok = tc('{"s":"X"}', {"progressToken": 1}).encode()
    def with_bytes(bs):
        return ok.replace(b"X", bs)
    f.add("invalid UTF-8 byte 0xff in a string", body_b64=with_bytes(b"\xff"), expect=pe)
    f.add("overlong UTF-8 encoding of /", body_b64=with_bytes(b"\xc0\xaf"), expect=pe)
    f.add("UTF-8 encoded surrogate (CESU-8)", body_b64=with_bytes(b"\xed\xa0\x80"), expect=pe)
    f.add("truncated UTF-8 sequence", body_b64=with_bytes(b"\xe2\x82"), expect=pe)
    f.add("lone UTF-8 continuation byte", body_b64=with_bytes(b"\x80"), expect=pe)
    f.add("code point above U+10FFFF", body_b64=with_bytes(b"\xf4\x90\x80\x80"), expect=pe)
    f.add("Latin-1 byte in a member name", body_b64=b'{"caf\xe9":1}', expect=pe)
    f.add("UTF-8 BOM before the body", body="\ufeff" + body(), expect=pe)
    f.add("UTF-8 BOM before the body (raw bytes)",
          body_b64=b"\xef\xbb\xbf" + J(lst_obj()).encode(), expect=pe)
    f.add("UTF-16 body", body_b64=J(lst_obj()).encode("utf-16-le"), expect=pe)
    c = claims()
    std(f, "4-byte UTF-8 characters pass", c=c, b=body(meta_for(c), args={"s": "😀𝄞"}))

    # grammar
    grammar = [
        ("empty body", ""),
        ("whitespace-only body", " \n\t "),
        ("truncated object", '{"jsonrpc":"2.0","id":5,"method":"tools/call"'),
        ("trailing comma in an object", tc('{"a":1,}')),
        ("trailing comma in an array", tc('[1,2,]')),
        ("comment", tc('{"a":1 /* c */}')),
        ("line comment", '// x\n' + P),
        ("NaN", tc('{"a":NaN}')),
        ("Infinity", tc('{"a":Infinity}')),
        ("-Infinity", tc('{"a":-Infinity}')),
        ("leading zero", tc('{"a":01}')),
        ("leading plus", tc('{"a":+1}')),
        ("fraction without integer part", tc('{"a":.5}')),
        ("fraction without digits", tc('{"a":1.}')),
        ("exponent without digits", tc('{"a":1e}')),
        ("minus alone", tc('{"a":-}')),
        ("hex number", tc('{"a":0x10}')),
        ("single-quoted string", tc("{'a':1}")),
        ("unquoted member name", tc('{a:1}')),
        ("raw tab in a string", tc('{"a":"x\ty"}')),
        ("raw newline in a string", tc('{"a":"x\ny"}')),
        ("raw U+001F in a string", tc('{"a":"x\x1fy"}')),
        ("unterminated string", '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_order'),
        ("True in upper case", tc('{"a":True}')),
        ("null misspelt", tc('{"a":nul}')),
        ("two top-level values", P + P),
        ("trailing garbage after the value", P + "x"),
        ("missing colon", tc('{"a" 1}')),
        ("missing comma", tc('{"a":1 "b":2}')),
        ("array closed by a brace", tc('[1,2}')),
        ("lone closing bracket", "]"),
        ("NUL byte after the value", P + "\x00"),
        ("non-breaking space as whitespace", "\u00a0" + P),
        ("vertical tab as whitespace", "\x0b" + P),
    ]
    for name, b in grammar:
        f.add("parse_error: " + name, body=b, expect=pe)

    # valid grammar corners
    c = claims()
    spaced = json.dumps(json.loads(body(meta_for(c))), indent="\t", separators=(" ,", " : "),
                        ensure_ascii=False).replace("\n", "\r\n")
    std(f, "whitespace around and inside the body (space, tab, CR, LF)", c=c,
        b=" \r\n\t" + spaced + "\r\n ")
    c = claims()
    std(f, "numbers of any size and precision parse", c=c,
        b=body(meta_for(c), args={"big": Raw("123456789012345678901234567890123456789"),
                                  "huge": Raw("1e400"), "tiny": Raw("-1.5E-400"),
                                  "frac": Raw("0.1000000000000000000000000001"),
                                  "neg0": Raw("-0"), "e": Raw("1E+2")}))
    c = claims()
    std(f, "DEL and other non-control characters raw in strings", c=c,
        b=body(meta_for(c), args={"s": "a\x7fb\u2028c\u0085"}))
    c = claims()
    std(f, "escaped NUL in a member name and value", c=c,
        b=body(meta_for(c), args={"k": Raw('{"\\u0000":"\\u0000"}')}))
    return f


def lst_obj():
    return {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}


# ===========================================================================
# token.json: step 8-9
# ===========================================================================
def b64_variants(segment):
    """Return a variant of a base64url segment that decodes (leniently) to
    the same bytes but whose unused low bits are non-zero."""
    r = len(segment) % 4
    assert r in (2, 3), segment
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(segment[-1])
    unused = 4 if r == 2 else 2
    assert last % (1 << unused) == 0
    return segment[:-1] + alphabet[last + 1]


def gen_token():
    f = VFile("token.json",
              "Steps 8-9: the compact JWS read strictly (size, segments, canonical "
              "unpadded base64url, JSON objects, alg, typ, crit/b64, signature) "
              "and the order of those checks.",
              full_config())
    mal = reject("token_malformed")

    def tok(name, token, expect, c=None, b=None, **kw):
        c = c or claims()
        f.add(name, body=b or body(meta_for(c)), token=token, expect=expect,
              claims=c, **kw)

    c = claims()
    tok("baseline valid token", mint(HDR, c), ACCEPT, c=c)

    # size
    f.add("token over max_token_bytes, garbage", body=body(meta_for(claims())), token="x" * 65,
          config={"max_token_bytes": 64}, expect=reject("token_too_large"))
    f.add("token over max_token_bytes, garbage, default limit", body=body(),
          token="#" * 8193, expect=reject("token_too_large"))
    c = claims()
    t = mint(HDR, c)
    tok("valid token exactly at max_token_bytes", t, ACCEPT, c=c, config={"max_token_bytes": len(t)})
    c = claims()
    t = mint(HDR, c)
    tok("valid token one byte over max_token_bytes", t, reject("token_too_large"), c=c,
        config={"max_token_bytes": len(t) - 1})
    big = find(lambda c: len(mint(HDR, c)) == 8192,
               lambda n: claims(jti="fixed-jti-8k", pad="p" * n))
    tok("valid token of exactly 8192 bytes under the default limit", mint(HDR, big), ACCEPT, c=big)
    big2 = find(lambda c: len(mint(HDR, c)) == 8193,
                lambda n: claims(jti="fixed-jti-8k1", pad="p" * n))
    tok("valid token of 8193 bytes under the default limit", mint(HDR, big2),
        reject("token_too_large"), c=big2)

    # segments
    c = claims()
    h, p, s = mint(HDR, c).split(".")
    tok("one segment", "garbage", mal)
    tok("two segments", h + "." + p, mal)
    tok("four segments", h + "." + p + "." + s + "." + s, mal)
    tok("trailing dot (four segments, the last empty)", h + "." + p + "." + s + ".", mal)
    tok("five segments (JWE shape)", ".".join([h, p, s, s, s]), mal)
    tok("only dots", "..", mal)
    tok("empty header segment", "." + p + "." + b64u(hs256(S1, "." + p)), mal)
    tok("empty payload segment", h + ".." + b64u(hs256(S1, h + ".")), mal)
    c = claims()
    h, p, s = mint(HDR, c).split(".")
    tok("empty signature", h + "." + p + ".", reject("signature_invalid"), c=c)
    tok("signature truncated to 30 bytes", h + "." + p + "." + s[:40], reject("signature_invalid"), c=c)
    tok("signature of 31 bytes (canonical)", h + "." + p + "." + b64u(base64.urlsafe_b64decode(s + "=")[:31]),
        reject("signature_invalid"), c=c)
    sig64 = hmac.new(S1.encode(), (h + "." + p).encode(), hashlib.sha512).digest()
    tok("64-byte HS512-style signature", h + "." + p + "." + b64u(sig64), reject("signature_invalid"), c=c)
    tok("signature with 32 extra zero bytes", h + "." + p + "." +
        b64u(base64.urlsafe_b64decode(s + "=") + b"\0" * 32), reject("signature_invalid"), c=c)
    flip = s[:10] + ("A" if s[10] != "A" else "B") + s[11:]
    tok("one signature character changed", h + "." + p + "." + flip, reject("signature_invalid"), c=c)
    tok("signature with padding", h + "." + p + "." + s + "=", mal, c=c)

    # padding in header and payload
    hk = {"alg": "HS256", "typ": "JWT", "kid": "k1"}  # 38 bytes: not a multiple of 3
    hs = seg(hk)
    assert len(hs) % 4 == 3
    c = claims()
    ps = seg(c)
    tok("header segment with padding", sign_segments(hs + "=", ps), mal, c=c)
    cp = find(lambda c: len(seg(c)) % 4 == 2, lambda i: claims(pad="q" * i))
    tok("payload segment with padding", sign_segments(seg(HDR), seg(cp) + "=="), mal, c=cp)
    # standard alphabet: segments whose base64url has '-' or '_'
    hstd = find(lambda h: "-" in seg(h) or "_" in seg(h),
                lambda i: {"alg": "HS256", "typ": "JWT", "kid": "key-%d?>" % i})
    cs = claims()
    std_h = seg(hstd).replace("-", "+").replace("_", "/")
    tok("header segment in the standard alphabet (+ or /)", sign_segments(std_h, seg(cs)), mal, c=cs)
    pstd = find(lambda c: "-" in seg(c) or "_" in seg(c), lambda i: claims(pad="~%d>?" % i))
    tok("payload segment in the standard alphabet (+ or /)",
        sign_segments(seg(HDR), seg(pstd).replace("-", "+").replace("_", "/")), mal, c=pstd)
    sstd = find(lambda c: any(ch in mint(HDR, c).split(".")[2] for ch in "-_"),
                lambda i: claims(pad="s%d" % i))
    t = mint(HDR, sstd)
    tok("signature segment in the standard alphabet (+ or /)",
        t.rsplit(".", 1)[0] + "." + t.rsplit(".", 1)[1].replace("-", "+").replace("_", "/"),
        mal, c=sstd)
    # non-canonical trailing bits
    c = claims()
    tok("header segment with non-zero trailing bits", sign_segments(b64_variants(hs), seg(c)), mal, c=c)
    c2 = find(lambda c: len(seg(c)) % 4 == 2, lambda i: claims(pad="t" * i))
    tok("payload segment with non-zero trailing bits (4 unused bits)",
        sign_segments(seg(HDR), b64_variants(seg(c2))), mal, c=c2)
    c3 = find(lambda c: len(seg(c)) % 4 == 3, lambda i: claims(pad="u" * i))
    tok("payload segment with non-zero trailing bits (2 unused bits)",
        sign_segments(seg(HDR), b64_variants(seg(c3))), mal, c=c3)
    c = claims()
    h, p, s = mint(HDR, c).split(".")
    tok("signature segment with non-zero trailing bits", h + "." + p + "." + b64_variants(s), mal, c=c)
    tok("segment length of 4n+1", sign_segments(seg(HDR) + "A", p), mal, c=c)
    tok("space inside the payload segment", sign_segments(h, p[:20] + " " + p[20:]), mal, c=c)
    tok("invalid character in the header segment", sign_segments(h[:5] + "!" + h[6:], p), mal, c=c)
    tok("percent-encoded character in the signature", h + "." + p + "." + s[:-3] + "%3D", mal, c=c)

    # JSON in header and payload
    c = claims()
    tok("header is not JSON", mint("hello", c), mal, c=c)
    tok("header is a JSON array", mint('["HS256"]', c), mal, c=c)
    tok("header is a JSON string", mint('"HS256"', c), mal, c=c)
    tok("header is JSON null", mint("null", c), mal, c=c)
    tok("header has a trailing comma", mint('{"alg":"HS256","typ":"JWT",}', c), mal, c=c)
    tok("header has a UTF-8 BOM", mint(b'\xef\xbb\xbf{"alg":"HS256","typ":"JWT"}', c), mal, c=c)
    tok("header is invalid UTF-8", mint(b'{"alg":"HS256","typ":"JWT","kid":"\xff"}', c), mal, c=c)
    tok("header with duplicate alg (none, then HS256)", mint('{"alg":"none","alg":"HS256","typ":"JWT"}', c), mal, c=c)
    tok("header with duplicate alg (HS256 twice)", mint('{"alg":"HS256","alg":"HS256"}', c), mal, c=c)
    tok("header with duplicate typ written with an escape",
        mint('{"alg":"HS256","typ":"JWT","\\u0074yp":"JWT"}', c), mal, c=c)
    tok("header 65 levels deep", mint('{"alg":"HS256","x":%s}' % ("[" * 64 + "]" * 64), c), mal, c=c)
    tok("header with an unpaired surrogate", mint('{"alg":"HS256","kid":"\\udc00"}', c), mal, c=c)
    c = claims()
    tok("payload is not JSON", mint(HDR, "hello"), mal, b=body(meta_for(c)))
    tok("payload is a JSON array", mint(HDR, J([c])), mal, b=body(meta_for(c)))
    tok("payload is a JSON number", mint(HDR, "1767225600"), mal, b=body(meta_for(c)))
    tok("payload is empty", sign_segments(seg(HDR), ""), mal, b=body(meta_for(c)))
    tok("payload is JSON followed by garbage", mint(HDR, J(c) + "x"), mal, b=body(meta_for(c)))
    pairs = list(c.items())
    pairs.insert(1, ("aud", "attacker-instance"))
    tok("payload with duplicate aud", mint(HDR, Obj(*pairs)), mal, b=body(meta_for(c)))
    pairs = list(c.items()) + [("exp", NOW + 86400)]
    tok("payload with duplicate exp (a later one further out)", mint(HDR, Obj(*pairs)), mal, b=body(meta_for(c)))
    pairs = [(Raw('"\\u0065xp"') if k == "exp" else k, v) for k, v in c.items()]
    pairs.insert(3, ("exp", c["exp"]))
    tok("payload with duplicate exp differing only by escaping", mint(HDR, Obj(*pairs)), mal,
        b=body(meta_for(c)))
    pairs = [(k, Obj(("chatId", "c-9"), ("chatId", "c-10")) if k == "metadata" else v)
             for k, v in c.items()]
    tok("payload with a duplicate inside metadata", mint(HDR, Obj(*pairs)), mal, b=body(meta_for(c)))
    c = claims(deep=nest(63))
    tok("payload 64 levels deep passes", mint(HDR, c), ACCEPT, c=c)
    c = claims(deep=nest(64))
    tok("payload 65 levels deep", mint(HDR, c), mal, c=c)
    c = claims(note=Raw('"\\ud800"'))
    tok("payload with an unpaired surrogate", mint(HDR, c), mal, c=c)
    c = claims()
    tok("payload with invalid UTF-8", mint(HDR, J(c)[:-1].encode() + b',"x":"\xc3\x28"}'), mal, c=c)
    c = claims(iat=Raw("01767225600"))
    tok("payload number with a leading zero", mint(HDR, c), mal, c=c)
    c = claims(x=Raw("NaN"))
    tok("payload with NaN", mint(HDR, c), mal, c=c)
    c = claims()
    tok("header and payload with insignificant whitespace",
        mint('{ "alg" : "HS256",\n  "typ" : "JWT" }', " " + json.dumps(c, indent=1, ensure_ascii=False) + "\n"),
        ACCEPT, c=c)

    # alg
    bad_alg = reject("alg_not_allowed")
    for label, hv in [("none", '"none"'), ("None", '"None"'), ("NONE", '"NONE"'), ("HS512", '"HS512"'),
                      ("HS384", '"HS384"'), ("hs256", '"hs256"'), ("RS256", '"RS256"'),
                      ("ES256", '"ES256"'), ("HS256 with a trailing space", '"HS256 "'),
                      ("empty string", '""'), ("a number", "256"), ("null", "null"),
                      ("an array", '["HS256"]'), ("an object", '{"name":"HS256"}'),
                      ("true", "true")]:
        c = claims()
        tok("alg %s" % label, mint('{"alg":%s,"typ":"JWT"}' % hv, c), bad_alg, c=c)
    c = claims()
    tok("alg missing", mint({"typ": "JWT"}, c), bad_alg, c=c)
    c = claims()
    tok("header is an empty object", mint("{}", c), bad_alg, c=c)
    c = claims()
    h = seg({"alg": "none", "typ": "JWT"})
    tok("alg none with an empty signature", h + "." + seg(c) + ".", bad_alg, c=c)
    c = claims()
    tok("alg HS256 written with escapes", mint('{"alg":"HS\\u0032\\u0035\\u0036","typ":"JWT"}', c),
        ACCEPT, c=c)
    c = claims()
    tok("alg none with a signature by another secret", mint({"alg": "none"}, c, S_OTHER), bad_alg, c=c)

    # typ
    for label, hv in [("jwt", '"jwt"'), ("JWS", '"JWS"'), ("at+jwt", '"at+jwt"'),
                      ("JWT with a trailing space", '"JWT "'), ("a number", "1"),
                      ("null", "null"), ("an array", '["JWT"]'), ("empty string", '""')]:
        c = claims()
        tok("typ %s" % label, mint('{"alg":"HS256","typ":%s}' % hv, c), mal, c=c)
    c = claims()
    tok("typ JWT written with escapes", mint('{"alg":"HS256","typ":"\\u004aWT"}', c), ACCEPT, c=c)

    # crit / b64
    crit = reject("crit_not_supported")
    for label, extra in [("crit [\"exp\"]", ',"crit":["exp"]'), ("crit empty array", ',"crit":[]'),
                         ("crit null", ',"crit":null'), ("crit [\"b64\"] with b64 false", ',"crit":["b64"],"b64":false'),
                         ("b64 false", ',"b64":false'), ("b64 true", ',"b64":true')]:
        c = claims()
        tok("header %s" % label, mint('{"alg":"HS256","typ":"JWT"%s}' % extra, c), crit, c=c)

    # ignored header members
    c = claims()
    tok("kid, jku, x5u, jwk and x5c are ignored",
        mint({"alg": "HS256", "typ": "JWT", "kid": "../../etc/passwd", "jku": "https://attacker.example/jwks",
              "x5u": "https://attacker.example/cert", "jwk": {"kty": "oct", "k": b64u(S_OTHER.encode())},
              "x5c": ["MIIB"]}, c), ACCEPT, c=c)
    c = claims()
    tok("embedded jwk with the attacker's key does not verify",
        mint({"alg": "HS256", "typ": "JWT", "jwk": {"kty": "oct", "k": b64u(S_OTHER.encode())}}, c, S_OTHER),
        reject("signature_invalid"), c=c)
    c = claims()
    tok("kid naming a secret index does not select it",
        mint({"alg": "HS256", "typ": "JWT", "kid": "1"}, c, S_OTHER), reject("signature_invalid"), c=c)

    # signature
    sig = reject("signature_invalid")
    c = claims()
    tok("signed with a secret that is not configured", mint(HDR, c, S_OTHER), sig, c=c)
    c = claims()
    tok("signed with the secret plus a newline", mint(HDR, c, S1 + "\n"), sig, c=c)
    c = claims()
    tok("signed with a prefix of the secret", mint(HDR, c, S1[:32]), sig, c=c)
    c = claims()
    h, p, s = mint(HDR, c).split(".")
    c2 = dict(c, exp=NOW + 86400)
    tok("payload changed after signing", h + "." + seg(c2) + "." + s, sig, c=c2)
    tok("header changed after signing (typ removed)", seg({"alg": "HS256"}) + "." + p + "." + s, sig, c=c)
    tok("signature of the payload alone", h + "." + p + "." + b64u(hs256(S1, p)), sig, c=c)
    tok("signature over header.payload of another token",
        h + "." + p + "." + mint(HDR, claims()).split(".")[2], sig, c=c)

    # order of step 9 checks
    c = claims()
    tok("order: size before segments", "a.b", reject("token_too_large"), c=c,
        config={"max_token_bytes": 2})
    c = claims()
    tok("order: duplicate header member before alg none -> token_malformed",
        mint('{"alg":"none","alg":"none"}', c), mal, c=c)
    c = claims()
    tok("order: payload not JSON before alg none -> token_malformed",
        mint({"alg": "none"}, "not json"), mal, c=c)
    c = claims()
    tok("order: alg before typ -> alg_not_allowed", mint({"alg": "none", "typ": "jwt"}, c), bad_alg, c=c)
    c = claims()
    tok("order: alg before crit -> alg_not_allowed", mint({"alg": "HS512", "crit": ["exp"]}, c), bad_alg, c=c)
    c = claims()
    tok("order: typ before crit -> token_malformed", mint({"alg": "HS256", "typ": "jwt", "crit": ["x"]}, c),
        mal, c=c)
    c = claims()
    tok("order: crit before signature -> crit_not_supported",
        mint({"alg": "HS256", "typ": "JWT", "crit": ["exp"]}, c, S_OTHER), crit, c=c)
    c = claims(exp=NOW - 3600, iat=NOW - 3900)
    tok("order: bad signature and expired -> signature_invalid", mint(HDR, c, S_OTHER), sig, c=c)
    c = claims(iss="someone", aud="other")
    tok("order: bad signature and wrong iss/aud -> signature_invalid", mint(HDR, c, S_OTHER), sig, c=c)
    c = claims()
    tok("order: empty signature with alg HS512 -> alg_not_allowed",
        seg({"alg": "HS512"}) + "." + seg(c) + ".", bad_alg, c=c)
    c = claims()
    tok("order: base64 problem in the signature before alg -> token_malformed",
        seg({"alg": "none"}) + "." + seg(c) + ".AAAA=", mal, c=c)
    c = claims()
    tok("order: token checks before _meta binding",
        mint(HDR, c, S_OTHER), sig, b=body(meta_for(c, task_id="other-task")))
    return f


# ===========================================================================
# claims.json: step 10
# ===========================================================================
def gen_claims():
    f = VFile("claims.json",
              "Step 10: iss, aud, NumericDate types and ranges, every time limit "
              "at its boundary and one second past it, nbf, jti, and the order "
              "of the claim checks. now = 1767225600, skew 30, max age 600.",
              full_config())

    def cl(name, expect, c, **kw):
        std(f, name, c=c, expect=expect, **kw)

    iss = reject("issuer_invalid")
    cl("iss missing", iss, claims(iss=ABSENT))
    cl("iss AgentArea (letter case)", iss, claims(iss="AgentArea"))
    cl("iss with a trailing space", iss, claims(iss="agentarea "))
    cl("iss a number", iss, claims(iss=1))
    cl("iss null", iss, claims(iss=None))
    cl("iss an array holding agentarea", iss, claims(iss=["agentarea"]))
    cl("iss written with an escape is agentarea", ACCEPT, claims(iss=Raw('"\\u0061gentarea"')))

    aud = reject("audience_invalid")
    cl("aud an array containing the instance id", ACCEPT, claims(aud=[INSTANCE]))
    cl("aud an array with other ids and the instance id", ACCEPT,
        claims(aud=["7d8e9f00-1111-4222-8333-444455556666", INSTANCE, "x"]))
    cl("aud an array not containing the instance id", aud,
        claims(aud=["7d8e9f00-1111-4222-8333-444455556666"]))
    cl("aud an array with a non-string element", aud, claims(aud=[INSTANCE, 1]))
    cl("aud an array with null", aud, claims(aud=[None, INSTANCE]))
    cl("aud an array holding an array with the id", aud, claims(aud=[[INSTANCE]]))
    cl("aud an empty array", aud, claims(aud=[]))
    cl("aud a number", aud, claims(aud=1))
    cl("aud null", aud, claims(aud=None))
    cl("aud missing", aud, claims(aud=ABSENT))
    cl("aud an object", aud, claims(aud={"id": INSTANCE}))
    cl("aud another instance", aud, claims(aud="7d8e9f00-1111-4222-8333-444455556666"))
    cl("aud the instance id in upper case", aud, claims(aud=INSTANCE.upper()))
    cl("aud the instance id without hyphens", aud, claims(aud=INSTANCE.replace("-", "")))
    cl("aud empty string", aud, claims(aud=""))

    ci = reject("claim_invalid")
    cl("iat missing", ci, claims(iat=ABSENT))
    cl("exp missing", ci, claims(exp=ABSENT))
    cl("iat as a float 1767225600.0", ci, claims(iat=Raw("1767225600.0")))
    cl("exp as a float 1767225900.0", ci, claims(exp=Raw("1767225900.0")))
    cl("iat with an exponent 1.7672256e9", ci, claims(iat=Raw("1.7672256e9")))
    cl("exp with an exponent and no fraction 17672259E2", ci, claims(exp=Raw("17672259E2")))
    cl("iat a string", ci, claims(iat="1767225600"))
    cl("exp a string", ci, claims(exp="1767225900"))
    cl("iat null (not treated as absent)", ci, claims(iat=None))
    cl("exp null (not treated as absent)", ci, claims(exp=None))
    cl("iat negative", ci, claims(iat=-1))
    cl("exp negative", ci, claims(exp=-1))
    cl("iat true", ci, claims(iat=True))
    cl("exp an object", ci, claims(exp={"t": NOW + 300}))
    cl("exp 2^53 (out of range)", ci, claims(exp=2**53))
    cl("exp 2^64 (out of range, no wrap-around)", ci, claims(exp=2**64 + NOW))
    cl("exp 1e400", ci, claims(exp=Raw("1e400")))
    cl("iat 2^53 (out of range)", ci, claims(iat=2**53))
    cl("exp 2^53-1 is a valid NumericDate", ACCEPT, claims(exp=MAX53))
    cl("iat 2^53-1 is a valid NumericDate, then issued in the future",
        reject("token_issued_in_future"), claims(iat=MAX53, exp=MAX53))
    cl("iat -0 counts as 0, then too old", reject("token_too_old"),
        claims(iat=Raw("-0"), exp=NOW + 300))
    cl("iat 0 is a valid NumericDate, then too old", reject("token_too_old"),
        claims(iat=0, exp=NOW + 300))
    cl("exp 0 is a valid NumericDate, then expired", reject("token_expired"),
        claims(exp=0))

    # expired: now >= exp + skew
    exp_ = reject("token_expired")
    cl("exp + skew == now: expired", exp_, claims(iat=NOW - 330, exp=NOW - 30))
    cl("exp + skew == now + 1: accepted", ACCEPT, claims(iat=NOW - 329, exp=NOW - 29))
    cl("exp == now: accepted within skew", ACCEPT, claims(iat=NOW - 300, exp=NOW))
    cl("exp an hour ago: expired", exp_, claims(iat=NOW - 3900, exp=NOW - 3600))
    cl("expired by the case's now", exp_, claims(), now=NOW + 330)
    cl("accepted by the case's now one second earlier", ACCEPT, claims(), now=NOW + 329)
    cl("skew 0: exp == now is expired", exp_, claims(iat=NOW - 300, exp=NOW),
        config={"clock_skew_s": 0})
    cl("skew 0: exp == now + 1 is accepted", ACCEPT, claims(iat=NOW - 299, exp=NOW + 1),
        config={"clock_skew_s": 0})

    # issued in the future: iat > now + skew
    fut = reject("token_issued_in_future")
    cl("iat == now + skew: accepted", ACCEPT, claims(iat=NOW + 30, exp=NOW + 330))
    cl("iat == now + skew + 1: issued in the future", fut, claims(iat=NOW + 31, exp=NOW + 331))
    cl("iat an hour ahead: issued in the future", fut, claims(iat=NOW + 3600, exp=NOW + 3900))
    cl("skew 0: iat == now + 1 is in the future", fut, claims(iat=NOW + 1, exp=NOW + 301),
        config={"clock_skew_s": 0})
    cl("skew 0: iat == now is accepted", ACCEPT, claims(iat=NOW, exp=NOW + 300),
        config={"clock_skew_s": 0})

    # too old: now - iat > max_token_age_s + skew (exp kept in the future)
    old = reject("token_too_old")
    cl("now - iat == max age + skew: accepted", ACCEPT, claims(iat=NOW - 630, exp=NOW + 3000))
    cl("now - iat == max age + skew + 1: too old", old, claims(iat=NOW - 631, exp=NOW + 3000))
    cl("iat a day ago with a long exp: too old", old, claims(iat=NOW - 86400, exp=NOW + 86400))
    cl("max age 60: now - iat == 90 accepted", ACCEPT, claims(iat=NOW - 90, exp=NOW + 210),
        config={"max_token_age_s": 60})
    cl("max age 60: now - iat == 91 too old", old, claims(iat=NOW - 91, exp=NOW + 209),
        config={"max_token_age_s": 60})

    # nbf
    nyv = reject("token_not_yet_valid")
    cl("nbf == now + skew: accepted", ACCEPT, claims(nbf=NOW + 30))
    cl("nbf == now + skew + 1: not yet valid", nyv, claims(nbf=NOW + 31))
    cl("nbf an hour ahead: not yet valid", nyv, claims(nbf=NOW + 3600))
    cl("nbf 2^53-1 is a valid NumericDate, then not yet valid", nyv, claims(nbf=MAX53))
    cl("nbf in the past: accepted", ACCEPT, claims(nbf=NOW - 10))
    cl("nbf -0 counts as 0: accepted", ACCEPT, claims(nbf=Raw("-0")))
    cl("nbf as a float", ci, claims(nbf=Raw("1767225600.0")))
    cl("nbf with an exponent", ci, claims(nbf=Raw("1.7672256e9")))
    cl("nbf a string", ci, claims(nbf="1767225600"))
    cl("nbf null (not treated as absent)", ci, claims(nbf=None))
    cl("nbf negative", ci, claims(nbf=-5))
    cl("nbf 2^53", ci, claims(nbf=2**53))

    # jti
    cl("jti a number", ci, claims(jti=12345))
    cl("jti null", ci, claims(jti=None))
    cl("jti an array", ci, claims(jti=["a"]))
    cl("jti true", ci, claims(jti=True))
    cl("jti empty string is a string", ACCEPT, claims(jti=""))
    cl("jti absent", ACCEPT, claims(jti=ABSENT))

    # order of step 10 checks
    cl("order: expired and wrong aud -> audience_invalid", aud,
        claims(aud="other", iat=NOW - 3900, exp=NOW - 3600))
    cl("order: wrong iss and wrong aud -> issuer_invalid", iss, claims(iss="x", aud="y"))
    cl("order: iss missing and iat missing -> issuer_invalid", iss, claims(iss=ABSENT, iat=ABSENT))
    cl("order: aud missing and exp a string -> audience_invalid", aud, claims(aud=ABSENT, exp="soon"))
    cl("order: iat float and expired exp -> claim_invalid", ci,
        claims(iat=Raw("1767222000.0"), exp=NOW - 3600))
    cl("order: exp null and iat in the future -> claim_invalid", ci,
        claims(iat=NOW + 3600, exp=None))
    cl("order: expired and issued in the future -> token_expired", exp_,
        claims(iat=NOW + 3600, exp=NOW - 3600))
    cl("order: expired and too old -> token_expired", exp_, claims(iat=NOW - 7200, exp=NOW - 3600))
    cl("order: issued in the future and nbf in the future -> token_issued_in_future", fut,
        claims(iat=NOW + 3600, exp=NOW + 3900, nbf=NOW + 3600))
    cl("order: too old and nbf in the future -> token_too_old", old,
        claims(iat=NOW - 3600, exp=NOW + 3600, nbf=NOW + 3600))
    cl("order: too old and nbf a float -> token_too_old", old,
        claims(iat=NOW - 3600, exp=NOW + 3600, nbf=Raw("1.5")))
    cl("order: nbf in the future and jti a number -> token_not_yet_valid", nyv,
        claims(nbf=NOW + 3600, jti=7))
    cl("order: nbf a string and jti a number -> claim_invalid", ci,
        claims(nbf="later", jti=7))
    cl("order: jti a number and a context claim missing -> claim_invalid", ci,
        claims(jti=7, task_id=ABSENT))
    cl("order: expired and context malformed -> token_expired", exp_,
        claims(iat=NOW - 3900, exp=NOW - 3600, protocol="v1"))
    cl("order: aud invalid and _meta mismatching -> audience_invalid", aud,
        claims(aud=[]), m=meta_for(claims(), task_id="other"))
    return f


# ===========================================================================
# context.json: steps 11-14
# ===========================================================================
def gen_context():
    f = VFile("context.json",
              "Steps 11-14: context claim types and formats (token first, then "
              "_meta), the tool claim, protocol majors, and the binding between "
              "_meta agentarea/* keys and the token's claims, with their order.",
              full_config())

    def cx(name, expect, c, m=None, **kw):
        std(f, name, c=c, m=m, expect=expect, **kw)

    cm = reject("context_malformed")
    # required claims missing from the token (even though _meta has them)
    for k in ["protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key"]:
        full = claims()
        c = dict(full)
        del c[k]
        cx("token lacks required claim %s" % k, cm, c, m=meta_for(full))
    # wrong types in the token
    cx("task_id a number", cm, claims(task_id=42, idempotency_key="42:" + CALL))
    cx("tool_call_id null", cm, claims(tool_call_id=None))
    cx("workspace_id an object", cm, claims(workspace_id={"id": WS}))
    cx("protocol a number", cm, claims(protocol=1))
    cx("idempotency_key an array", cm, claims(idempotency_key=[TASK, CALL]))
    cx("agent_id null", cm, claims(agent_id=None))
    cx("agent_id a number", cm, claims(agent_id=7))
    cx("end_user_id a number", cm, claims(end_user_id=42))
    cx("end_user_id null", cm, claims(end_user_id=None))
    cx("metadata a string", cm, claims(metadata='{"chatId":"c-9"}'))
    cx("metadata an array", cm, claims(metadata=[{"chatId": "c-9"}]))
    cx("metadata null", cm, claims(metadata=None))
    cx("end_user_id empty", cm, claims(end_user_id=""))
    cx("end_user_id 257 ASCII characters", cm, claims(end_user_id="u" * 257))
    cx("end_user_id 256 ASCII characters", ACCEPT, claims(end_user_id="u" * 256))
    cx("end_user_id 1 character", ACCEPT, claims(end_user_id="u"))
    cx("end_user_id 256 x é (512 bytes) counts code points", ACCEPT, claims(end_user_id="é" * 256))
    cx("end_user_id 257 x é", cm, claims(end_user_id="é" * 257))
    cx("end_user_id 256 x U+1F600 (512 UTF-16 units) counts code points", ACCEPT,
        claims(end_user_id="😀" * 256))
    cx("end_user_id 257 x U+1F600", cm, claims(end_user_id="😀" * 257))
    cx("end_user_id 255 ASCII + one escaped é is 256 code points", ACCEPT,
        claims(end_user_id="u" * 255 + "é"),
        b=body(meta_for(claims(end_user_id="u" * 255 + "é"))).replace("é", "\\u00e9"))
    cx("empty strings are strings for the other claims", ACCEPT,
        claims(task_id="", tool_call_id="", workspace_id="", idempotency_key=":", agent_id=""))
    cx("metadata empty object", ACCEPT, claims(metadata={}))

    # protocol format
    for p in ["1", "1.2", "01", "1.0", "1.02", "001.999", "0001"]:
        cx("protocol %s accepted" % json.dumps(p), ACCEPT, claims(protocol=p))
    for p in ["1.", "v1", "1.2.3", "", "\uff11", ".1", "1.x", "-1", "+1", "1 ", " 1", "1,2",
              "1e0", "\u0661"]:
        cx("protocol %s is malformed" % json.dumps(p), cm, claims(protocol=p))
    cx("protocol major 0000000000000000000001 (leading zeros, any length) accepted", ACCEPT,
        claims(protocol="0000000000000000000001"))

    # idempotency key
    cx("idempotency_key not task_id:tool_call_id", cm, claims(idempotency_key="something-else"))
    cx("idempotency_key reversed", cm, claims(idempotency_key=CALL + ":" + TASK))
    cx("idempotency_key with another separator", cm, claims(idempotency_key=TASK + "/" + CALL))
    cx("idempotency_key with a trailing space", cm, claims(idempotency_key=TASK + ":" + CALL + " "))

    # _meta values with wrong types/formats (token fine)
    c = claims()
    cx("_meta agentarea/task_id a number", cm, c, m=meta_for(c, task_id=42))
    c = claims()
    cx("_meta agentarea/protocol v1", cm, c, m=meta_for(c, protocol="v1"))
    c = claims()
    cx("_meta agentarea/end_user_id empty", cm, c, m=meta_for(c, end_user_id=""))
    c = claims()
    cx("_meta agentarea/metadata a string", cm, c, m=meta_for(c, metadata='{"chatId":"c-9"}'))
    c = claims()
    cx("_meta agentarea/agent_id null", cm, c, m=meta_for(c, agent_id=None))
    c = claims(agent_id=ABSENT)
    cx("_meta agentarea/agent_id a number, no agent_id claim -> context_malformed first", cm, c,
        m=meta_for(c, agent_id=5))
    c = claims()
    cx("_meta agentarea/idempotency_key differs: composition is for the token only -> meta_mismatch",
        reject("meta_mismatch"), c, m=meta_for(c, idempotency_key="x:y"))
    c = claims()
    cx("_meta agentarea/end_user_id 257 characters", cm, c, m=meta_for(c, end_user_id="v" * 257))
    # only the eight context names have type rules
    c = claims(foo=5)
    cx("_meta agentarea/foo a number bound to claim foo", ACCEPT, c, m=meta_for(c, foo=5))

    # step 12: tool
    tm = reject("tool_mismatch")
    cx("tool claim differs from params.name", tm, claims(tool="delete_order"))
    cx("tool claim differs in letter case", tm, claims(tool="Get_order"))
    cx("tool claim a number", tm, claims(tool=1))
    cx("tool claim null", tm, claims(tool=None))
    cx("tool claim an array", tm, claims(tool=[TOOL]))
    cx("tool claim in NFD, name in NFC", tm, claims(tool="cafe\u0301"),
        b=body(meta_for(claims(tool="cafe\u0301")), name="caf\u00e9"))
    c = claims(tool="caf\u00e9")
    cx("tool claim raw, name written with an escape", ACCEPT, c,
        b=body(meta_for(c), name=Raw('"caf\\u00e9"')))
    c = claims(tool="")
    cx("tool claim empty, name empty", ACCEPT, c, b=body(meta_for(c), name=""))

    # step 13: protocol
    pu = reject("protocol_unsupported")
    cx("protocol 2 with majors [1]", pu, claims(protocol="2"))
    cx("protocol 2.0 with majors [1]", pu, claims(protocol="2.0"))
    cx("protocol 0 with majors [1]", pu, claims(protocol="0"))
    cx("protocol 10 with majors [1]", pu, claims(protocol="10"))
    cx("protocol 18446744073709551617 does not wrap to 1", pu, claims(protocol="18446744073709551617"))
    cx("protocol 2 with majors [1, 2]", ACCEPT, claims(protocol="2"), config={"protocol_majors": [1, 2]})

    # step 14: binding
    mm = reject("meta_mismatch")
    mi = reject("meta_missing")
    cmiss = reject("claim_missing")
    c = claims(agent_id=ABSENT)
    cx("_meta agentarea/agent_id without an agent_id claim", cmiss, c, m=meta_for(c, agent_id=AGENT))
    c = claims()
    cx("_meta agentarea/foo without a foo claim", cmiss, c, m=meta_for(c, foo="bar"))
    c = claims()
    cx("_meta agentarea/Task_id without a Task_id claim", cmiss, c, m=meta_for(c, Task_id=TASK))
    c = claims(tool=ABSENT)
    cx("_meta agentarea/tool without a tool claim", cmiss, c, m=meta_for(c, tool=TOOL))
    c = claims()
    cx("_meta agentarea/ (empty name) without a claim", cmiss, c, m=meta_for(c, **{"": "x"}))
    c = claims()
    cx("_meta agentarea/tool bound to the tool claim", ACCEPT, c, m=meta_for(c, tool=TOOL))
    c = claims()
    cx("_meta agentarea/iss bound to the iss claim", ACCEPT, c, m=meta_for(c, iss="agentarea"))
    c = claims()
    cx("_meta agentarea/iss differing from the iss claim", mm, c, m=meta_for(c, iss="someone"))
    c = claims()
    m = meta_for(c)
    m["AgentArea/task_id"] = "not-bound"
    m["agentarea"] = "not-a-key-with-slash"
    m["x-agentarea/task_id"] = "x"
    cx("keys not starting with agentarea/ are not bound", ACCEPT, c, m=m)

    c = claims()
    cx("task_id differs", mm, c, m=meta_for(c, task_id="6f1c2a9e-0000-4e5f-8a7b-9c0d1e2f3a4b"))
    c = claims()
    cx("workspace_id differs", mm, c, m=meta_for(c, workspace_id="other-ws"))
    c = claims()
    cx("protocol 1 in the token, 1.0 in _meta", mm, c, m=meta_for(c, protocol="1.0"))
    c = claims(metadata={"a": 1, "b": {"x": True, "y": [1, 2]}})
    cx("metadata with members in another order", ACCEPT, c,
        m=meta_for(c, metadata={"b": {"y": [1, 2], "x": True}, "a": 1}))
    c = claims(metadata={"n": 1})
    cx("metadata 1 vs 1.0", ACCEPT, c, m=meta_for(c, metadata={"n": Raw("1.0")}))
    c = claims(metadata={"n": 100})
    cx("metadata 100 vs 1e2", ACCEPT, c, m=meta_for(c, metadata={"n": Raw("1e2")}))
    c = claims(metadata={"n": Raw("0.5")})
    cx("metadata 0.5 vs 5E-1", ACCEPT, c, m=meta_for(c, metadata={"n": Raw("5E-1")}),
        context_drop=["metadata"])
    c = claims(metadata={"n": 1})
    cx("metadata 1 vs \"1\"", mm, c, m=meta_for(c, metadata={"n": "1"}))
    c = claims(metadata={"n": 1})
    cx("metadata 1 vs true", mm, c, m=meta_for(c, metadata={"n": True}))
    c = claims(metadata={"n": 0})
    cx("metadata 0 vs false", mm, c, m=meta_for(c, metadata={"n": False}))
    c = claims(metadata={"n": None})
    cx("metadata null member vs missing member", mm, c, m=meta_for(c, metadata={}))
    c = claims(metadata={"a": [[1, 2], [3, 4]]})
    cx("nested arrays in another order", mm, c, m=meta_for(c, metadata={"a": [[3, 4], [1, 2]]}))
    c = claims(metadata={"a": [[1, 2], [3, 4]]})
    cx("inner array in another order", mm, c, m=meta_for(c, metadata={"a": [[2, 1], [3, 4]]}))
    c = claims(metadata={"a": [1, 2]})
    cx("array with an extra element", mm, c, m=meta_for(c, metadata={"a": [1, 2, 2]}))
    c = claims(metadata={"a": {"b": 1}})
    cx("nested object with an extra member", mm, c, m=meta_for(c, metadata={"a": {"b": 1, "c": 1}}))
    c = claims(metadata={"n": Raw("9007199254740993")})
    cx("metadata 2^53+1 vs 2^53 (compared exactly, not as doubles)", mm, c,
        m=meta_for(c, metadata={"n": Raw("9007199254740992")}), context_drop=["metadata"])
    c = claims(metadata={"n": Raw("100000000000000000000000000001")})
    cx("metadata big integer vs the same value with an exponent", ACCEPT, c,
        m=meta_for(c, metadata={"n": Raw("1.00000000000000000000000000001e29")}),
        context_drop=["metadata"])
    c = claims(metadata={"n": Raw("0.1")})
    cx("metadata 0.1 vs 0.10000000000000001 (differ as decimals)", mm, c,
        m=meta_for(c, metadata={"n": Raw("0.10000000000000001")}))
    c = claims(end_user_id="\u00e9")
    cx("end_user_id NFC in the token, NFD in _meta", mm, c, m=meta_for(c, end_user_id="e\u0301"))
    c = claims(metadata={"name": "e\u0301"})
    cx("metadata string NFD in the token, NFC in _meta", mm, c,
        m=meta_for(c, metadata={"name": "\u00e9"}))
    c = claims(end_user_id="\u00e9")
    cx("end_user_id raw in the token, \\u00e9 escape in _meta", ACCEPT, c,
        m=meta_for(c, end_user_id=Raw('"\\u00e9"')))
    c = claims(end_user_id="😀")
    cx("end_user_id raw astral in the token, surrogate-pair escape in _meta", ACCEPT, c,
        m=meta_for(c, end_user_id=Raw('"\\ud83d\\ude00"')))
    c = claims(end_user_id="Ab")
    cx("end_user_id differs in letter case", mm, c, m=meta_for(c, end_user_id="ab"))

    c = claims()
    cx("token agent_id not in _meta", mi, c, m=meta_for(c, agent_id=ABSENT))
    c = claims()
    cx("token metadata not in _meta", mi, c, m=meta_for(c, metadata=ABSENT))
    c = claims()
    cx("token task_id not in _meta", mi, c, m=meta_for(c, task_id=ABSENT))
    c = claims()
    cx("token end_user_id not in _meta", mi, c, m=meta_for(c, end_user_id=ABSENT))
    c = claims()
    cx("_meta absent with a valid token", mi, c, b=body())
    c = claims()
    cx("_meta empty with a valid token", mi, c, m={})
    c = claims()
    cx("_meta with only progressToken", mi, c, m={"progressToken": 3})
    c = claims(tool=TOOL, jti="j-1")
    cx("tool and jti claims are not required in _meta", ACCEPT, c)

    # order
    c = claims(tool="other_tool")
    cx("order: tool_mismatch and meta_mismatch -> tool_mismatch", tm, c,
        m=meta_for(c, task_id="different"))
    c = claims(tool="other_tool", protocol="2")
    cx("order: tool_mismatch and protocol_unsupported -> tool_mismatch", tm, c)
    c = claims(protocol="2")
    cx("order: protocol_unsupported and meta_missing -> protocol_unsupported", pu, c,
        m=meta_for(c, agent_id=ABSENT))
    c = claims(protocol="v2", tool="other_tool")
    cx("order: context_malformed and tool_mismatch -> context_malformed", cm, c)
    c = claims(end_user_id="")
    cx("order: token claim malformed and _meta value malformed -> context_malformed", cm, c,
        m=meta_for(c, task_id=1))
    c = claims(tool="other_tool")
    cx("order: _meta value malformed before tool_mismatch -> context_malformed", cm, c,
        m=meta_for(c, workspace_id=[]))
    c = claims(agent_id=ABSENT)
    m = meta_for(c)
    m = dict(list(m.items())[:2] + [("agentarea/agent_id", AGENT)] + list(m.items())[2:])
    m["agentarea/workspace_id"] = "different"
    assert list(m).index("agentarea/agent_id") < list(m).index("agentarea/workspace_id")
    cx("order: first _meta key lacks its claim, a later one mismatches -> claim_missing", cmiss, c, m=m)
    c = claims(agent_id=ABSENT)
    m = {"progressToken": 3, "agentarea/task_id": "different"}
    for k, v in meta_for(c).items():
        m.setdefault(k, v)
    m["agentarea/agent_id"] = AGENT
    cx("order: first _meta key mismatches, a later one lacks its claim -> meta_mismatch", mm, c, m=m)
    c = claims()
    cx("order: mismatch before a missing _meta key -> meta_mismatch", mm, c,
        m=meta_for(c, agent_id=ABSENT, end_user_id="someone-else"))
    c = claims()
    cx("order: claim_missing before a missing _meta key -> claim_missing", cmiss, c,
        m=meta_for(c, metadata=ABSENT, foo=1))
    c = claims(metadata={"a": 1})
    m = {"progressToken": 3, "agentarea/metadata": {"a": 2}}
    m.update({k: v for k, v in meta_for(c).items() if k not in m})
    m["agentarea/zzz"] = 1
    cx("order: document order, not alphabetical: metadata mismatch before zzz missing", mm, c, m=m)
    c = claims()
    m = {"agentarea/zzz": 1}
    m.update(meta_for(c, metadata={"chatId": "other"}))
    cx("order: document order, not alphabetical: zzz missing before metadata mismatch", cmiss, c, m=m)
    return f


# ===========================================================================
# numbers.json: numbers of any size, compared and echoed exactly
# ===========================================================================
def gen_numbers():
    f = VFile("numbers.json",
              "Numbers of any size, exactly: step 14 binds _meta values to token "
              "claims by exact decimal value whatever the length of the exponent "
              "(no saturation or wrap-around at 64 bits), refusals echo request "
              "ids no double holds, and an accepted context carries such numbers. "
              "A runner must read this file without rounding its numbers.",
              full_config())
    mm = reject("meta_mismatch")

    def bound(name, token_n, meta_n, equal, key="metadata"):
        """Claim `key` (or metadata's member n) holds the number written
        `token_n`, its _meta twin `meta_n`. The verdict comes from their
        exact values; `equal` is what the case's name says about them."""
        same = exact_value(token_n) == exact_value(meta_n)
        assert same == equal, name
        if key == "metadata":
            c = claims(metadata={"n": Raw(token_n)})
            m = meta_for(c, metadata={"n": Raw(meta_n)})
        else:
            c = claims(**{key: Raw(token_n)})
            m = meta_for(c, **{key: Raw(meta_n)})
        std(f, name, c=c, m=m, expect=ACCEPT if same else mm)

    e20 = "99999999999999999999"  # beyond 2^64
    bound("exponents beyond 64 bits that differ by one", "1e" + e20, "1e99999999999999999998", False)
    bound("exponents beyond 64 bits, the same value with the point moved",
          "1e" + e20, "10e99999999999999999998", True)
    bound("negative exponents beyond 64 bits, the same value", "10e-" + e20,
          "1e-99999999999999999998", True)
    bound("negative exponents beyond 64 bits that differ by one", "1e-" + e20,
          "1e-99999999999999999998", False)
    bound("exponent 2^63-1 vs 2^63", "1e9223372036854775807", "1e9223372036854775808", False)
    bound("0.1e(2^63) equals 1e(2^63-1): the point moves the exponent back in range",
          "0.1e9223372036854775808", "1e9223372036854775807", True)
    bound("exponent 2^64 does not wrap around to 1e0", "1e18446744073709551616", "1", False)
    bound("exponent 2^64+1 does not wrap around to 1e1", "1e18446744073709551617", "10", False)
    bound("exponent -2^64 does not wrap around to 1e0", "1e-18446744073709551616", "1", False)
    bound("a borrow through every digit of the exponent", "1e100000000000000000000",
          "1000e99999999999999999997", True)
    bound("fractions with huge negative exponents, the same value",
          "123.45e-100000000000000000000", "12345e-100000000000000000002", True)
    bound("leading zeros of a fraction move a huge exponent", "0.00123e" + e20,
          "1.23e99999999999999999996", True)
    bound("huge exponents, different digits", "1.23e99999999999999999996",
          "1.24e99999999999999999996", False)
    bound("huge exponents of opposite signs", "1e" + e20, "1e-" + e20, False)
    bound("huge exponent, numbers of opposite signs", "-1e" + e20, "1e" + e20, False)
    bound("zero with a huge exponent equals 0", "0e" + e20, "0", True)
    bound("negative zero with a huge negative exponent equals 0.0", "-0e-" + e20, "0.0", True)
    bound("negative zero equals zero", "-0", "0", True)
    bound("zero with a huge exponent differs from the tiniest number", "0e" + e20, "1e-" + e20, False)
    bound("-1E+0001 equals -10", "-1E+0001", "-10", True)
    bound("-1E+0001 differs from -1", "-1E+0001", "-1", False)
    bound("-1E+0000 equals -1", "-1E+0000", "-1", True)
    bound("an exponent with 30 leading zeros", "5e0000000000000000000000000000002", "500", True)
    bound("exponent -000 equals no exponent", "1e-000", "1", True)
    # Exponents longer than any fixed-width integer and than Python's
    # default int conversion limit (4300 digits); the token stays under
    # max_token_bytes.
    long_ = 4500
    bound("a %d-digit exponent of leading zeros in _meta" % (long_ + 1), "7e5",
          "7e" + "0" * long_ + "5", True)
    bound("%d-digit exponents, the same value: 10e99..9 vs 1e100..0" % long_,
          "10e" + "9" * long_, "1e1" + "0" * long_, True)
    bound("%d-digit exponents that differ by one" % long_, "1e" + "9" * long_,
          "1e1" + "0" * long_, False)
    bound("a claim outside the context compared by value at a huge exponent",
          "25e" + e20, "2.5e100000000000000000000", True, key="amount")
    bound("a claim outside the context, huge exponents that differ",
          "25e" + e20, "2.5e" + e20, False, key="amount")

    # Request ids no double holds, echoed in refusals (step 14 and step 6).
    ids = [("12345678901234567890 (beyond 2^53)", 12345678901234567890),
           ("12345678901234567891 (the same double as ...890)", 12345678901234567891),
           ("2^64+1", 2**64 + 1),
           ("-2^63-1", -2**63 - 1),
           ("1e400 (beyond any double)", Raw("1e400")),
           ("-1.5E-400 (below any double)", Raw("-1.5E-400")),
           ("with 51 significant digits", Raw("123456789012345678901234567890.000000000000000000001")),
           ("1e99999999999999999999", Raw("1e" + e20))]
    for label, rid in ids:
        c = claims()
        std(f, "request id %s echoed in a refusal" % label, c=c,
            b=body(meta_for(c, task_id="another-task"), id=rid), expect=mm)
    for label, rid in [("1e400", Raw("1e400")), ("12345678901234567890", 12345678901234567890)]:
        f.add("request id %s echoed at step 6" % label,
              body=J({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": None}),
              expect=reject("invalid_params"))

    # Accepted contexts holding such numbers.
    big = {"id": 12345678901234567890, "u64_plus_1": 2**64 + 1, "huge": Raw("1e400"),
           "tiny": Raw("-1.5E-400"), "wide": Raw("123456789012345678901234567890.000000000000000000001"),
           "frac": Raw("0.1000000000000000000000000001"), "vast": Raw("1e" + e20)}
    c = claims(metadata=big)
    std(f, "accepted context holding numbers no double holds", c=c)
    other = {"id": Raw("1.234567890123456789e19"), "u64_plus_1": Raw("18446744073709551617.000"),
             "huge": Raw("10E+399"), "tiny": Raw("-0.15e-399"),
             "wide": Raw("1.23456789012345678901234567890000000000000000000001e29"),
             "frac": Raw("1000000000000000000000000001e-28"), "vast": Raw("10e99999999999999999998")}
    for k in big:
        v = big[k].text if isinstance(big[k], Raw) else str(big[k])
        assert exact_value(v) == exact_value(other[k].text), k
    c = claims(metadata=big)
    std(f, "accepted context holding such numbers, _meta writing them another way", c=c,
        m=meta_for(c, metadata=other))
    return f


# ===========================================================================
# config.json: require_context, rotation, protocol_majors, credentials
# ===========================================================================
def gen_config():
    f = VFile("config.json",
              "Configuration variants, each set in the case: require_context "
              "false, secret rotation and secret encodings, protocol_majors, "
              "clock settings, static credential variants.",
              full_config(secrets=[S1, S2]))
    opt = {"require_context": False}

    c = claims()
    f.add("require_context false: no token, no agentarea keys -> pass",
          body=body({"progressToken": 3}), config=opt, expect=PASS)
    f.add("require_context false: no token, no _meta -> pass", body=body(), config=opt, expect=PASS)
    f.add("require_context false: no token, keys that do not start with agentarea/ -> pass",
          body=body({"progressToken": 3, "AgentArea/task_id": TASK, "agentarea": 1,
                     "xagentarea/task_id": 2}),
          config=opt, expect=PASS)
    f.add("require_context false: no token but agentarea/task_id -> token_missing",
          body=body(meta_for(c)), config=opt, expect=reject("token_missing"))
    f.add("require_context false: no token but an unknown agentarea/foo key -> token_missing",
          body=body({"progressToken": 3, "agentarea/foo": 1}), config=opt,
          expect=reject("token_missing"))
    f.add("require_context false: no token but an agentarea/ key with an empty name -> token_missing",
          body=body({"agentarea/": None}), config=opt, expect=reject("token_missing"))
    c = claims()
    std(f, "require_context false: a valid token is verified and accepted", c=c, config=opt)
    c = claims()
    std(f, "require_context false: a token signed by an unknown secret is refused", c=c,
        secret=S_OTHER, config=opt, expect=reject("signature_invalid"))
    c = claims()
    std(f, "require_context false: a valid token and no _meta -> meta_missing", c=c, b=body(),
        config=opt, expect=reject("meta_missing"))
    c = claims()
    t = mint(HDR, c)
    f.add("require_context false: token sent twice -> token_duplicated", body=body(meta_for(c)),
          headers=[["x-agentarea-context", t], ["x-agentarea-context", t]], config=opt,
          expect=reject("token_duplicated"))
    f.add("require_context false: _meta null is still invalid_params",
          body=body(None), config=opt, expect=reject("invalid_params"))
    f.add("require_context false: Mcp-Name is still checked",
          body=body({"progressToken": 3}), extra_headers=[["Mcp-Name", "x"]], config=opt,
          expect=reject("header_mismatch"))
    f.add("require_context false: tools/list passes", body=J(lst_obj()), config=opt, expect=PASS)
    f.add("require_context true: no token, no agentarea keys -> token_missing",
          body=body({"progressToken": 3}), config={"require_context": True},
          expect=reject("token_missing"))
    f.add("require_context false: empty token header -> token_malformed", body=body(), token="",
          config=opt, expect=reject("token_malformed"))

    # rotation
    c = claims()
    std(f, "rotation: token signed with the second secret -> secret_index 1", c=c, secret=S2)
    c = claims()
    std(f, "rotation: token signed with the first secret -> secret_index 0", c=c, secret=S1)
    c = claims()
    std(f, "rotation: signed with neither secret", c=c, secret=S_OTHER,
        expect=reject("signature_invalid"))
    c = claims()
    std(f, "rotation: secrets listed new-first, signed with the new one -> secret_index 0", c=c,
        secret=S2, config={"secrets": [S2, S1]})
    c = claims()
    std(f, "rotation: three secrets, signed with the third -> secret_index 2", c=c,
        secret=S3, config={"secrets": [S1, S2, S3]})
    c = claims()
    std(f, "rotation: old secret dropped, token signed with it", c=c, secret=S1,
        config={"secrets": [S2]}, expect=reject("signature_invalid"))
    s32 = "0123456789abcdef0123456789ABCDEF"
    s512 = ("toolctx-512-byte-secret-" * 22)[:512]
    assert len(s32.encode()) == 32 and len(s512.encode()) == 512
    c = claims()
    std(f, "secret of exactly 32 bytes", c=c, secret=s32, config={"secrets": [s32]})
    c = claims()
    std(f, "secret of exactly 512 bytes", c=c, secret=s512, config={"secrets": [s512]})
    sutf = "секрет-ключ-для-подписи-toolctx"  # UTF-8 bytes are the key
    assert 32 <= len(sutf.encode()) <= 512
    c = claims()
    std(f, "non-ASCII secret is used as its UTF-8 bytes", c=c, secret=sutf, config={"secrets": [sutf]})
    c = claims()
    std(f, "non-ASCII secret: a token keyed with its UTF-16 bytes does not verify", c=c,
        token=mint(HDR, c, sutf.encode("utf-16-le")), config={"secrets": [sutf]},
        expect=reject("signature_invalid"))
    sl1 = "clé-secrète-pour-toolctx-vecteurs-é"
    assert 32 <= len(sl1.encode()) <= 512
    c = claims()
    std(f, "secret with é: a token keyed with its Latin-1 bytes does not verify", c=c,
        token=mint(HDR, c, sl1.encode("latin-1")), config={"secrets": [sl1]},
        expect=reject("signature_invalid"))

    # protocol_majors
    c = claims(protocol="2")
    std(f, "protocol_majors [1, 2]: protocol 2 accepted", c=c, config={"protocol_majors": [1, 2]})
    c = claims(protocol="2.7")
    std(f, "protocol_majors [1, 2]: protocol 2.7 accepted", c=c, config={"protocol_majors": [1, 2]})
    c = claims(protocol="3")
    std(f, "protocol_majors [1, 2]: protocol 3 unsupported", c=c, config={"protocol_majors": [1, 2]},
        expect=reject("protocol_unsupported"))
    c = claims(protocol="1")
    std(f, "protocol_majors [2]: protocol 1 unsupported", c=c, config={"protocol_majors": [2]},
        expect=reject("protocol_unsupported"))
    c = claims(protocol="02.1")
    std(f, "protocol_majors [2]: protocol 02.1 accepted", c=c, config={"protocol_majors": [2]})
    c = claims(protocol="010")
    std(f, "protocol_majors [10]: protocol 010 accepted", c=c, config={"protocol_majors": [10]})
    c = claims(protocol="1")
    std(f, "protocol_majors [10]: protocol 1 unsupported", c=c, config={"protocol_majors": [10]},
        expect=reject("protocol_unsupported"))

    # clock settings
    c = claims(iat=NOW - 400, exp=NOW - 100)
    std(f, "clock_skew_s 300: exp 100 s ago accepted", c=c, config={"clock_skew_s": 300})
    c = claims(iat=NOW - 600, exp=NOW - 300)
    std(f, "clock_skew_s 300: exp + skew == now expired", c=c, config={"clock_skew_s": 300},
        expect=reject("token_expired"))
    c = claims(iat=NOW - 3600, exp=NOW + 60)
    std(f, "max_token_age_s 3600: iat an hour ago accepted", c=c, config={"max_token_age_s": 3600})
    c = claims(iat=NOW - 3631, exp=NOW + 60)
    std(f, "max_token_age_s 3600: iat 3631 s ago too old", c=c, config={"max_token_age_s": 3600},
        expect=reject("token_too_old"))

    # credentials
    xk = {"header": "x-api-key", "values": ["key-alpha-0001", "key-beta-0002"]}
    c = claims()
    b = body(meta_for(c))
    t = mint(HDR, c)
    def cr(name, hdrs, expect, cred=xk, bb=None):
        f.add(name, body=bb if bb is not None else b,
              headers=[["content-type", "application/json"]] + hdrs + [["x-agentarea-context", t]],
              config={"credential": cred}, expect=expect, claims=c)
    cr("credential: first accepted value", [["x-api-key", "key-alpha-0001"]], ACCEPT)
    cr("credential: second of two accepted values", [["x-api-key", "key-beta-0002"]], ACCEPT)
    cr("credential: header name compared case-insensitively", [["X-API-KEY", "key-beta-0002"]], ACCEPT)
    cr("credential: configured name in mixed case",
       [["x-api-key", "key-alpha-0001"]], ACCEPT, cred={"header": "X-Api-Key", "values": xk["values"]})
    cr("credential: neither accepted value", [["x-api-key", "key-gamma-0003"]],
       reject("credential_invalid"))
    cr("credential: both accepted values, sent twice", [["x-api-key", "key-alpha-0001"],
                                                       ["X-Api-Key", "key-beta-0002"]],
       reject("credential_invalid"))
    cr("credential: missing", [], reject("credential_missing"))
    cr("credential: sent in another header", [["authorization", "Bearer key-alpha-0001"]],
       reject("credential_missing"))
    cr("credential: the two values concatenated", [["x-api-key", "key-alpha-0001key-beta-0002"]],
       reject("credential_invalid"))
    cr("credential: missing, garbage body", [], reject("credential_missing"), bb="{{{")
    cr("credential: wrong, garbage body", [["x-api-key", "nope"]],
       reject("credential_invalid"), bb="\x00\x01")
    cr("credential: right, then the token is still verified", [["x-api-key", "key-beta-0002"]],
       reject("meta_mismatch"), bb=body(meta_for(c, task_id="other")))
    return f


# ===========================================================================
# forward.json: what reaches the upstream (CONTRACT §7, precise point)
# ===========================================================================
# Every context field a configuration can forward, with the header name the
# file's configuration gives it, and the Tuix headers (`_meta` member,
# header).
FORWARD_FIELDS = ["task_id", "tool_call_id", "workspace_id", "idempotency_key", "protocol",
                  "agent_id", "end_user_id", "metadata", "tool", "jti", "iat", "exp",
                  "secret_index"]
FORWARD_ALL = {"headers": {k: "x-toolctx-" + k.replace("_", "-") for k in FORWARD_FIELDS},
               "tuix": True}
TUIX = [("sessionId", "x-session-id"), ("idempotencyKey", "x-idempotency-key")]


def es_number(text):
    """A JSON number as RFC 8785 writes it (section 3.2.2.3): the nearest
    IEEE double, printed as ECMAScript's Number.prototype.toString does."""
    x = float(text)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("no canonical form: %s" % text)
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mant, _, e = repr(abs(x)).partition("e")  # repr: the shortest digits that round-trip
    whole, _, frac = mant.partition(".")
    frac = "" if frac == "0" else frac
    digits = whole + frac
    n = int(e or "0") + len(whole)  # value = 0.<digits> * 10**n
    d = digits.lstrip("0")
    n -= len(digits) - len(d)
    d = d.rstrip("0")
    k = len(d)
    if k <= n <= 21:
        return sign + d + "0" * (n - k)
    if 0 < n <= 21:
        return sign + d[:n] + "." + d[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + d
    exp = "%s%d" % ("+" if n - 1 >= 0 else "-", abs(n - 1))
    return sign + d[0] + ("." + d[1:] if k > 1 else "") + "e" + exp


JCS_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r",
             '"': '\\"', "\\": "\\\\"}


def js_string(s):
    """A string as RFC 8785 (and ECMAScript's JSON.stringify) writes it."""
    return '"' + "".join(JCS_SHORT.get(ch) or ("\\u%04x" % ord(ch) if ord(ch) < 0x20 else ch) for ch in s) + '"'


def json_text(v, number, members):
    """Compact JSON of a generator value: number(v) writes a number (None:
    not one); members(obj) gives an object's member names in written order."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    n = number(v)
    if n is not None:
        return n
    if isinstance(v, str):
        return js_string(v)
    if isinstance(v, list):
        return "[" + ",".join(json_text(x, number, members) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(js_string(k) + ":" + json_text(v[k], number, members) for k in members(v)) + "}"
    raise TypeError(v)


def es_value(v):
    if isinstance(v, Raw):
        return es_number(v.text)
    if isinstance(v, (int, float)):
        return es_number(repr(v))
    return None


def jcs(v):
    """RFC 8785 canonical JSON of a generator value (numbers as Raw, int or
    float; members sorted by their UTF-16 code units)."""
    return json_text(v, es_value, lambda obj: sorted(obj, key=lambda k: k.encode("utf-16-be")))


def header_text(value):
    """CONTRACT §7: UTF-8 bytes `!`..`~` but `%` kept, every other byte %XX."""
    return "".join(chr(b) if 0x21 <= b <= 0x7e and b != 0x25 else "%%%02X" % b
                   for b in value.encode("utf-8"))


def forwarded(v):
    """The text a `_meta` member forwards (before encoding), or None."""
    if v is None or v is ABSENT:
        return None
    return v if isinstance(v, str) else jcs(v)


def forward_expect(fwd, c, meta, secret_index=0):
    """expect.forward of an accepted call: every configured header, with the
    value the upstream must receive, or None when the call has none or its
    text is empty (an empty string forwards no header, as null does)."""
    out = {}
    for field, name in (fwd.get("headers") or {}).items():
        if field == "secret_index":
            text = str(secret_index)
        elif field in ("iat", "exp"):
            text = str(c[field])
        elif field == "metadata":
            text = jcs(c["metadata"]) if "metadata" in c else None
        else:
            text = c.get(field)
        out[name.lower()] = header_text(text) if text else None
    if fwd.get("tuix"):
        for member, name in TUIX:
            text = forwarded(meta.get(member, ABSENT))
            out[name] = header_text(text) if text else None
    return out


def forward_nothing(fwd):
    """expect.forward of a passed request: every configured header absent."""
    names = [n.lower() for n in (fwd.get("headers") or {}).values()]
    if fwd.get("tuix"):
        names += [n for _, n in TUIX]
    return {n: None for n in names}


def spoofs(fwd):
    """Two copies of every header `fwd` writes, in other letter cases."""
    out = []
    for n in forward_nothing(fwd):
        out.append([n.upper(), "spoofed-" + n])
        out.append(["-".join(p.capitalize() for p in n.split("-")), "spoofed-again"])
    return out


def tuix_meta(c, **members):
    """The `_meta` matching claims `c`, plus `members` as they are named
    (sessionId, idempotencyKey), ABSENT leaving one out."""
    m = meta_for(c)
    m.update({k: v for k, v in members.items() if v is not ABSENT})
    return m


def gen_forward():
    fwd = FORWARD_ALL
    f = VFile("forward.json",
              "What reaches the upstream (CONTRACT §7, precise point): every context "
              "field and the Tuix _meta members (sessionId, idempotencyKey) forwarded "
              "as headers, a string as it is, any other JSON value but null as its "
              "RFC 8785 text, UTF-8 bytes outside !..~ and % written %XX; null or "
              "absent forwards nothing, and so does an empty string. Every "
              "forwarded header sent by the caller is removed first, on pass too.",
              full_config(forward=fwd))

    def fw(name, c=None, m=None, b=None, secret_index=0, cfg_fwd=fwd, **kw):
        c = claims() if c is None else c
        m = meta_for(c) if m is None else m
        std(f, name, c=c, m=m, b=b, forward=forward_expect(cfg_fwd, c, m, secret_index), **kw)

    # -- Tuix values: every kind of JSON value as _meta.sessionId
    values = [
        ("a plain token", "sess-1_a.b~c"),
        ("a space", "a b"),
        ("a percent sign", "100%"),
        ("a two-byte letter", "ü"),
        ("CJK", "日本"),
        ("a four-byte emoji", "😀"),
        ("edge spaces", " x "),
        ("a tab", "a\tb"),
        ("CR, LF, NUL and DEL", "a\r\nb\x00c\x7f"),
        ("quotes, backslash and visible ASCII", 'q"b\\!#&+,/:;=?@[]^`{|}~'),
        ("an empty string (no header)", ""),
        ("an integer", 5),
        ("a negative number", -12),
        ("1.50 (canonical 1.5)", Raw("1.50")),
        ("1e2 (canonical 100)", Raw("1e2")),
        ("-0 (canonical 0)", Raw("-0")),
        ("1e21 (canonical 1e+21)", Raw("1e21")),
        ("1e-7 (canonical 1e-7)", Raw("1e-7")),
        ("0.000001 (canonical 0.000001)", Raw("0.000001")),
        ("2^53+1 (canonical the nearest double)", Raw("9007199254740993")),
        ("true", True),
        ("false", False),
        ("an object with unsorted keys", {"b": 1, "a": "ü", "c": {"z": None, "y": [Raw("2.0")]}}),
        ("an object keyed beyond the BMP (UTF-16 order)", {"\uff61": 1, "😀": 2, "a": 3}),
        ("an array", [1, "x y", None, True, {"b": 2, "a": 1}]),
        ("an empty object", {}),
        ("an empty array", []),
        ("a string inside JSON holding controls", {"k": "a\nb\u0001\"\\"}),
    ]
    for label, v in values:
        c = claims()
        fw("sessionId: %s" % label, c=c, m=tuix_meta(c, sessionId=v, idempotencyKey="k-1"))
    c = claims()
    fw("sessionId and idempotencyKey null forward nothing", c=c,
       m=tuix_meta(c, sessionId=None, idempotencyKey=None))
    c = claims()
    fw("sessionId absent, idempotencyKey an empty string", c=c, m=tuix_meta(c, idempotencyKey=""))
    c = claims()
    fw("idempotencyKey a number, sessionId an object", c=c,
       m=tuix_meta(c, idempotencyKey=Raw("1.50"), sessionId={"turn": 2, "id": "s 1"}))
    c = claims()
    m = Obj(*list(meta_for(c).items()),
            (Raw('"session\\u0049d"'), Raw('"\\u0041\\u00fc\\ud83d\\ude00 \\/"')))
    b = body(m)
    std(f, "sessionId written with escapes (name and value)", c=c, b=b,
        forward=forward_expect(fwd, c, {"sessionId": "A\u00fc\U0001F600 /"}))

    # -- context fields
    c = claims(task_id="tâche 100%", tool_call_id="call\t1\u0001", workspace_id=" ws ",
               idempotency_key="tâche 100%:call\t1\u0001", protocol="01.3",
               agent_id="日本", end_user_id="Zoë\x7f", tool="überprüfe bestellung",
               jti="jti 100% ü",
               metadata={"z": "ü", "a": [Raw("1.50"), Raw("1e2"), True, False, None],
                         "m": {"b": "", "a": Raw("-0")}, "\uff61": 0, "😀": 1})
    fw("every context field with spaces, %, controls and non-ASCII", c=c,
       b=body(meta_for(c), name="überprüfe bestellung"))
    c = claims(agent_id="", metadata={})
    fw("an empty agent_id and empty metadata", c=c)
    c = required_claims(tool=ABSENT, jti=ABSENT)
    fw("only the required claims: the optional fields forward nothing", c=c)
    c = claims(iat=NOW - 120, exp=NOW + 180, nbf=NOW - 120)
    fw("iat and exp as decimal integers", c=c)
    c = claims()
    fw("secret_index 1: signed with the second configured secret", c=c, secret_index=1,
       config={"secrets": [S2, S1]})
    c = claims(end_user_id="ü" * 256)
    fw("end_user_id of 256 two-byte characters (its length limit)", c=c)

    # -- values at the size limits
    def at_token_limit(i):
        return claims(task_id="T " * 1000 + "ü", tool_call_id="c%",
                      idempotency_key="T " * 1000 + "ü:c%", metadata={"pad": "p" * i})
    c = find(lambda c: len(mint(HDR, c)) >= 8192, at_token_limit)
    assert len(mint(HDR, c)) == 8192
    fw("a token of exactly max_token_bytes with long forwarded values", c=c)
    c = claims()

    def at_body_limit(i):
        return body(tuix_meta(c, sessionId="ü" * 2000 + "a" * i))
    b = find(lambda b: len(b.encode()) >= 8192, at_body_limit)
    assert len(b.encode()) == 8192
    m = exact_loads(b)["params"]["_meta"]
    fw("a body of exactly max_body_bytes (8192), sessionId filling it", c=c, m=m, b=b,
       config={"max_body_bytes": 8192})

    # -- spoofed copies of every forwarded header
    c = claims()
    m = tuix_meta(c, sessionId="s-1", idempotencyKey="k-1")
    fw("spoofed copies of every forwarded header are replaced", c=c, m=m,
       extra_headers=spoofs(fwd))
    c = required_claims(tool=ABSENT, jti=ABSENT)
    fw("spoofed copies of headers the call does not forward are removed", c=c,
       extra_headers=spoofs(fwd))
    c = claims()
    fw("spoofed Tuix headers removed when sessionId and idempotencyKey are null", c=c,
       m=tuix_meta(c, sessionId=None, idempotencyKey=None), extra_headers=spoofs(fwd))
    c = claims(agent_id="")
    fw("spoofed copies removed when sessionId, idempotencyKey and agent_id are empty strings",
       c=c, m=tuix_meta(c, sessionId="", idempotencyKey=""), extra_headers=spoofs(fwd))
    for method in ["GET", "DELETE"]:
        f.add("%s passes with every forwarded header removed" % method, method=method,
              body="", extra_headers=spoofs(fwd), expect=PASS, forward=forward_nothing(fwd))
    f.add("tools/list passes: nothing forwarded, spoofed headers removed",
          body=J({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                  "params": {"_meta": {"sessionId": "s-1", "idempotencyKey": "k-1"}}}),
          extra_headers=spoofs(fwd), expect=PASS, forward=forward_nothing(fwd))
    f.add("a notification passes: nothing forwarded, spoofed headers removed",
          body=J({"jsonrpc": "2.0", "method": "notifications/initialized"}),
          extra_headers=spoofs(fwd), expect=PASS, forward=forward_nothing(fwd))

    # -- other forward configurations
    own = {"headers": {"task_id": "X-Task-Id", "jti": "X-Jti"}}
    c = claims(jti="j ü")
    fw("forward configured in the case: names lower-cased, Tuix off", c=c,
       m=tuix_meta(c, sessionId="s-1"), cfg_fwd=own, config={"forward": own},
       extra_headers=spoofs(own))
    tuix = {"tuix": True}
    c = claims()
    fw("Tuix headers alone", c=c, m=tuix_meta(c, sessionId="a b", idempotencyKey=7),
       cfg_fwd=tuix, config={"forward": tuix}, extra_headers=spoofs(tuix))
    return f


# ===========================================================================
# Output.
# ===========================================================================
GENERATORS = [gen_valid, gen_transport, gen_json, gen_token, gen_claims, gen_context, gen_numbers,
              gen_config, gen_forward]


def pretty(v, level=0):
    """json.dumps(indent=2, ensure_ascii=False), except that arrays of
    scalars (header pairs, secrets, protocol_majors) stay on one line."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = ["%s%s: %s" % (inner, json.dumps(k, ensure_ascii=False), pretty(x, level + 1))
                 for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if all(not isinstance(x, (dict, list)) for x in v):
            return "[" + ", ".join(pretty(x) for x in v) + "]"
        return "[\n" + ",\n".join(inner + pretty(x, level + 1) for x in v) + "\n" + pad + "]"
    return json.dumps(v, ensure_ascii=False)


def comparable(v):
    """`v` with every number as ("number", its JSON text), so a
    document read back by exact_loads compares with the one written."""
    if isinstance(v, Raw):
        return ("number", v.text)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return ("number", json.dumps(v))
    if isinstance(v, dict):
        return {k: comparable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [comparable(x) for x in v]
    return v


def render():
    out = {}
    for g in GENERATORS:
        vf = g()
        text = pretty(vf.doc()) + "\n"
        assert comparable(exact_loads(text)) == comparable(vf.doc())
        out[vf.fname] = text
    return out


def strays(files):
    """Vector files here that this generator does not write; a file that
    names a "format" (helpers, settings, memory store, store address) is
    another generator's."""
    def other_format(path):
        with open(os.path.join(HERE, path), encoding="utf-8") as fh:
            return "format" in json.load(fh)
    return [os.path.join(HERE, path) for path in sorted(os.listdir(HERE))
            if path.endswith(".json") and path not in files and not other_format(path)]


def report(files):
    total = 0
    for name, text in files.items():
        n = len(exact_loads(text)["cases"])
        total += n
        print("%-16s %4d cases" % (name, n))
    print("%-16s %4d cases" % ("total", total))


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate.py", HERE, render, report, strays))
