#!/usr/bin/env python3
"""Hostile traffic through a real Envoy with the release toolctx filter.

    ENVOY=... tests/envoy/hostile.py [--count 10000] [--seed 1] [--workers 4]

A seeded generator sends malformed and adversarial requests (mutated tokens
and bodies, odd framing, huge headers, slow and abandoned bodies, pipelines)
with a few hundred valid calls mixed in, minted here with Python's hmac,
independently of toolctx's code. Each request is built from its own RNG
(seed, index), so the classes and mutations are the same on every run
whatever the thread interleaving; tokens are minted when the request is sent
(fresh however long the run), so their bytes, and where a bit flip lands in
them, follow the clock.

Checks: Envoy stays up (same process, /ready LIVE) and its wasm VM is never
recreated or reloaded, with no panic or error in its log; every refusal the
filter returns is well-formed JSON-RPC with a reason, status and code from
the contract's table; everything else Envoy refuses itself is counted apart;
every minted valid call reaches the upstream unchanged, and every request
the upstream saw is judged independently by the core's reference runner
(crates/vectors, run as the core's example), which must reach the filter's verdict:
accept (same context) or pass. The filter's refusals go through the same
runner and must get the same status, code, reason and id.

Only 127.0.0.1; bounded in count and time (--max-seconds); Envoy and the
upstream are always stopped (tests/envoy/harness.py). Prints a summary and
closes with `N passed, N failed`.
"""

import argparse
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
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
CONTEXT_HEADER = "x-toolctx-context"
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
# What Envoy may answer by itself, before the filter, for broken HTTP.
ENVOY_OWN = {400, 413, 431}

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


def fresh_claims(rng, now, **over):
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
        c["tool"] = "search"
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

    def __init__(self, keys, seed):
        self.keys, self.seed = keys, seed
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
        c = fresh_claims(rng, self.now(), **over)
        return c, mint(c, self.keys.secret), call_doc(c, rng)

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
        c = fresh_claims(rng, self.now())
        secret = rng.choice([self.keys.wrong, self.keys.secret[:-1], self.keys.secret + "x", "", self.keys.secret.upper()])
        return Req("token_wrong_key", self.hdrs(mint(c, secret)), compact(call_doc(c, rng)), "refuse")

    def token_jose_header(self, rng):
        c = fresh_claims(rng, self.now())
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
        return Req("token_jose_header", self.hdrs(tok), compact(call_doc(c, rng)), expect)

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
            doc = call_doc(c, rng)
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
        c = fresh_claims(rng, now, **variants[pick])
        expect = "accept" if pick < fine else "refuse"
        if rng.random() < 0.1:  # oversized token: padding claim past 8 KiB
            c["metadata"] = {"pad": "p" * rng.randrange(8200, 12000)}
            expect = "refuse"
        doc = call_doc(c, rng)
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
        variants = [
            ([("mcp-method", "tools/list")], "refuse"),
            ([("mcp-name", "other")], "refuse"),
            ([("mcp-name", "search"), ("mcp-name", "search")], "refuse"),
            ([("mcp-method", "tools/call"), ("mcp-method", "tools/call")], "refuse"),
            ([("mcp-name", "=?base64?c2VhcmNo?=")], "accept"),
            ([("mcp-name", "=?base64?c2VhcmNo?")], "refuse"),
            ([("mcp-name", "=?base64?!!!?=")], "refuse"),
            ([("mcp-name", "=?base64?c2VhcmNoAA==?=")], "refuse"),
            ([("mcp-method", "tools/call"), ("mcp-name", "search")], "accept"),
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


def classify(req, status, headers, body):
    req.status, req.reply = status, body
    ctype = dict(headers).get("content-type", "")
    if status == 200 and body == harness.Recorder.MARKER:
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
    req.outcome = "envoy" if status in ENVOY_OWN else "bad"


def run_connection(port, reqs, timeout=20):
    """Sends reqs on one connection (a pipeline when several) and reads the
    answers in order. A request with `cut` is abandoned mid-body."""
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


# ------------------------------------------------------------------ main ----

def envoy_config(admin, ports, upstream_port, wasm, keys):
    main_plugin = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "headers": {"context": CONTEXT_HEADER}}
    cred_plugin = dict(main_plugin, credential={"header": "authorization", "values_env": ["TOOLCTX_CREDENTIAL"]})
    env_keys = ["TOOLCTX_SECRET", "TOOLCTX_CREDENTIAL"]
    listeners = [
        # max_body_bytes 1 MiB under a 2 MiB buffer: the filter answers 413 itself.
        harness.listener("main", ports["main"], [harness.wasm_filter(wasm, main_plugin, env_keys)]),
        # Envoy's default 1 MiB buffer, equal to max_body_bytes: Envoy may answer 413 first.
        harness.listener("cred", ports["cred"], [harness.wasm_filter(wasm, cred_plugin, env_keys)], buffer_limit=MIB),
    ]
    return harness.bootstrap(admin, listeners, upstream_port), {"TOOLCTX_SECRET": keys.secret,
                                                                "TOOLCTX_CREDENTIAL": keys.credential}


