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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SEQ_HEADER = "x-hostile-seq"
MIB = 1024 * 1024
CONTEXT_CLAIMS = ("protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key",
                  "agent_id", "end_user_id", "metadata")

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
            req.rpc = (doc["id"], err["code"], err["message"], (err.get("data") or {}).get("reason"))
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
                body = resp.read()
                classify(r, resp.status, [(k.lower(), v) for k, v in resp.getheaders()], body)
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


