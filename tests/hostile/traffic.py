"""The hostile-traffic generator, for any front end: seeded adversarial
request classes, their mutations, tokens minted with Python's hmac
(independently of toolctx's code), the wire (one connection, pipelines, cut
and drip-fed bodies) and the core's reference runner as the judge.

Target-independent: what a given front end (Envoy, the Node middleware, the
Worker in workerd) is expected to do with framing it refuses itself, and how
it shows that a request was handed on, stays in its driver
(tests/envoy/hostile.py, tests/hostile/npm.py), which passes a `classify` to
`run_connection`.

Standard library only.
"""

import base64
import collections
import hashlib
import hmac
import http.client
import io
import json
import os
import random
import select
import socket
import struct
import subprocess
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SEQ_HEADER = "x-hostile-seq"
MIB = 1024 * 1024
CONTEXT_CLAIMS = ("protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key",
                  "agent_id", "end_user_id", "metadata")

# The headers a front end under test may forward (the gateways' context and
# task_id headers, the Tuix pair of CONTRACT §7): Gen.spoof sends copies of
# each, which must never reach the upstream.
SPOOFED_HEADERS = ("x-toolctx-context", "x-toolctx-task-id", "x-session-id", "x-idempotency-key")
TUIX_HEADERS = {"sessionId": "x-session-id", "idempotencyKey": "x-idempotency-key"}
# Tuix `_meta` values with every shape the §7 encoding covers.
FORWARD_VALUES = ["plain", "a b", "100%", "\u00fc", "\u65e5\u672c", " x ", "a\tb", "", 5, 1.5, True, None,
                  {"b": 1, "a": [1, "x"]}, ["q"], "k" * 512, "%41", "\u0000", "\r\n"]

# CONTRACT.md §3, written out here (not read from the core): reason ->
# (HTTP status, JSON-RPC code).
TABLE = {}
for _reasons, _status, _code in [
    ("credential_missing credential_invalid", 401, -32001),
    ("body_too_large", 413, -32600),
    ("parse_error", 400, -32700),
    ("duplicate_member too_deep batch_with_tools_call", 400, -32600),
    ("invalid_params", 400, -32602),
    ("header_mismatch", 400, -32020),
    ("token_missing token_duplicated token_too_large token_malformed alg_not_allowed "
     "crit_not_supported signature_invalid", 401, -32001),
    ("issuer_invalid audience_invalid claim_invalid token_expired token_issued_in_future "
     "token_too_old token_not_yet_valid", 401, -32001),
    ("context_malformed", 400, -32602),
    ("tool_mismatch protocol_unsupported meta_mismatch meta_missing claim_missing", 403, -32003),
    ("policy_denied", 403, -32004),
    ("token_replayed", 401, -32001),
]:
    for _r in _reasons.split():
        TABLE[_r] = (_status, _code)

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(("ok - %s" % name) if ok else ("FAIL - %s: %s" % (name, str(detail)[:2000])), flush=True)


# ---------------------------------------------------------------- tokens ----

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def sign(header_b64, payload_b64, secret):
    return b64url(hmac.new(secret.encode(), (header_b64 + "." + payload_b64).encode(), hashlib.sha256).digest())


def mint(claims, secret, header=None, raw_header=None, raw_payload=None):
    h = b64url(raw_header if raw_header is not None else compact(header or {"alg": "HS256", "typ": "JWT"}))
    p = b64url(raw_payload if raw_payload is not None else compact(claims))
    return h + "." + p + "." + sign(h, p, secret)


class Keys:
    def __init__(self, seed):
        r = random.Random("keys:%d" % seed)
        hexs = lambda n: "".join(r.choice("0123456789abcdef") for _ in range(n))  # noqa: E731
        self.secret = "hostile-secret-" + hexs(40)
        self.wrong = "hostile-wrong-" + hexs(40)
        self.credential = "Bearer hostile-" + hexs(24)


def fresh_claims(rng, now, tool_name="search", **over):
    task, call = "task-%08x" % rng.getrandbits(32), "call-%08x" % rng.getrandbits(32)
    c = {"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 300, "jti": "%016x" % rng.getrandbits(64),
         "protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-%d" % rng.randrange(100),
         "idempotency_key": task + ":" + call}
    if rng.random() < 0.5:
        c["agent_id"] = "agent-%d" % rng.randrange(10)
    if rng.random() < 0.5:
        c["end_user_id"] = "user-%d" % rng.randrange(1000)
    if rng.random() < 0.3:
        c["metadata"] = {"k": rng.randrange(10), "tags": ["a", "b"]}
    if rng.random() < 0.3:
        c["tool"] = tool_name
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


def meta_for(c):
    return {"agentarea/" + k: c[k] for k in CONTEXT_CLAIMS if k in c}


def call_doc(c, rng, meta=None, name="search"):
    return {"jsonrpc": "2.0", "id": rng.choice([rng.randrange(1 << 31), "req-%d" % rng.randrange(1000)]),
            "method": "tools/call",
            "params": {"name": name, "arguments": {"query": "q" * rng.randrange(0, 200), "n": rng.randrange(50)},
                       "_meta": meta_for(c) if meta is None else meta}}


# -------------------------------------------------------------- requests ----