def wasm_stats(envoy):
    out = {}
    for line in envoy.get("/stats?filter=%5Ewasm%5C.").splitlines():
        name, _, value = line.partition(": ")
        if value.strip().isdigit():
            out[name.strip()] = int(value)
    return out


def core_judgement(cases, keys, workdir):
    """Runs the cases through the core's reference runner; returns (ok, output)."""
    path = os.path.join(workdir, "hostile-vectors.json")
    doc = {"description": "requests from tests/envoy/hostile.py, with the verdict Envoy reached",
           "now": int(time.time()),
           "config": {"instance_id": INSTANCE, "secrets": [keys.secret]},
           "cases": cases}
    with open(path, "w") as f:
        json.dump(doc, f)
    p = subprocess.run(["cargo", "run", "-q", "-p", "toolctx-core", "--example", "vectors", "--", path],
                       cwd=harness.ROOT, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def vector_case(req, headers, body, expect, keys):
    case = {"name": "%s #%d" % (req.cls, req.seq), "now": req.sent_at,
            "request": {"method": req.method, "headers": headers,
                        "body_b64": base64.b64encode(body).decode()},
            "expect": expect}
    if req.listener == "cred":
        case["config"] = {"credential": {"header": "authorization", "values": [keys.credential]}}
    return case


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000, help="requests to send (at least)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4, help="client threads")
    ap.add_argument("--slow", type=int, default=4, help="drip-fed bodies, alongside the rest")
    ap.add_argument("--max-seconds", type=float, default=600, help="stop sending after this long")
    args = ap.parse_args()

    wasm_src = os.environ.get("TOOLCTX_ENVOY_WASM") or os.path.join(harness.ROOT, "target", "envoy", "toolctx_envoy.wasm")
    work = tempfile.mkdtemp(prefix="toolctx-hostile-")
    wasm = os.path.join(work, "toolctx_envoy.wasm")
    shutil.copy(wasm_src, wasm)  # a rebuild during the run must not change what Envoy loads
    keys = Keys(args.seed)
    gen = Gen(keys, args.seed)

    admin, p_main, p_cred = harness.free_ports(3)
    ports = {"main": p_main, "cred": p_cred}
    upstream = harness.Recorder()
    config, env = envoy_config(admin, ports, upstream.port, wasm, keys)
    envoy = harness.Envoy(config, env=env, concurrency=2)
    envoy.start(admin)
    pid = envoy.proc.pid
    sent = []
    lock = threading.Lock()
    started = time.time()
    try:
        # Warm both listeners, then record the wasm VM figures the run must keep.
        for name in ("main", "cred"):
            r = gen.valid(random.Random("warm:%s" % name))
            r.seq, r.listener = -1 - len(sent), name
            if name == "cred":
                r.headers.append(("authorization", keys.credential))
            r.cls = "warm-up"
            run_connection(ports[name], [r])
            sent.append(r)
        stats0 = wasm_stats(envoy)
        print("envoy pid %d, wasm: %s" % (pid, {k: v for k, v in stats0.items() if "remote" not in k}), flush=True)

        counter = {"next": 0, "requests": 0, "seq": 0}
        deadline = started + args.max_seconds

        def take():
            with lock:
                if counter["requests"] >= args.count or time.time() > deadline:
                    return None
                i = counter["next"]
                counter["next"] += 1
            name, reqs = gen.unit(i)
            with lock:
                for r in reqs:
                    r.seq = counter["seq"]
                    counter["seq"] += 1
                counter["requests"] += len(reqs)
                sent.extend(reqs)
            return reqs

        def worker():
            while True:
                reqs = take()
                if reqs is None:
                    return
                pending = reqs
                while pending:
                    try:
                        run_connection(ports[pending[0].listener], pending)
                    except OSError:
                        for r in pending:
                            r.outcome = r.outcome or "none"
                    # Envoy closes a pipelined connection after any local
                    # reply (its own 404 too) and drops what follows: a
                    # client sends the rest again on a new connection.
                    rest = [r for r in pending if r.outcome == "none" and r.cut is None]
                    if len(reqs) == 1 or len(rest) == len(pending):
                        break
                    for r in rest:
                        r.outcome = None
                        r.resent += 1
                    pending = rest

        def slow_worker(k):
            r = gen.slow(random.Random("slow:%d:%d" % (args.seed, k)), k)
            with lock:
                r.seq = counter["seq"]
                counter["seq"] += 1
                sent.append(r)
            run_connection(ports["main"], [r], timeout=60)

        threads = [threading.Thread(target=slow_worker, args=(k,)) for k in range(args.slow)]
        threads += [threading.Thread(target=worker) for _ in range(args.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.time() - started
        time.sleep(0.3)  # the last log lines

        # ------------------------------------------------------ the checks
        alive = envoy.proc.poll() is None
        ready = envoy.get("/ready").strip() if alive else "dead"
        check("Envoy stays up: same process (pid %d), /ready LIVE" % pid,
              alive and envoy.proc.pid == pid and ready == "LIVE", (alive, ready))
        stats1 = wasm_stats(envoy)
        moved = {k: (stats0.get(k), v) for k, v in stats1.items() if stats0.get(k) != v}
        reloads = {k: v for k, v in stats1.items() if "vm_reload" in k and v}
        check("wasm VMs never recreated or reloaded (wasm.* stats unchanged)",
              not moved and not reloads and stats1.get("wasm.envoy.wasm.runtime.v8.active", 0) > 0, (moved, reloads))
        log = open(envoy.log_path, errors="replace").read()
        bad_lines = [l for l in log.splitlines()
                     if "panic" in l.lower() or "[critical]" in l or ("[error]" in l and "wasm" in l.lower())]
        check("Envoy log: no panic, no critical line, no wasm error", not bad_lines, bad_lines[:5])
        gauges = {}
        for _ in range(50):  # bounded: abandoned streams are cleaned up promptly
            gauges = dict(l.split(": ", 1) for l in envoy.get(
                "/stats?filter=%5Ehttp%5C.(main%7Ccred)%5C.downstream_(rq%7Ccx)_active$").splitlines())
            if len(gauges) == 4 and set(gauges.values()) == {"0"}:
                break
            time.sleep(0.1)
        check("no stream or connection left open in Envoy (downstream_rq_active, downstream_cx_active 0)",
              len(gauges) == 4 and set(gauges.values()) == {"0"}, gauges)
        counters = envoy.counters()
        check("filter counted no internal error (toolctx.errors 0)", counters.get("wasmcustom.toolctx.errors", 0) == 0,
              counters.get("wasmcustom.toolctx.errors"))

        reqs = [r for r in sent if r.cls != "warm-up"]
        n_requests = len(reqs)
        check("sent at least %d requests" % args.count, n_requests >= args.count, n_requests)
        bad = [r for r in reqs if r.outcome == "bad"]
        check("every JSON answer is a well-formed JSON-RPC refusal with a reason, status and code from the "
              "contract, and every other refusal is Envoy's own 400/413/431",
              not bad, [(r.cls, r.seq, r.status, r.reply[:200]) for r in bad[:5]])

        valid = [r for r in reqs if r.expect == "accept"]
        lost = [r for r in valid if r.outcome == "none" and r.cls != "pipeline"]
        wrong = [r for r in valid if r.outcome not in ("upstream", "none")]
        check("every valid call was accepted and reached the upstream (%d)" % len(valid),
              not wrong and not lost, [(r.cls, r.seq, r.status, (r.reply or b"")[:200]) for r in (wrong + lost)[:5]])
        leaked = [r for r in reqs if r.expect in ("refuse", "none") and r.outcome == "upstream"]
        check("no request meant to be refused or abandoned reached the upstream",
              not leaked, [(r.cls, r.seq) for r in leaked[:5]])

        with upstream.lock:
            seen = list(upstream.requests)
        by_seq = {r.seq: r for r in sent}
        orphan, mismatch, dup = [], [], collections.Counter()
        accepted_up = 0
        for u in seen:
            hdr = dict((k.lower(), v) for k, v in u["headers"])
            r = by_seq.get(int(hdr.get(SEQ_HEADER, "-999999")))
            if r is None:
                orphan.append(u)
                continue
            dup[r.seq] += 1
            if u["body"] != r.body or r.outcome != "upstream" or u["method"] != r.method:
                mismatch.append((r.cls, r.seq, r.outcome, len(u["body"]), len(r.body)))
            accepted_up += CONTEXT_HEADER in hdr
        answered_up = [r for r in sent if r.outcome == "upstream"]
        check("the upstream saw only requests answered by it, each once, bodies unchanged (%d)" % len(seen),
              not orphan and not mismatch and max(dup.values() or [1]) == 1 and len(seen) == len(answered_up),
              (len(orphan), mismatch[:5], [s for s, n in dup.items() if n > 1][:5], len(seen), len(answered_up)))
        minted_up = sum(1 for r in answered_up if r.expect == "accept")
        refusals = [r for r in sent if r.outcome == "refused"]
        refused_counted = sum(v for k, v in counters.items() if ".refused." in k)
        check("filter counters agree: accepted %d = upstream requests with a verified context; refused %d >= "
              "refusals answered %d" % (counters.get("wasmcustom.toolctx.accepted", 0), refused_counted,
                                        len(refusals)),
              counters.get("wasmcustom.toolctx.accepted", 0) == accepted_up and refused_counted >= len(refusals),
              (accepted_up, len(refusals)))

        # Independent verdict: the core's reference runner on the same bytes.
        cases, unjudged = [], 0
        for u in seen:
            hdr = dict((k.lower(), v) for k, v in u["headers"])
            r = by_seq.get(int(hdr.get(SEQ_HEADER, "-1")))
            try:
                headers = [[k, v.encode("latin-1").decode("utf-8")] for k, v in u["headers"]]
            except UnicodeError:
                unjudged += 1
                continue
            ctx = hdr.get(CONTEXT_HEADER)
            expect = {"outcome": "pass"} if ctx is None else \
                {"outcome": "accept", "context": json.loads(urllib.parse.unquote(ctx))}
            cases.append(vector_case(r, headers, u["body"], expect, keys))
        for r in refusals:
            headers = r.head_values()
            if headers is None:
                unjudged += 1
                continue
            rid, code, _, reason = r.rpc
            cases.append(vector_case(r, headers, r.body, {"outcome": "reject", "status": r.status, "code": code,
                                                          "reason": reason, "id": rid}, keys))
        ok, out = core_judgement(cases, keys, work)
        tail = out.splitlines()[-1] if out else ""
        check("core reference runner reaches the same verdict for every upstream request and every refusal "
              "(%d cases; %s)" % (len(cases), tail), ok and tail.startswith("%d passed, 0 failed" % len(cases)),
              "\n".join(out.splitlines()[:10]))

        # ------------------------------------------------------ the summary
        print("\nhostile traffic: %d requests in %.1f s (%d workers, %d drip-fed), seed %d"
              % (n_requests, elapsed, args.workers, args.slow, args.seed))
        per = collections.defaultdict(collections.Counter)
        for r in reqs:
            per[r.cls][r.outcome] += 1
        print("%-18s %6s %9s %8s %10s %9s" % ("class", "sent", "upstream", "refused", "envoy-own", "no-answer"))
        for cls in sorted(per):
            c = per[cls]
            print("%-18s %6d %9d %8d %10d %9d" % (cls, sum(c.values()), c["upstream"], c["refused"], c["envoy"],
                                                  c["none"]))
        print("pipelined requests sent again on a new connection after Envoy closed the pipeline "
              "following a local reply: %d" % sum(r.resent for r in reqs))
        reasons = collections.Counter(r.rpc[3] for r in refusals)
        print("refused by the filter, per reason (%d): %s" % (len(refusals), ", ".join(
            "%s %d" % kv for kv in sorted(reasons.items(), key=lambda kv: -kv[1]))))
        seen_reasons = collections.Counter(r.rpc[3] for r in refusals)
        unseen = {k.rsplit(".", 1)[1]: v - seen_reasons[k.rsplit(".", 1)[1]] for k, v in counters.items()
                  if ".refused." in k and v != seen_reasons[k.rsplit(".", 1)[1]]}
        print("refusals counted by the filter that the client got no JSON-RPC answer for (Envoy's own 413 "
              "on the 1 MiB-buffer listener, or a closed connection): %s"
              % (unseen or "none"))
        own = collections.Counter(r.status for r in reqs if r.outcome == "envoy")
        print("refused by Envoy itself, per status: %s" % (dict(sorted(own.items())) or "none"))
        own_cls = collections.Counter("%s %d" % (r.cls, r.status) for r in reqs if r.outcome == "envoy")
        print("  per class: %s" % ", ".join("%s × %d" % kv for kv in sorted(own_cls.items())))
        print("reached the upstream: %d (%d minted valid calls of %d, %d others the core also passes or accepts; "
              "%d with a verified context)" % (len(seen) - 2, minted_up - 2, len(valid), len(seen) - minted_up,
                                              accepted_up - 2))
        print("not judged by the core runner (header bytes not UTF-8): %d" % unjudged)
        print("envoy restarts 0 (pid %d); wasm VMs: %s" % (pid, {k: v for k, v in stats1.items()
                                                                  if "remote" not in k}))
    finally:
        envoy.stop()
        upstream.close()
        if not os.environ.get("TOOLCTX_ENVOY_KEEP_LOG"):
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