class Req:
    """One request: what goes on the wire and what the generator expects.

    expect: "accept" (a minted valid call), "refuse" (must never reach the
    upstream), "any" (a random mutation: the core's reference runner judges
    whatever reached the upstream)."""

    def __init__(self, cls, headers, body, expect, method="POST", listener="main", framing="length",
                 chunks=None, drip=0.0, cut=None, rst=False):
        self.cls, self.headers, self.body, self.expect = cls, headers, body, expect
        self.method, self.listener, self.framing = method, listener, framing
        self.chunks, self.drip, self.cut, self.rst = chunks, drip, cut, rst
        self.seq = None
        self.spoofed = False  # carries copies of forwarded headers (Gen.spoof)
        self.resent = 0
        self.sent_at = None
        self.outcome = None  # "upstream", "refused", "envoy", "none", "bad"
        self.status = None
        self.reply = None
        self.rpc = None      # (id, code, message, reason) of a refusal

    def wire(self, port):
        """The request's bytes: head, and the body as a list of pieces."""
        lines = [b"%s /mcp HTTP/1.1" % self.method.encode(), b"host: 127.0.0.1:%d" % port,
                 b"%s: %d" % (SEQ_HEADER.encode(), self.seq)]
        for n, v in self.headers:
            lines.append(_b(n) + b": " + _b(v))
        pieces = [self.body]
        if self.framing == "length":
            lines.append(b"content-length: %d" % len(self.body))
        elif self.framing == "length-long":  # announces more than it sends (cut)
            lines.append(b"content-length: %d" % (len(self.body) + 100))
        elif self.framing.startswith("chunked"):
            lines.append(b"transfer-encoding: chunked")
            sizes = self.chunks or [len(self.body)]
            pieces, i = [], 0
            for s in sizes:
                part = self.body[i:i + s]
                i += s
                if part:
                    ext = b";x=1" if self.framing == "chunked-ext" else b""
                    pieces.append(b"%x%s\r\n%s\r\n" % (len(part), ext, part))
            if i < len(self.body):
                pieces.append(b"%x\r\n%s\r\n" % (len(self.body) - i, self.body[i:]))
            if self.framing == "chunked-bad":
                pieces.insert(len(pieces) // 2, b"zz\r\nxx\r\n")
            pieces.append(b"0\r\n\r\n")
        head = b"\r\n".join(lines) + b"\r\n\r\n"
        return head, pieces

    def head_values(self):
        """The headers as the filter sees them (Envoy trims OWS), or None
        when they cannot be written as a vector (not UTF-8)."""
        out = []
        for n, v in self.headers:
            try:
                n, v = _b(n).decode("utf-8"), _b(v).decode("utf-8")
            except UnicodeDecodeError:
                return None
            out.append([n, v.strip(" \t")])
        return out


def _b(x):
    return x if isinstance(x, bytes) else x.encode("utf-8")


class Gen:
    """Builds request number i from its own RNG; tokens are minted now."""

    def __init__(self, keys, seed, tool="search"):
        # tool: the tool every call names (one the target server has).
        self.keys, self.seed, self.tool = keys, seed, tool
        self.kinds = [  # (weight, name, builder)
            (30, "valid", self.valid),
            (60, "token_bitflip", self.token_bitflip),
            (40, "token_truncate", self.token_truncate),
            (50, "token_segments", self.token_segments),
            (30, "token_wrong_key", self.token_wrong_key),
            (60, "token_jose_header", self.token_jose_header),
            (40, "token_base64", self.token_base64),
            (70, "token_claims", self.token_claims),
            (20, "token_presence", self.token_presence),
            (70, "body_bitflip", self.body_bitflip),
            (50, "body_truncate", self.body_truncate),
            (40, "body_duplicate", self.body_duplicate),
            (40, "body_shape", self.body_shape),
            (40, "body_meta", self.body_meta),
            (40, "invalid_utf8", self.invalid_utf8),
            (40, "deep_nesting", self.deep_nesting),
            (30, "batch", self.batch),
            (25, "mcp_headers", self.mcp_headers),
            (40, "chunked", self.chunked),
            (30, "huge_headers", self.huge_headers),
            (25, "credential", self.credential),
            (15, "not_post", self.not_post),
            (2, "oversize_body", self.oversize_body),
            (20, "disconnect", self.disconnect),
            (25, "pipeline", self.pipeline),
        ]
        self.total_weight = sum(w for w, _, _ in self.kinds)

    def unit(self, i):
        """The requests of unit i (one, or several for a pipeline)."""
        rng = random.Random("%d:%d" % (self.seed, i))
        x = rng.randrange(self.total_weight)
        for w, name, fn in self.kinds:
            if x < w:
                break
            x -= w
        out = fn(rng)
        reqs = out if isinstance(out, list) else [out]
        self.spoof(random.Random("spoof:%d:%d" % (self.seed, i)), reqs)
        return name, reqs

    # -- helpers
    def now(self):
        return int(time.time())

    def good(self, rng, **over):
        c = fresh_claims(rng, self.now(), tool_name=self.tool, **over)
        return c, mint(c, self.keys.secret), call_doc(c, rng, name=self.tool)

    def hdrs(self, token=None, extra=()):
        h = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
        if token is not None:
            h.append(("x-agentarea-context", token))
        return h + list(extra)

    @staticmethod
    def flip(data, rng, n):
        b = bytearray(data)
        for _ in range(n):
            if b:
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        return bytes(b)

    # -- classes
    def valid(self, rng, cls="valid"):
        c, tok, doc = self.good(rng)
        framing = rng.choice(["length", "length", "length", "chunked"])
        body = compact(doc) if rng.random() < 0.5 else json.dumps(doc, indent=rng.choice([None, 1])).encode()
        chunks = [rng.randrange(1, 64) for _ in range(8)] if framing == "chunked" else None
        return Req(cls, self.hdrs(tok), body, "accept", framing=framing, chunks=chunks)

    def token_bitflip(self, rng):
        c, tok, doc = self.good(rng)
        bad = self.flip(tok.encode(), rng, rng.choice([1, 1, 2, 3]))
        return Req("token_bitflip", self.hdrs(bad), compact(doc), "any")

    def token_truncate(self, rng):
        c, tok, doc = self.good(rng)
        return Req("token_truncate", self.hdrs(tok[:rng.randrange(len(tok))]), compact(doc), "refuse")

    def token_segments(self, rng):
        c, tok, doc = self.good(rng)
        h, p, s = tok.split(".")
        _, other, _ = self.good(rng)
        oh, op, osg = other.split(".")
        variants = [p + "." + h + "." + s, h + "." + op + "." + s, h + "." + p + "." + osg, h + "." + p,
                    h + "." + p + "." + s + "." + s, h + ".." + s, "." + p + "." + s, h + "." + p + ".",
                    s + "." + p + "." + h, h + "." + h + "." + s, "..", "...", tok + "." + tok]
        return Req("token_segments", self.hdrs(rng.choice(variants)), compact(doc), "refuse")

    def token_wrong_key(self, rng):
        c = fresh_claims(rng, self.now(), tool_name=self.tool)
        secret = rng.choice([self.keys.wrong, self.keys.secret[:-1], self.keys.secret + "x", "", self.keys.secret.upper()])
        return Req("token_wrong_key", self.hdrs(mint(c, secret)), compact(call_doc(c, rng, name=self.tool)), "refuse")

    def token_jose_header(self, rng):
        c = fresh_claims(rng, self.now(), tool_name=self.tool)
        s, w = self.keys.secret, self.keys.wrong
        attacker_jwk = {"kty": "oct", "k": b64url(w.encode())}
        variants = [  # (header bytes, signing secret or None for an empty signature, expect)
            (compact({"alg": "none", "typ": "JWT"}), None, "refuse"),
            (compact({"alg": "none"}), s, "refuse"),
            (compact({"alg": "HS512", "typ": "JWT"}), s, "refuse"),
            (compact({"alg": "hs256"}), s, "refuse"),
            (compact({"alg": "RS256"}), s, "refuse"),
            (compact({"alg": ["HS256"]}), s, "refuse"),
            (compact({"typ": "JWT"}), s, "refuse"),
            (compact({"alg": None}), s, "refuse"),
            (compact({"alg": "HS256", "typ": "JWS"}), s, "refuse"),
            (compact({"alg": "HS256", "crit": ["b64"], "b64": False}), s, "refuse"),
            (compact({"alg": "HS256", "b64": False}), s, "refuse"),
            (compact({"alg": "HS256", "crit": ["exp"]}), s, "refuse"),
            (compact({"alg": "HS256", "crit": []}), s, "refuse"),
            (b'{"alg":"HS256","alg":"none"}', s, "refuse"),
            (b'{"alg":"none","alg":"HS256"}', s, "refuse"),
            (b'{"alg":"HS256","typ":"JWT"} ', s, "any"),
            (b'["HS256"]', s, "refuse"),
            (b'{"alg":"HS\\u0032256"}', s, "refuse"),
            (b'{"alg":"HS\\u00325\\u0036"}', s, "any"),
            (compact({"alg": "HS256", "jwk": attacker_jwk}), w, "refuse"),
            (compact({"alg": "HS256", "jku": "http://127.0.0.1:1/jwks", "kid": "k"}), w, "refuse"),
            (compact({"alg": "HS256", "kid": "../../dev/null"}), "", "refuse"),
            # Correctly signed: kid/jku/x5u are never acted upon, so accepted.
            (compact({"alg": "HS256", "typ": "JWT", "kid": "k1", "jku": "http://127.0.0.1:1/"}), s, "accept"),
            (compact({"alg": "HS256", "x5u": "http://127.0.0.1:1/", "x5c": ["AAAA"]}), s, "accept"),
        ]
        hb, secret, expect = rng.choice(variants)
        h, p = b64url(hb), b64url(compact(c))
        tok = h + "." + p + "." + (sign(h, p, secret) if secret is not None else "")
        return Req("token_jose_header", self.hdrs(tok), compact(call_doc(c, rng, name=self.tool)), expect)

    def token_base64(self, rng):
        c, tok, doc = self.good(rng)
        h, p, s = tok.split(".")
        pick = rng.randrange(8)
        if pick == 0:
            bad = h + "=." + p + "." + s
        elif pick == 1:
            bad = h + "." + p + "." + s + "=="
        elif pick == 2:  # standard alphabet with padding, correctly signed over that text
            for k in range(64):
                c["agent_id"] = "a" * k + "?>~"
                raw = compact(c)
                std = base64.b64encode(raw).decode()
                if "+" in std or "/" in std:
                    break
            doc = call_doc(c, rng, name=self.tool)
            hs = b64url(compact({"alg": "HS256", "typ": "JWT"}))
            bad = hs + "." + std + "." + sign(hs, std, self.keys.secret)
        elif pick == 3:
            bad = h + "." + p.replace("-", "+").replace("_", "/") + "." + s.replace("-", "+").replace("_", "/")
            if bad == tok:
                bad = h + "." + p + "." + s[:-2] + "+/"
        elif pick == 4:  # non-zero trailing bits on the last character
            alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            i = alphabet.index(s[-1])
            bad = h + "." + p + "." + s[:-1] + alphabet[i | 1 if i % 4 == 0 else i ^ 1]
        elif pick == 5:
            bad = h + ". " + p + "." + s
        elif pick == 6:
            bad = h + "." + p + "." + s[:20] + "\t" + s[20:]
        else:
            bad = h + "." + p + "." + s[:10] + "%" + s[11:]
        return Req("token_base64", self.hdrs(bad), compact(doc), "refuse")

    def token_claims(self, rng):
        now = self.now()
        variants = [
            dict(aud=["x", INSTANCE]), dict(nbf=now - 10), dict(protocol="01.7"),
            dict(iss="agentare"), dict(iss=None), dict(iss=["agentarea"]), dict(aud="other"), dict(aud=[]),
            dict(aud=None), dict(aud=7),
            dict(iat=now - 5000, exp=now - 4000), dict(iat=now + 5000, exp=now + 5300),
            dict(iat=now - 3000, exp=now + 3000), dict(nbf=now + 5000), dict(nbf="0"),
            dict(iat=float(now) + 0.5), dict(exp=str(now + 300)), dict(exp=None), dict(iat=None),
            dict(iat=2 ** 53), dict(exp=2 ** 53 + 10), dict(iat=-1), dict(exp=1e20), dict(jti=5),
            dict(protocol="2"), dict(protocol="1.x"), dict(protocol=1),
            dict(idempotency_key="a:b"), dict(task_id=None), dict(end_user_id=""), dict(end_user_id="u" * 257),
            dict(metadata="flat"), dict(tool="other"), dict(tool=5), dict(agent_id=["a"]),
        ]
        fine = 3  # the first three are valid tokens
        pick = rng.randrange(len(variants))
        c = fresh_claims(rng, now, tool_name=self.tool, **variants[pick])
        expect = "accept" if pick < fine else "refuse"
        if rng.random() < 0.1:  # oversized token: padding claim past 8 KiB
            c["metadata"] = {"pad": "p" * rng.randrange(8200, 12000)}
            expect = "refuse"
        doc = call_doc(c, rng, name=self.tool)
        return Req("token_claims", self.hdrs(mint(c, self.keys.secret)), compact(doc), expect)

    def token_presence(self, rng):
        c, tok, doc = self.good(rng)
        pick = rng.randrange(4)
        if pick == 0:
            h = self.hdrs(None)
        elif pick == 1:
            h = self.hdrs(tok, [("x-agentarea-context", tok)])
        elif pick == 2:
            h = self.hdrs(tok, [("X-AgentArea-Context", self.good(rng)[1])])
        else:
            h = self.hdrs("")
        return Req("token_presence", h, compact(doc), "refuse")

    def body_bitflip(self, rng):
        c, tok, doc = self.good(rng)
        return Req("body_bitflip", self.hdrs(tok), self.flip(compact(doc), rng, rng.choice([1, 1, 2, 4, 8])), "any")

    def body_truncate(self, rng):
        c, tok, doc = self.good(rng)
        body = compact(doc)
        return Req("body_truncate", self.hdrs(tok), body[:rng.randrange(len(body))], "refuse")

    def body_duplicate(self, rng):
        c, tok, doc = self.good(rng)
        body = compact(doc).decode()
        meta_key = '"agentarea/task_id":'
        variants = [
            body.replace('"method":"tools/call"', '"method":"tools/list","method":"tools/call"'),
            body.replace('"method":"tools/call"', '"method":"tools/call","method":"tools/list"'),
            body.replace('"method":"tools/call"', '"method":"tools/call","m\\u0065thod":"tools/list"'),
            body.replace('"jsonrpc":"2.0"', '"jsonrpc":"2.0","id":null'),
            body.replace(meta_key, meta_key + '"evil","agentarea/task_id":'),
            body.replace('"params":{', '"params":{"name":"other",'),
            body[:-1] + ',"params":{"name":"x"}}',
            body.replace('"arguments":{', '"arguments":{"n":1,'),
        ]
        return Req("body_duplicate", self.hdrs(tok), rng.choice(variants).encode(), "refuse")

    def body_shape(self, rng):
        c, tok, doc = self.good(rng)
        pick = rng.randrange(12)
        expect = "refuse"
        if pick == 0:
            doc["params"] = [1, 2]
        elif pick == 1:
            doc["params"]["name"] = 5
        elif pick == 2:
            doc["params"]["_meta"] = "x"
        elif pick == 3:
            del doc["params"]
        elif pick == 4:
            doc["id"] = {"x": 1}
        elif pick == 5:
            doc["id"] = [1]
        elif pick == 6:
            doc["id"] = True
        elif pick == 7:
            doc["id"] = 10 ** 40
        elif pick == 8:
            del doc["id"]  # a tools/call without an id is still verified
            expect = "accept"
        elif pick == 9:
            doc["id"] = -0.0
            expect = "accept"
        elif pick == 10:
            doc["params"]["name"] = "other"
        else:
            doc = [] if rng.random() < 0.5 else rng.choice([None, 1, "s", True])
            expect = "any"
        if pick in (4, 5, 6, 7):
            expect = "accept"  # odd ids are answered with null, the call itself is fine
        if pick == 10:
            expect = "refuse" if "tool" in c else "accept"
        return Req("body_shape", self.hdrs(tok), compact(doc), expect)

    def body_meta(self, rng):
        c, tok, doc = self.good(rng)
        meta = doc["params"]["_meta"]
        pick = rng.randrange(7)
        if pick == 0:
            meta["agentarea/task_id"] = "someone-else"
        elif pick == 1:
            meta["agentarea/workspace_id"] = "ws-999"
        elif pick == 2:
            del meta["agentarea/task_id"]
        elif pick == 3:
            meta["agentarea/extra"] = "x"
        elif pick == 4:
            meta["agentarea/protocol"] = 1
        elif pick == 5:
            doc["params"]["_meta"] = {}
        else:
            meta["agentarea/task_id"] = c["task_id"] + "\u0301"
        return Req("body_meta", self.hdrs(tok), compact(doc), "refuse")

    def invalid_utf8(self, rng):
        c, tok, doc = self.good(rng)
        body = compact(doc)
        junk = rng.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80", b"\xe2\x82",
                           b"\\ud800", b"\\udc00\\ud800", b"\x00", b"\x1f"])
        where = rng.randrange(4)
        if where == 0:
            body = body.replace(b'"query":"', b'"query":"' + junk, 1)
        elif where == 1:
            body = body.replace(b'"agentarea/task_id":"', b'"agentarea/task_id":"' + junk, 1)
        elif where == 2:
            body = body.replace(b'"_meta":{', b'"_meta":{"k' + junk + b'":1,', 1)
        else:
            return Req("invalid_utf8", self.hdrs(tok, [("mcp-name", b"se\xffarch")]), body, "refuse")
        return Req("invalid_utf8", self.hdrs(tok), body, "refuse" if where else "any")

    def deep_nesting(self, rng):
        c, tok, doc = self.good(rng)
        depth = rng.choice([63, 64, 65, 66, 100, 1000, 10000, rng.randrange(65, 10001)])
        kind = rng.randrange(3)
        if kind == 0:  # inside the arguments
            nest = b"[" * depth + b"]" * depth
            body = compact(doc).replace(b'"arguments":{', b'"arguments":{"deep":' + nest + b",", 1)
            total = depth + 3
        elif kind == 1:  # whole body
            body = b'{"a":' * depth + b"1" + b"}" * depth
            total = depth
        else:  # unterminated
            body = b"[" * depth
            total = depth
        expect = "any" if total <= 64 else "refuse"
        return Req("deep_nesting", self.hdrs(tok), body, expect)

    def batch(self, rng):
        c, tok, doc = self.good(rng)
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        pick = rng.randrange(6)
        if pick == 0:
            body, expect = compact([doc]), "refuse"
        elif pick == 1:
            body, expect = compact([listing, doc, note]), "refuse"
        elif pick == 2:
            body, expect = compact([listing, note]), "any"
        elif pick == 3:
            body, expect = compact([]), "any"
        elif pick == 4:
            body, expect = compact([listing] * 200 + [doc]), "refuse"
        else:
            body, expect = compact([[doc]]), "any"
        return Req("batch", self.hdrs(tok), body, expect)

    def mcp_headers(self, rng):
        c, tok, doc = self.good(rng)
        t = self.tool
        b64 = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
        variants = [
            ([("mcp-method", "tools/list")], "refuse"),
            ([("mcp-name", "other")], "refuse"),
            ([("mcp-name", t), ("mcp-name", t)], "refuse"),
            ([("mcp-method", "tools/call"), ("mcp-method", "tools/call")], "refuse"),
            ([("mcp-name", "=?base64?%s?=" % b64(t))], "accept"),
            ([("mcp-name", "=?base64?%s?" % b64(t))], "refuse"),
            ([("mcp-name", "=?base64?!!!?=")], "refuse"),
            ([("mcp-name", "=?base64?%s?=" % b64(t + "\0"))], "refuse"),
            ([("mcp-method", "tools/call"), ("mcp-name", t)], "accept"),
        ]
        extra, expect = rng.choice(variants)
        return Req("mcp_headers", self.hdrs(tok, extra), compact(doc), expect)

    def chunked(self, rng):
        c, tok, doc = self.good(rng)
        body = compact(doc)
        pick = rng.randrange(5)
        sizes = [rng.choice([1, 2, 7, 64, 1000]) for _ in range(40)]
        if pick == 0:
            return Req("chunked", self.hdrs(tok), body, "accept", framing="chunked-ext", chunks=sizes)
        if pick == 1:
            return Req("chunked", self.hdrs(tok), body, "refuse", framing="chunked-bad", chunks=sizes)
        if pick == 2:
            return Req("chunked", self.hdrs(tok), body[:rng.randrange(len(body))], "refuse", framing="chunked",
                       chunks=sizes)
        if pick == 3:  # both framings at once: request smuggling shape
            return Req("chunked", self.hdrs(tok, [("content-length", "5")]), body, "any", framing="chunked",
                       chunks=sizes)
        return Req("chunked", self.hdrs(tok), body, "accept", framing="chunked", chunks=[1] * 50)

    def huge_headers(self, rng):
        c, tok, doc = self.good(rng)
        pick = rng.randrange(6)
        if pick == 0:
            return Req("huge_headers", self.hdrs(tok, [("x-pad", "a" * 61440)]), compact(doc), "refuse")
        if pick == 1:
            return Req("huge_headers", self.hdrs(tok, [("x-pad-%d" % i, "v") for i in range(100)]), compact(doc),
                       "refuse")
        if pick == 2:
            return Req("huge_headers", self.hdrs(tok, [("x-pad-%d" % i, "v") for i in range(rng.randrange(60, 85))]),
                       compact(doc), "accept")
        if pick == 3:  # a token of 40 KB: under Envoy's header limit, over the token limit
            return Req("huge_headers", self.hdrs(tok + "A" * 40000), compact(doc), "refuse")
        if pick == 4:
            return Req("huge_headers", self.hdrs(tok, [("x-pad", "a" * 50000)]), compact(doc), "accept")
        return Req("huge_headers", self.hdrs(tok, [("x-pad", "\x01\x7f")]), compact(doc), "any")

    def credential(self, rng):
        c, tok, doc = self.good(rng)
        cred = self.keys.credential
        variants = [
            ([("authorization", cred)], "accept"),
            ([], "refuse"),
            ([("authorization", cred[:-1])], "refuse"),
            ([("authorization", cred + "x")], "refuse"),
            ([("authorization", cred), ("authorization", cred)], "refuse"),
            ([("authorization", cred.lower())], "refuse"),
            ([("authorization", "")], "refuse"),
        ]
        extra, expect = rng.choice(variants)
        return Req("credential", self.hdrs(tok, extra), compact(doc), expect, listener="cred")

    def not_post(self, rng):
        c, tok, doc = self.good(rng)
        method = rng.choice(["GET", "PUT", "DELETE", "PATCH", "OPTIONS"])
        body = self.flip(compact(doc), rng, 4) if rng.random() < 0.5 else compact(doc)
        return Req("not_post", self.hdrs(self.flip(tok.encode(), rng, 2)), body, "any", method=method)

    def oversize_body(self, rng):
        c, tok, doc = self.good(rng)
        doc["params"]["arguments"]["query"] = ""
        base = len(compact(doc))
        size = rng.choice([MIB + 1, MIB + 1, MIB + 4096, 2 * MIB + 10])
        doc["params"]["arguments"]["query"] = "z" * (size - base)
        body = compact(doc)
        listener = rng.choice(["main", "main", "cred"])
        extra = [("authorization", self.keys.credential)] if listener == "cred" else []
        framing = rng.choice(["length", "chunked"])
        chunks = [65536] * (len(body) // 65536 + 1) if framing == "chunked" else None
        return Req("oversize_body", self.hdrs(tok, extra), body, "refuse", listener=listener, framing=framing,
                   chunks=chunks)

    def disconnect(self, rng):
        c, tok, doc = self.good(rng)
        body = compact(doc)
        pick, rst = rng.randrange(4), rng.random() < 0.5
        if pick == 0:  # headers only, then gone
            return Req("disconnect", self.hdrs(tok), body, "none", cut=0, rst=rst)
        if pick == 1:
            return Req("disconnect", self.hdrs(tok), body, "none", cut=rng.randrange(1, len(body)), rst=rst)
        if pick == 2:
            return Req("disconnect", self.hdrs(tok), body, "none", framing="chunked", chunks=[16] * 100,
                       cut=rng.randrange(1, len(body)), rst=rst)
        return Req("disconnect", self.hdrs(tok), body, "none", framing="length-long", cut=len(body), rst=rst)

    def pipeline(self, rng):
        reqs = []
        for _ in range(rng.randrange(2, 9)):
            fn = rng.choice([self.valid, self.valid, self.token_wrong_key, self.body_meta, self.token_claims,
                             self.body_duplicate, self.batch, self.deep_nesting])
            r = fn(rng)
            r.cls = "pipeline"
            r.framing = "length" if r.framing != "chunked" else "chunked"
            reqs.append(r)
        return reqs

    def spoof(self, rng, reqs):
        """Copies of every header a front end may forward (SPOOFED_HEADERS),
        in any letter case, some twice, on some calls and passes, and Tuix
        `_meta` members whose values need the §7 encoding on some calls;
        from an RNG of its own, so that the classes stay as they were."""
        for r in reqs:
            if r.cls not in ("valid", "batch", "not_post", "pipeline") or rng.random() >= 0.4:
                continue
            doc = json.loads(r.body) if r.expect == "accept" else None  # a minted call: plain JSON
            if isinstance(doc, dict) and isinstance((doc.get("params") or {}).get("_meta"), dict):
                for member in TUIX_HEADERS:
                    if rng.random() < 0.8:
                        doc["params"]["_meta"][member] = rng.choice(FORWARD_VALUES)
                r.body = compact(doc)
            for name in SPOOFED_HEADERS:
                for _ in range(rng.choice([0, 1, 1, 2])):
                    spelled = "".join(ch.upper() if rng.random() < 0.5 else ch for ch in name)
                    r.headers.append((spelled, rng.choice(["spoofed", "spoofed%20value", "", "task-000"])))
            r.spoofed = True

    def slow(self, rng, i):
        """Drip-fed bodies: a few, started alongside the main run."""
        r = self.valid(rng) if i % 2 == 0 else self.body_meta(rng)
        r.cls, r.framing, r.chunks, r.drip = "slow_body", rng.choice(["length", "chunked"]), [20] * 200, 0.1
        return r


# ------------------------------------------------------------------ wire ----

class Feed:
    """Hands the generator's units to worker threads in order until `count`
    requests were taken or `deadline` (time.time()) passed: each request is
    numbered (`seq`), given to `on_request` (a target's expectations) and
    kept in `sent`, the list the checks read afterwards."""

    def __init__(self, gen, count, deadline, sent, on_request=None):
        self.gen, self.count, self.deadline, self.sent = gen, count, deadline, sent
        self.on_request = on_request
        self.lock = threading.Lock()
        self.next = self.requests = self.seq = 0

    def take(self):
        """The next unit's requests, or None when the run is over."""
        with self.lock:
            if self.requests >= self.count or time.time() > self.deadline:
                return None
            i = self.next
            self.next += 1
        _, reqs = self.gen.unit(i)
        with self.lock:
            for r in reqs:
                self._number(r, expect=True)
            self.requests += len(reqs)
        return reqs

    def add(self, r):
        """A request sent outside the units (a slow body): numbered and kept
        as it is."""
        with self.lock:
            self._number(r)

    def _number(self, r, expect=False):
        r.seq = self.seq
        self.seq += 1
        if expect and self.on_request is not None:
            self.on_request(r)
        self.sent.append(r)


class _Reader(io.BufferedReader):
    """One buffered reader for a connection's responses, which http.client
    must not close after each one (pipelining)."""

    def close(self):
        pass


class _Sock:
    def __init__(self, f):
        self.f = f

    def makefile(self, *_a, **_k):
        return self.f



def classify(req, status, headers, body, upstream=None, own=frozenset(), own_label="own"):
    """Sets req.outcome from its answer: "upstream" (`upstream(status, body)`
    says the request was handed on), "refused" (a well-formed JSON-RPC refusal
    whose reason, status and code are the contract's), own_label (a status in
    `own`: the front end's HTTP layer refused the framing itself) or "bad"."""
    req.status, req.reply = status, body
    ctype = dict(headers).get("content-type", "")
    if upstream is not None and upstream(status, body):
        req.outcome = "upstream"
        return
    if ctype.startswith("application/json"):
        try:
            doc = json.loads(body)
            err = doc["error"]
            data = err.get("data")
            # java-sdk's own errors carry a string in data: no reason there.
            req.rpc = (doc["id"], err["code"], err["message"], data.get("reason") if isinstance(data, dict) else None)
            ok = (isinstance(doc, dict) and doc.get("jsonrpc") == "2.0" and type(err["code"]) is int
                  and isinstance(err["message"], str) and (doc["id"] is None or type(doc["id"]) in (int, float, str))
                  and TABLE.get(req.rpc[3]) == (status, err["code"]))
        except (ValueError, KeyError, TypeError):
            ok = False
        req.outcome = "refused" if ok else "bad"
        return
    req.outcome = own_label if status in own else "bad"


def run_connection(port, reqs, classify, timeout=20):
    """Sends reqs on one connection (a pipeline when several) and reads the
    answers in order, each handed to `classify(req, status, headers, body)`.
    A request with `cut` is abandoned mid-body."""
    now = int(time.time())
    data_pieces = []
    for r in reqs:
        r.sent_at = now
        head, pieces = r.wire(port)
        data_pieces.append((r, head, pieces))
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        f = _Reader(socket.SocketIO(s, "rb"))
        early = False
        for r, head, pieces in data_pieces:
            if r.cut is not None:
                blob = head + b"".join(pieces)
                s.sendall(blob[:len(head) + r.cut])
                time.sleep(0.01)
                if r.rst:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
                r.outcome = "none"
                return
            try:
                s.sendall(head)
                for piece in pieces:
                    if r.drip:
                        for k in range(0, len(piece), 16):
                            s.sendall(piece[k:k + 16])
                            time.sleep(r.drip)
                    else:
                        # An answer before the body is complete (413, 431): stop sending.
                        if len(reqs) == 1 and select.select([s], [], [], 0)[0]:
                            early = True
                            break
                        s.sendall(piece)
            except OSError:
                early = True
            if early:
                break
        for r, _, _ in data_pieces:
            try:
                resp = http.client.HTTPResponse(_Sock(f), method=r.method)
                resp.begin()
                headers = [(k.lower(), v) for k, v in resp.getheaders()]
                if r.method == "GET" and (resp.getheader("content-type") or "").startswith("text/event-stream"):
                    # An MCP server's standalone event stream: open (with
                    # pings) until the client leaves; its head is the answer.
                    classify(r, resp.status, headers, b"")
                    break
                body = resp.read()
                classify(r, resp.status, headers, body)
                if resp.will_close:
                    break
            except (OSError, http.client.HTTPException):
                break
        for r in reqs:
            if r.outcome is None:
                r.outcome = "none"



# ----------------------------------------------------------------- judge ----

def core_judgement(cases, keys, workdir, description="hostile requests, with the verdict the front end reached"):
    """Runs the cases through the core's reference runner; returns (ok, output)."""
    path = os.path.join(workdir, "hostile-vectors.json")
    doc = {"description": description,
           "now": int(time.time()),
           "config": {"instance_id": INSTANCE, "secrets": [keys.secret]},
           "cases": cases}
    with open(path, "w") as f:
        json.dump(doc, f)
    p = subprocess.run(["cargo", "run", "-q", "-p", "toolctx-core", "--example", "vectors", "--", path],
                       cwd=ROOT, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def vector_case(req, headers, body, expect, keys):
    case = {"name": "%s #%d" % (req.cls, req.seq), "now": req.sent_at,
            "request": {"method": req.method, "headers": headers,
                        "body_b64": base64.b64encode(body).decode()},
            "expect": expect}
    if req.listener == "cred":
        case["config"] = {"credential": {"header": "authorization", "values": [keys.credential]}}
    return case




# -------------------------------------------------------------- gateways ----
# What the drivers of the two gateways (tests/envoy/hostile.py,
# tests/ext-authz/hostile.py) share: both run on gateway-config.

CONTEXT_HEADER = "x-toolctx-context"
# What Envoy may answer by itself, before a gateway, for broken HTTP.
GATEWAY_OWN = frozenset({400, 413, 431})
# What both gateways forward under hostile traffic (gateway-config's
# `headers` and `tuix`), in the vector format's words.
FORWARD = {"headers": {"context": CONTEXT_HEADER, "task_id": "x-toolctx-task-id"}, "tuix": True}


def gateway_settings(forward=FORWARD):
    """The forward configuration as a gateway's settings write it (the
    Tuix pair as `meta_headers`)."""
    out = {"headers": dict(forward["headers"])}
    if forward.get("tuix"):
        out["meta_headers"] = dict(TUIX_HEADERS)
    return out


def envoy_view(headers):
    """The headers as Envoy's HTTP/1 codec hands them to a gateway: every
    bare CR inside a value dropped (measured on Envoy 1.40: `a\\rbc`,
    `\\rabc` and `abc\\r` all reach the upstream as `abc`), then OWS
    trimmed. A bit flip can turn a token's `M` into a CR; the judge must
    see what the gateway saw. Returns (headers, whether changed)."""
    out, changed = [], False
    for n, v in headers:
        w = v.replace("\r", "").strip(" \t")
        changed |= w != v
        out.append([n, w])
    return out, changed


def gateway_context(hdr, _method, _body):
    """The context a gateway forwarded in CONTEXT_HEADER, or None (a pass)."""
    ctx = hdr.get(CONTEXT_HEADER)
    return None if ctx is None else json.loads(urllib.parse.unquote(ctx))


def upstream_entries(recorder, context=gateway_context):
    """What a recording upstream (tests/envoy/harness.py's Recorder) saw, as
    Target.handed answers; `context(headers by lower-case name, method,
    body)` says what the front end verified."""
    with recorder.lock:
        seen = list(recorder.requests)
    handed, unmarked = {}, 0
    for u in seen:
        hdr = dict((k.lower(), v) for k, v in u["headers"])
        if SEQ_HEADER not in hdr:
            unmarked += 1
            continue
        try:
            headers = [[k, v.encode("latin-1").decode("utf-8")] for k, v in u["headers"]]
        except UnicodeError:
            headers = u["headers"]
        handed.setdefault(int(hdr[SEQ_HEADER]), []).append(
            {"method": u["method"], "headers": headers, "body": u["body"],
             "context": context(hdr, u["method"], u["body"])})
    return handed, unmarked


# ---------------------------------------------------------------- driver ----

ACCEPTED = "accepted"  # an entry's context when a front end shows that it accepted, not what


class Target:
    """One front end under hostile traffic, as its driver starts it
    (tests/envoy/hostile.py, tests/ext-authz/hostile.py, tests/hostile/npm.py,
    tests/hostile/python.py); `drive` runs the rest, the same for every one.

    name: the label in checks and the summary; own: the statuses its HTTP
    layer answers by itself, before toolctx; ports: listener -> port ("main",
    and "cred" with the static credential); forward: the forward
    configuration it runs with, as the vector format writes it
    (`config.forward`); resend: a pipeline it closes after a local reply is
    sent again from there on a new connection (Envoy does close it)."""

    name = "?"
    own = frozenset()
    forward = {}
    resend = False
    ports = {}

    def warm_up(self, gen):
        """Requests sent before the run (each cls "warm-up", seq < 0),
        judged with the rest but not counted."""
        return []

    def expect(self, req):
        """Adjusts the generator's expectations (written for Envoy) where
        this front end differs."""

    def upstream(self, status, body):
        """Whether an answer shows that the request reached the upstream."""
        return False

    def handed(self):
        """What the front end handed on: (seq -> [entry], entries without a
        sequence number). An entry has "method", "headers" ([name, value] as
        the upstream or the app saw them), optionally "body", and "context":
        the verified context, None for a pass, ACCEPTED when the front end
        does not show it."""
        raise NotImplementedError

    def runs(self):
        """seq -> tool runs, or None when the front end has no tool."""
        return None

    def view(self, headers):
        """The request's headers as the front end's API shows them to the
        core (the judge is given the same): (headers, whether changed)."""
        return headers, False

    def checks(self, sent):
        """The front end's own checks after the run (still running), given
        every request sent."""

    def alive(self):
        return True

    def stop(self):
        """Stops it; returns {process: exit code} (None for a code not judged)."""
        return {}

    def errors(self):
        """Lines of its logs that show a crash or an unhandled error."""
        return []

    def summary(self, sent):
        """Extra lines for the summary."""
        return []


def forward_names(forward):
    """Every header a forward configuration writes (lower case)."""
    names = [h.lower() for h in (forward.get("headers") or {}).values()]
    names += [h.lower() for h in (forward.get("meta") or {}).values()]
    if forward.get("tuix"):
        names += list(TUIX_HEADERS.values())
    return sorted(set(names))


def established(ports):
    """Open TCP connections to these local ports (/proc/net/tcp, state 01)."""
    n = 0
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "01" and int(parts[1].rsplit(":", 1)[1], 16) in ports:
                        n += 1
        except OSError:
            pass
    return n


def app_answered_itself(req):
    """Why an accepted call did not run the tool, or None: the MCP SDK, not
    toolctx, answered it itself: with its own JSON-RPC error (no
    data.reason: a body the core accepts but the SDK's schema does not, such
    as an id that is not a string or a safe integer, a bit-flipped "jsonrpc"
    member), with an error result for a tool the server does not have, or
    with 202 and no body, taking it for a notification."""
    if req.status == 202 and not req.reply:
        return "taken for a notification, 202"
    reply = req.reply or b""
    if req.status == 415 and reply.startswith(b"fail to deserialize request body"):
        # rmcp's own answer to a body its JSON-RPC types do not read (a
        # bit-flipped "jsonrpc" member, say), in plain text.
        return "415 rmcp: not a JSON-RPC message it reads"
    if req.status == 400 and reply.startswith((b"malformed payload:", b"invalid request:")):
        # go-sdk's own answer, in plain text, to a body its JSON-RPC types do
        # not read (an id that is an array or a bool, a call without an id).
        return "400 go-sdk: not a JSON-RPC message it reads"
    if req.status == 400 and reply.startswith(b'{"cause":') and b'"io.modelcontextprotocol.' in reply:
        # java-sdk's stateless servlet transport answers a message its
        # JSON-RPC types do not read with its McpError serialized by Jackson.
        return "400 java-sdk: its McpError, serialized"
    if reply.startswith(b"event:") or reply.startswith(b"data:"):
        # SSE: the last event with data (rmcp sends an empty priming event first).
        events = [b"".join(l[5:].strip() for l in e.split(b"\n") if l.startswith(b"data:"))
                  for e in reply.split(b"\n\n")]
        reply = next((e for e in reversed(events) if e), b"")
    try:
        answer = json.loads(reply)
        err = answer.get("error")
        result = answer.get("result")
    except (ValueError, AttributeError):
        return None
    if isinstance(result, dict) and result.get("isError") is True:
        text = " ".join(c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict))
        return "an error result: Unknown tool" if text.startswith("Unknown tool") else None
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        return None
    # A toolctx refusal carries data.reason; java-sdk's own errors carry a
    # string in data (its exception's text).
    if isinstance(err.get("data"), dict) and err["data"].get("reason"):
        return None
    message = err["message"]
    if message.startswith("Tool ") and message.endswith(" not found"):
        message = "Tool ... not found"
    return "%s %s" % (err.get("code"), message[:80])


def arguments(description, max_seconds):
    import argparse
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--count", type=int, default=10000, help="requests to send (at least)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4, help="client threads")
    ap.add_argument("--slow", type=int, default=4, help="drip-fed bodies, alongside the rest")
    ap.add_argument("--max-seconds", type=float, default=max_seconds, help="stop sending after this long")
    ap.add_argument("--no-forward", action="store_true",
                    help="judge the verdicts only, not the forwarded headers (a front end that does not yet "
                         "forward as the core says)")
    return ap


def _send(target, feed, gen, seed, workers, slow):
    """The run: `workers` threads take the feed's units, `slow` threads send
    one drip-fed body each."""
    def classify_(req, status, headers, body):
        classify(req, status, headers, body, upstream=target.upstream, own=target.own, own_label="own")
        adjust = getattr(target, "adjust", None)
        if adjust is not None:
            adjust(req, status, body)

    def worker():
        while True:
            reqs = feed.take()
            if reqs is None:
                return
            pending = reqs
            while pending:
                try:
                    run_connection(target.ports[pending[0].listener], pending, classify_)
                except OSError:
                    pass
                for r in pending:
                    r.outcome = r.outcome or "none"
                # Envoy closes a pipelined connection after any local reply
                # (its own 404 too) and drops what follows: a client sends
                # the rest again on a new connection.
                rest = [r for r in pending if r.outcome == "none" and r.cut is None]
                if not target.resend or len(reqs) == 1 or len(rest) == len(pending):
                    break
                for r in rest:
                    r.outcome = None
                    r.resent += 1
                pending = rest

    def slow_worker(k):
        r = gen.slow(random.Random("slow:%d:%d" % (seed, k)), k)
        feed.add(r)
        run_connection(target.ports["main"], [r], classify_, timeout=60)
        r.outcome = r.outcome or "none"

    threads = [threading.Thread(target=slow_worker, args=(k,)) for k in range(slow)]
    threads += [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def forward_self_test(keys, work):
    """Whether the core's runner checks `expect.forward`: a case expecting
    a forwarded header the core does not write must fail."""
    c = fresh_claims(random.Random("forward-self-test"), int(time.time()))
    r = Req("self-test", [("x-agentarea-context", mint(c, keys.secret))],
            compact(call_doc(c, random.Random(1))), "accept")
    r.seq, r.sent_at = 0, int(time.time())
    case = vector_case(r, r.head_values(), r.body, {"outcome": "accept", "forward": {"x-session-id": "never"}}, keys)
    case["config"] = {"forward": {"tuix": True}}
    ok, out = core_judgement([case], keys, work, "a case the runner must fail: a wrong expect.forward")
    return not ok and "0 passed, 1 failed" in out


def drive(target, gen, keys, args, work, label):
    """Sends the traffic to `target` and runs every check; returns the exit code."""
    sent = list(target.warm_up(gen))
    started = time.time()
    feed = Feed(gen, args.count, started + args.max_seconds, sent, on_request=target.expect)
    _send(target, feed, gen, args.seed, args.workers, args.slow)
    elapsed = time.time() - started
    name = target.name

    # ------------------------------------------------------------ the checks
    ports = set(target.ports.values())
    left = -1
    for _ in range(50):  # bounded: closed connections go promptly
        left = established(ports)
        if left == 0:
            break
        time.sleep(0.1)
    check("no connection left open to %s (%d)" % (label, left), left == 0, left)
    alive = target.alive()
    check("%s stays up" % label, alive)
    target.checks(sent)

    handed, unmarked = target.handed()
    reqs = [r for r in sent if r.cls != "warm-up"]
    by_seq = {r.seq: r for r in sent}
    for r in sent:
        if r.seq in handed:
            r.outcome = "contradiction" if r.outcome == "refused" else "upstream"
    check("sent at least %d requests" % args.count, len(reqs) >= args.count, len(reqs))
    bad = [r for r in reqs if r.outcome in ("bad", "contradiction")]
    check("every answer that is not the upstream's is a well-formed JSON-RPC refusal with a reason, status and "
          "code from the contract, or the HTTP layer's own %s; none both refused and handed on" % sorted(target.own),
          not bad, [(r.cls, r.seq, r.outcome, r.status, (r.reply or b"")[:200]) for r in bad[:5]])
    orphans = [s for s in handed if s not in by_seq]
    dup = [s for s, es in handed.items() if len(es) > 1]
    changed = [(by_seq[s].cls, s) for s, es in handed.items() if s in by_seq and any(
        e["method"] != by_seq[s].method or e.get("body", by_seq[s].body) != by_seq[s].body for e in es)]
    check("handed on only requests that were sent, each once, method and body unchanged (%d)" % len(handed),
          not orphans and not dup and not changed and unmarked == 0, (orphans[:5], dup[:5], changed[:5], unmarked))
    accepted = {s for s, es in handed.items() if es[0]["context"] is not None}
    valid = [r for r in reqs if r.expect == "accept"]
    lost = [r for r in valid if r.seq not in accepted and not (r.outcome == "none" and r.cls == "pipeline")]
    check("every minted valid call was accepted and handed on (%d)" % len(valid), not lost,
          [(r.cls, r.seq, r.outcome, r.status, (r.reply or b"")[:200]) for r in lost[:5]])
    leaked = [r for r in reqs if r.expect in ("refuse", "none", "own") and r.seq in handed]
    check("no request meant to be refused, abandoned or refused by the HTTP layer was handed on",
          not leaked, [(r.cls, r.seq, r.expect) for r in leaked[:5]])
    own_expected = [r for r in reqs if r.expect == "own" and r.outcome not in ("own", "none")]
    check("every request the HTTP layer must refuse itself was (%d)" % sum(r.expect == "own" for r in reqs),
          not own_expected, [(r.cls, r.seq, r.outcome, r.status) for r in own_expected[:5]])

    runs, excused, why = target.runs(), [], {}
    if runs is not None:
        stray = [s for s in runs if s not in accepted]
        twice = [s for s, n in runs.items() if n > 1]
        not_run = sorted(s for s in accepted if runs[s] == 0 and s in by_seq)
        why = {s: app_answered_itself(by_seq[s]) for s in not_run}
        excused = [s for s in not_run if why[s]]
        unexplained = [s for s in not_run if s not in excused]
        tool_runs = sum(runs.values())
        check("tool runs %d = accepted %d - %d the MCP SDK answers itself with its own JSON-RPC error or as a "
              "notification; none outside an accepted call, none twice" % (tool_runs, len(accepted), len(excused)),
              not stray and not twice and not unexplained and tool_runs == len(accepted) - len(excused),
              (stray[:5], twice[:5], [(by_seq[s].cls, s, by_seq[s].status, (by_seq[s].reply or b"")[:200])
                                      for s in unexplained[:5]]))

    # Independent verdict: the core's reference runner on the same bytes,
    # with what the upstream saw of every header the front end forwards.
    names = [] if args.no_forward else forward_names(target.forward)
    cases, unjudged, viewed, twice_forwarded = [], 0, 0, []
    refusals = [r for r in reqs if r.outcome == "refused"]
    for r in sent:
        if r.seq not in handed and r.outcome != "refused":
            continue
        headers = r.head_values()
        if headers is None:
            unjudged += 1
            continue
        headers, changed_view = target.view(headers)
        viewed += changed_view
        if r.outcome == "refused":
            rid, code, _, reason = r.rpc
            expect = {"outcome": "reject", "status": r.status, "code": code, "reason": reason, "id": rid}
        else:
            entry = handed[r.seq][0]
            ctx = entry["context"]
            expect = {"outcome": "pass"} if ctx is None else {"outcome": "accept"}
            if ctx not in (None, ACCEPTED):
                expect["context"] = ctx
            seen = collections.defaultdict(list)
            for n, v in entry["headers"]:
                if n.lower() in names:
                    seen[n.lower()].append(v)
            if any(len(v) > 1 for v in seen.values()):
                twice_forwarded.append((r.cls, r.seq, dict(seen)))
            if names:
                expect["forward"] = {n: (seen[n][0] if seen[n] else None) for n in names}
        case = vector_case(r, headers, r.body, expect, keys)
        if names:
            case.setdefault("config", {})["forward"] = target.forward
        cases.append(case)
    if names:
        check("every forwarded header reached the upstream at most once (%s)" % ", ".join(names),
              not twice_forwarded, twice_forwarded[:5])
        check("the core's runner checks expect.forward (a wrong forward expectation fails)",
              forward_self_test(keys, work))
    ok, out = core_judgement(cases, keys, work, "requests from the hostile traffic, with the verdict %s reached, "
                             "and what it forwarded" % label)
    tail = out.splitlines()[-1] if out else ""
    check("core reference runner reaches the same verdict for every request handed on and every refusal%s "
          "(%d cases; %s)" % (", and the headers %s forwards" % label if names else "", len(cases), tail),
          ok and tail.startswith("%d passed, 0 failed" % len(cases)), "\n".join(out.splitlines()[:10]))

    codes = target.stop()
    noisy = target.errors()
    check("%s exits cleanly %s; no crash or unhandled error in its logs" % (label, codes),
          alive and all(c in (0, None) for c in codes.values()) and not noisy, (codes, noisy[:5]))

    # ------------------------------------------------------------ the summary
    print("\nhostile traffic through %s: %d requests in %.1f s (%d workers, %d drip-fed), seed %d"
          % (label, len(reqs), elapsed, args.workers, args.slow, args.seed))
    per = collections.defaultdict(collections.Counter)
    for r in reqs:
        per[r.cls][r.outcome] += 1
    print("%-18s %6s %9s %8s %9s %9s" % ("class", "sent", "handed-on", "refused", name + "-own", "no-answer"))
    for cls in sorted(per):
        c = per[cls]
        print("%-18s %6d %9d %8d %9d %9d" % (cls, sum(c.values()), c["upstream"], c["refused"], c["own"], c["none"]))
    if target.resend:
        print("pipelined requests sent again on a new connection after a pipeline closed following a local "
              "reply: %d" % sum(r.resent for r in reqs))
    reasons = collections.Counter(r.rpc[3] for r in refusals)
    print("refused by toolctx, per reason (%d): %s" % (len(refusals), ", ".join(
        "%s %d" % kv for kv in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))))
    own = collections.Counter("%s %d" % (r.cls, r.status) for r in reqs if r.outcome == "own")
    print("refused by the HTTP layer itself (%s), per class and status: %s"
          % (name, ", ".join("%s × %d" % kv for kv in sorted(own.items())) or "none"))
    n_handed = sum(1 for s in handed if s in by_seq and by_seq[s].cls != "warm-up")
    n_accepted = sum(1 for s in accepted if s in by_seq and by_seq[s].cls != "warm-up")
    print("handed on: %d (accepted %d, passed %d)%s" % (
        n_handed, n_accepted, n_handed - n_accepted,
        "; tool runs %d, accepted but answered by the MCP SDK itself %d" % (sum(runs.values()), len(excused))
        if runs is not None else ""))
    if excused:
        print("  answered by the MCP SDK itself: %s" % ", ".join(
            "%s %d" % kv for kv in sorted(collections.Counter(why[s] for s in excused).items())))
    print("judged by the core runner: %d cases%s; not judged (header bytes not UTF-8): %d"
          % (len(cases), " (forwarded headers: %s)" % ", ".join(names) if names else "", unjudged))
    spoofed = [r for r in reqs if r.spoofed]
    print("sent with spoofed copies of forwarded headers: %d (handed on %d)"
          % (len(spoofed), sum(1 for r in spoofed if r.seq in handed)))
    if viewed:
        print("judged as %s's API shows the headers: %d" % (name, viewed))
    for line in target.summary(sent):
        print(line)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


def main(make_target, doc, max_seconds=300, targets=None):
    """A driver's command line: [--target NAME] --count --seed --workers
    --slow --max-seconds; `make_target(name or None, keys, work)` starts the
    front end and returns (Target, label, tool name)."""
    import shutil
    import tempfile
    ap = arguments(doc.split("\n\n")[0], max_seconds)
    if targets:
        ap.add_argument("--target", choices=targets, required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="toolctx-hostile-")
    keys = Keys(args.seed)
    target = None
    try:
        target, label, tool = make_target(getattr(args, "target", None), keys, work)
        return drive(target, Gen(keys, args.seed, tool=tool), keys, args, work, label)
    finally:
        if target is not None:
            try:
                target.stop()
            except Exception:  # noqa: BLE001 - already stopped
                pass
        if not os.environ.get("TOOLCTX_HOSTILE_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
