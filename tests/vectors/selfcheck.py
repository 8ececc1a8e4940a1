#!/usr/bin/env python3
"""Independent sanity check of the committed vectors (stdlib only).

It shares no code with generate.py. For every case it
  - checks the token signatures: which configured secret (if any) produced
    the HMAC-SHA256 over the exact `header.payload` text, and that this fits
    the expectation (accepts name the matching secret_index; refusals after
    the signature step carry a good signature; signature_invalid none),
  - runs a small reference model of CONTRACT.md steps 0-14 as read by
    docs/READINGS.md and compares its verdict with the case's `expect`,
  - derives, where a case forwards headers (`config.forward`), what must
    reach the upstream from the model's verdict (CONTRACT §7, precise
    point: its own RFC 8785 writer, percent-encoding through urllib) and
    compares it with `expect.forward`; every forwarded header a request
    sends must be checked there,
  - checks status/code against its own copy of the section 3 table, the
    `id: null` rule for steps 1-4, header values, unique names,
and prints a per-reason count table. Exit status 1 on any disagreement.

    python3 tests/vectors/selfcheck.py [files...]
"""

import base64
import binascii
import glob
import hashlib
import hmac
import json
import os
import re
import sys
import urllib.parse

# Integers of any length (exponents of thousands of digits are read as one).
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

HERE = os.path.dirname(os.path.abspath(__file__))

TABLE = """
credential_missing 401 -32001 1
credential_invalid 401 -32001 1
body_too_large 413 -32600 2
parse_error 400 -32700 3
duplicate_member 400 -32600 3
too_deep 400 -32600 3
batch_with_tools_call 400 -32600 4
invalid_params 400 -32602 6
header_mismatch 400 -32020 7
token_missing 401 -32001 8
token_duplicated 401 -32001 8
token_too_large 401 -32001 9
token_malformed 401 -32001 9
alg_not_allowed 401 -32001 9
crit_not_supported 401 -32001 9
signature_invalid 401 -32001 9
issuer_invalid 401 -32001 10
audience_invalid 401 -32001 10
claim_invalid 401 -32001 10
token_expired 401 -32001 10
token_issued_in_future 401 -32001 10
token_too_old 401 -32001 10
token_not_yet_valid 401 -32001 10
context_malformed 400 -32602 11
tool_mismatch 403 -32003 12
protocol_unsupported 403 -32003 13
meta_mismatch 403 -32003 14
meta_missing 403 -32003 14
claim_missing 403 -32003 14
policy_denied 403 -32004 15
token_replayed 401 -32001 15
"""
STATUS = {}
for line in TABLE.strip().splitlines():
    r, s, c, st = line.split()
    STATUS[r] = (int(s), int(c), int(st))

DEFAULTS = {"require_context": True, "clock_skew_s": 30, "max_token_age_s": 600,
            "max_body_bytes": 1048576, "max_token_bytes": 8192, "protocol_majors": [1]}


# ---------------------------------------------------------------------------
# Strict JSON reader: bytes in, values out; first offending position wins.
# ---------------------------------------------------------------------------
class Num:
    """A number as written; `key` is its exact value, `value` (integer
    literals only) the integer."""

    def __init__(self, text):
        self.text = text
        self.integer_literal = not any(ch in text for ch in ".eE")
        self.value = int(text) if self.integer_literal else None
        self.key = scientific(text)

    def __repr__(self):
        return "Num(%s)" % self.text


def scientific(text):
    """The exact value of a number as (negative, digits, point): the value
    is -+0.<digits> * 10**point, digits without leading or trailing zeros,
    point a Python int; zero is ("zero",) whatever its sign or exponent."""
    sign, whole, frac, exp = re.fullmatch(
        r"(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?", text).groups()
    digits = whole + (frac or "")
    significant = digits.lstrip("0")
    if not significant:
        return ("zero",)
    point = len(whole) - (len(digits) - len(significant)) + int(exp or "0")
    return (sign == "-", significant.rstrip("0"), point)


class Refuse(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
WS = b" \t\n\r"


class Reader:
    def __init__(self, data):
        self.d = data
        self.i = 0
        self.depth = 0

    def fail(self):
        raise Refuse("parse_error")

    def ws(self):
        while self.i < len(self.d) and self.d[self.i] in WS:
            self.i += 1

    def read(self):
        self.ws()
        v = self.value()
        self.ws()
        if self.i != len(self.d):
            self.fail()
        return v

    def value(self):
        if self.i >= len(self.d):
            self.fail()
        ch = self.d[self.i:self.i + 1]
        if ch == b"{":
            return self.obj()
        if ch == b"[":
            return self.arr()
        if ch == b'"':
            return self.string()
        for lit, v in ((b"true", True), (b"false", False), (b"null", None)):
            if self.d.startswith(lit, self.i):
                self.i += len(lit)
                return v
        m = NUMBER.match(self.d, self.i)
        if not m:
            self.fail()
        self.i = m.end()
        return Num(m.group().decode())

    def open(self, end):
        """Past an opening bracket; True when `end` closes it at once."""
        self.depth += 1
        if self.depth > 64:
            raise Refuse("too_deep")
        self.i += 1
        self.ws()
        if self.d[self.i:self.i + 1] == end:
            self.i += 1
            self.depth -= 1
            return True
        return False

    def closed(self, end):
        """After a member or an element: True at `end`, False at a comma."""
        self.ws()
        c = self.d[self.i:self.i + 1]
        self.i += 1
        if c == end:
            self.depth -= 1
            return True
        if c != b",":
            self.fail()
        return False

    def obj(self):
        out = {}
        if self.open(b"}"):
            return out
        while True:
            self.ws()
            if self.d[self.i:self.i + 1] != b'"':
                self.fail()
            k = self.string()
            if k in out:
                raise Refuse("duplicate_member")
            self.ws()
            if self.d[self.i:self.i + 1] != b":":
                self.fail()
            self.i += 1
            self.ws()
            out[k] = self.value()
            if self.closed(b"}"):
                return out

    def arr(self):
        out = []
        if self.open(b"]"):
            return out
        while True:
            self.ws()
            out.append(self.value())
            if self.closed(b"]"):
                return out

    def hex4(self):
        h = self.d[self.i:self.i + 4]
        if len(h) != 4 or not all(c in b"0123456789abcdefABCDEF" for c in h):
            self.fail()
        self.i += 4
        return int(h, 16)

    def string(self):
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.d):
                self.fail()
            b = self.d[self.i]
            if b == 0x22:
                self.i += 1
                return "".join(out)
            if b < 0x20:
                self.fail()
            if b == 0x5C:
                e = self.d[self.i + 1:self.i + 2]
                self.i += 2
                simple = {b'"': '"', b"\\": "\\", b"/": "/", b"b": "\b", b"f": "\f",
                          b"n": "\n", b"r": "\r", b"t": "\t"}
                if e in simple:
                    out.append(simple[e])
                elif e == b"u":
                    u = self.hex4()
                    if 0xD800 <= u <= 0xDBFF:
                        if self.d[self.i:self.i + 2] != b"\\u":
                            self.fail()
                        self.i += 2
                        lo = self.hex4()
                        if not 0xDC00 <= lo <= 0xDFFF:
                            self.fail()
                        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                    elif 0xDC00 <= u <= 0xDFFF:
                        self.fail()
                    out.append(chr(u))
                else:
                    self.fail()
                continue
            if b < 0x80:
                out.append(chr(b))
                self.i += 1
                continue
            n = 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0
            if not n:
                self.fail()
            try:
                out.append(self.d[self.i:self.i + n].decode("utf-8"))
            except UnicodeDecodeError:
                self.fail()
            self.i += n


def parse(data):
    return Reader(data).read()


def jeq(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, Num) and isinstance(b, Num):
        return a.key == b.key
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(jeq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(jeq(a[k], b[k]) for k in a)
    return False


def from_py(v):
    """A value loaded by load(), in the reader's terms."""
    if isinstance(v, bool) or v is None or isinstance(v, str) or isinstance(v, Num):
        return v
    if isinstance(v, int):
        return Num(repr(v))
    if isinstance(v, list):
        return [from_py(x) for x in v]
    return {k: from_py(x) for k, x in v.items()}


# ---------------------------------------------------------------------------
# Reference model of the verdict.
# ---------------------------------------------------------------------------
B64U = re.compile(r"^[A-Za-z0-9_-]*$")


def b64u_canonical(s):
    if not B64U.match(s) or len(s) % 4 == 1:
        return None
    raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if base64.urlsafe_b64encode(raw).decode().rstrip("=") != s:
        return None
    return raw


def numeric_date(v):
    return isinstance(v, Num) and v.integer_literal and 0 <= v.value <= 2**53 - 1


PROTO = re.compile(r"^[0-9]+(\.[0-9]+)?$")
CONTEXT = ["protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key",
           "agent_id", "end_user_id", "metadata"]


def context_value_ok(k, v):
    if k == "metadata":
        return isinstance(v, dict)
    if not isinstance(v, str):
        return False
    if k == "end_user_id":
        return 1 <= len(v) <= 256  # Python str length counts code points
    if k == "protocol":
        return bool(PROTO.match(v))
    return True


class Verdict(Exception):
    def __init__(self, outcome, reason=None, id=None, context=None, meta=None):
        super().__init__(outcome)
        self.outcome, self.reason, self.id, self.context = outcome, reason, id, context
        self.meta = meta or {}


def verify(cfg, now, req):
    def hget(name):
        return [v for n, v in req["headers"] if n.lower() == name.lower()]

    def refuse(reason, id=None):
        raise Verdict("reject", reason, id)

    if req["method"] != "POST":
        raise Verdict("pass")
    cred = cfg.get("credential")
    if cred:
        vals = hget(cred["header"])
        if not vals:
            refuse("credential_missing")
        if len(vals) > 1 or not any(hmac.compare_digest(vals[0].encode(), a.encode())
                                    for a in cred["values"]):
            refuse("credential_invalid")
    data = (base64.b64decode(req["body_b64"]) if "body_b64" in req
            else req["body"].encode("utf-8"))
    if len(data) > cfg["max_body_bytes"]:
        refuse("body_too_large")
    try:
        doc = parse(data)
    except Refuse as e:
        refuse(e.reason)
    if isinstance(doc, list):
        if any(isinstance(el, dict) and el.get("method") == "tools/call" for el in doc):
            refuse("batch_with_tools_call")
        raise Verdict("pass")
    if not isinstance(doc, dict) or doc.get("method") != "tools/call":
        raise Verdict("pass")
    rid = doc.get("id")
    if not isinstance(rid, (str, Num)) or isinstance(rid, bool):
        rid = None

    params = doc.get("params")
    if (not isinstance(params, dict) or not isinstance(params.get("name"), str)
            or ("_meta" in params and not isinstance(params["_meta"], dict))):
        refuse("invalid_params", rid)
    name = params["name"]
    meta = params.get("_meta", {})

    mm = hget("mcp-method")
    if len(mm) > 1 or (mm and mm[0] != "tools/call"):
        refuse("header_mismatch", rid)
    mn = hget("mcp-name")
    if len(mn) > 1:
        refuse("header_mismatch", rid)
    if mn:
        v = mn[0]
        if v.startswith("=?base64?") and v.endswith("?=") and len(v) >= 11:
            try:
                raw = base64.b64decode(v[9:-2], validate=True)
                v = raw.decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                refuse("header_mismatch", rid)
            # Only the canonical encoding: it is what encoding the bytes gives.
            if base64.b64encode(raw).decode("ascii") != mn[0][9:-2]:
                refuse("header_mismatch", rid)
        if v != name:
            refuse("header_mismatch", rid)

    toks = hget("x-agentarea-context")
    if len(toks) > 1:
        refuse("token_duplicated", rid)
    if not toks:
        if cfg["require_context"] or any(k.startswith("agentarea/") for k in meta):
            refuse("token_missing", rid)
        raise Verdict("pass")
    tok = toks[0]
    if len(tok.encode()) > cfg["max_token_bytes"]:
        refuse("token_too_large", rid)
    parts = tok.split(".")
    if len(parts) != 3:
        refuse("token_malformed", rid)
    raws = [b64u_canonical(p) for p in parts]
    if any(r is None for r in raws):
        refuse("token_malformed", rid)
    try:
        header, claims = parse(raws[0]), parse(raws[1])
    except Refuse:
        refuse("token_malformed", rid)
    if not isinstance(header, dict) or not isinstance(claims, dict):
        refuse("token_malformed", rid)
    if header.get("alg") != "HS256":
        refuse("alg_not_allowed", rid)
    if "typ" in header and header["typ"] != "JWT":
        refuse("token_malformed", rid)
    if "crit" in header or "b64" in header:
        refuse("crit_not_supported", rid)
    signing = (parts[0] + "." + parts[1]).encode("ascii")
    index = None
    if len(raws[2]) == 32:
        for i, s in enumerate(cfg["secrets"]):
            if hmac.compare_digest(hmac.new(s.encode(), signing, hashlib.sha256).digest(), raws[2]):
                index = i
                break
    if index is None:
        refuse("signature_invalid", rid)

    if claims.get("iss") != "agentarea":
        refuse("issuer_invalid", rid)
    aud = claims.get("aud")
    if not (aud == cfg["instance_id"] or
            (isinstance(aud, list) and aud and all(isinstance(a, str) for a in aud)
             and cfg["instance_id"] in aud)):
        refuse("audience_invalid", rid)
    if not numeric_date(claims.get("iat")) or not numeric_date(claims.get("exp")):
        refuse("claim_invalid", rid)
    iat, exp = claims["iat"].value, claims["exp"].value
    skew = cfg["clock_skew_s"]
    if now >= exp + skew:
        refuse("token_expired", rid)
    if iat > now + skew:
        refuse("token_issued_in_future", rid)
    if now - iat > cfg["max_token_age_s"] + skew:
        refuse("token_too_old", rid)
    if "nbf" in claims:
        if not numeric_date(claims["nbf"]):
            refuse("claim_invalid", rid)
        if claims["nbf"].value > now + skew:
            refuse("token_not_yet_valid", rid)
    if "jti" in claims and not isinstance(claims["jti"], str):
        refuse("claim_invalid", rid)

    for k in CONTEXT:
        if k in claims:
            if not context_value_ok(k, claims[k]):
                refuse("context_malformed", rid)
        elif k in CONTEXT[:5]:
            refuse("context_malformed", rid)
    if claims["idempotency_key"] != claims["task_id"] + ":" + claims["tool_call_id"]:
        refuse("context_malformed", rid)
    for key, v in meta.items():
        if key.startswith("agentarea/") and key[10:] in CONTEXT:
            if not context_value_ok(key[10:], v):
                refuse("context_malformed", rid)

    if "tool" in claims and claims["tool"] != name:
        refuse("tool_mismatch", rid)
    if int(claims["protocol"].split(".")[0]) not in cfg["protocol_majors"]:
        refuse("protocol_unsupported", rid)

    for key, v in meta.items():
        if key.startswith("agentarea/"):
            k = key[10:]
            if k not in claims:
                refuse("claim_missing", rid)
            if not jeq(v, claims[k]):
                refuse("meta_mismatch", rid)
    for k in CONTEXT:
        if k in claims and "agentarea/" + k not in meta:
            refuse("meta_missing", rid)

    ctx = {k: claims[k] for k in CONTEXT + ["tool", "jti", "iat", "exp"] if k in claims}
    ctx["secret_index"] = Num(str(index))
    raise Verdict("accept", context=ctx, meta=meta)


def run(cfg, now, req):
    try:
        verify(cfg, now, req)
    except Verdict as v:
        return v
    raise AssertionError("no verdict")


# ---------------------------------------------------------------------------
# Signature report, independent of the model above: which secret signed it.
# ---------------------------------------------------------------------------
def signer(cfg, token):
    parts = token.split(".")
    if len(parts) != 3:
        return "n/a"
    try:
        sig = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
    except (binascii.Error, ValueError):
        return "n/a"
    for i, s in enumerate(cfg["secrets"]):
        if hmac.new(s.encode(), (parts[0] + "." + parts[1]).encode(), hashlib.sha256).digest() == sig:
            return i
    return None


# ---------------------------------------------------------------------------
# What reaches the upstream (CONTRACT §7, precise point).
# ---------------------------------------------------------------------------
def shortest(x):
    """The fewest significant digits that give back the double x, and the
    decimal exponent: x = 0.<digits> * 10**point."""
    for p in range(1, 18):
        text = "%.*e" % (p - 1, x)
        if float(text) == x:
            break
    mant, exp = text.split("e")
    digits = mant.replace(".", "").rstrip("0")
    return digits, int(exp) + 1


def number_text(num):
    """RFC 8785 / ECMAScript Number.prototype.toString of a JSON number."""
    x = float(num.text)
    if x == 0:
        return "0"
    if x != x or abs(x) == float("inf"):
        return None
    digits, point = shortest(abs(x))
    sign, k = "-" if x < 0 else "", len(digits)
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        body = "%se%+d" % (mant, point - 1)
    return sign + body


def canonical(v):
    if isinstance(v, Num):
        return number_text(v)
    if isinstance(v, str):
        out = []
        for ch in v:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ch in "\b\f\n\r\t":
                out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
            elif ord(ch) < 32:
                out.append("\\u%04x" % ord(ch))
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        def utf16(k):
            return [u for ch in k for u in ([ord(ch)] if ord(ch) < 0x10000 else
                                            [0xD800 + ((ord(ch) - 0x10000) >> 10),
                                             0xDC00 + ((ord(ch) - 0x10000) & 0x3FF)])]
        return "{" + ",".join(canonical(k) + ":" + canonical(v[k])
                              for k in sorted(v, key=utf16)) + "}"
    return {True: "true", False: "false", None: "null"}[v]


# Every visible ASCII byte but % stays; quote() keeps letters, digits and -._~.
HEADER_SAFE = "!\"#$&'()*+,/:;<=>?@[\\]^`{|}"


def header_value(text):
    return urllib.parse.quote(text, safe=HEADER_SAFE, encoding="utf-8")


def expected_forward(fwd, got):
    """Header -> value the upstream must see for verdict `got` (None: no
    header), from the reference model's context and _meta. An empty header
    value is never sent: an empty string forwards nothing, as null does."""
    names = {field: name.lower() for field, name in (fwd.get("headers") or {}).items()}
    tuix = {"sessionId": "x-session-id", "idempotencyKey": "x-idempotency-key"} if fwd.get("tuix") else {}
    out = {}
    for field, name in names.items():
        v = got.context.get(field) if got.outcome == "accept" else None
        text = None if v is None else (v if isinstance(v, str) else canonical(v))
        out[name] = None if text is None else header_value(text)
    for member, name in tuix.items():
        v = got.meta.get(member) if got.outcome == "accept" else None
        text = None if v is None else (v if isinstance(v, str) else canonical(v))
        out[name] = None if text is None else header_value(text)
    return {name: value or None for name, value in out.items()}


def other_format(path):
    with open(path, encoding="utf-8") as fh:
        return "format" in json.load(fh)


def main(argv):
    # Files that name a "format" (helpers, settings, memory store, store
    # address) are other formats, each with its own self-check.
    files = argv[1:] or sorted(p for p in glob.glob(os.path.join(HERE, "*.json")) if not other_format(p))
    problems = []
    counts = {}
    per_file = {}
    forward_counts = {}
    sig_stats = {"signed by a configured secret": 0, "by no configured secret": 0, "n/a": 0}
    for path in files:
        with open(path, encoding="utf-8") as fh:
            # Numbers with a fraction or exponent as written, never floats.
            doc = json.load(fh, parse_float=Num)
        fname = os.path.basename(path)
        per_file[fname] = len(doc["cases"])
        names = set()
        for case in doc["cases"]:
            where = "%s: %s" % (fname, case["name"])
            if case["name"] in names:
                problems.append(where + ": duplicate name")
            names.add(case["name"])
            cfg = dict(DEFAULTS)
            cfg.update(doc["config"])
            cfg.update(case.get("config", {}))
            now = case.get("now", doc["now"])
            req, exp = case["request"], case["expect"]
            for n, v in req["headers"]:
                if v != v.strip(" \t") or not all(32 <= ord(c) < 127 for c in v):
                    problems.append(where + ": header %s value not trimmed ASCII" % n)
            if "message" in exp:
                problems.append(where + ": has a message expectation")
            key = exp.get("reason") or exp["outcome"]
            counts.setdefault(key, {}).setdefault(fname, 0)
            counts[key][fname] += 1

            # signatures as intended
            toks = [v for n, v in req["headers"] if n.lower() == "x-agentarea-context"]
            if len(toks) == 1:
                who = signer(cfg, toks[0])
                if who == "n/a":
                    sig_stats["n/a"] += 1
                elif who is None:
                    sig_stats["by no configured secret"] += 1
                else:
                    sig_stats["signed by a configured secret"] += 1
                if exp["outcome"] == "accept":
                    want = exp.get("context", {}).get("secret_index")
                    if who is None or who == "n/a" or (want is not None and want != who):
                        problems.append(where + ": accepted token signer %r, expected %r" % (who, want))
                elif exp["outcome"] == "reject":
                    st = STATUS[exp["reason"]][2]
                    if st >= 10 and not isinstance(who, int):
                        problems.append(where + ": refused after step 9 but signature is %r" % (who,))
                    if exp["reason"] == "signature_invalid" and isinstance(who, int):
                        sig = toks[0].split(".")[2]
                        if b64u_canonical(sig) is not None:
                            problems.append(where + ": signature_invalid but signed by %d" % who)

            # expectation format and table
            if exp["outcome"] == "reject":
                s, c, st = STATUS[exp["reason"]]
                if (exp.get("status"), exp.get("code")) != (s, c):
                    problems.append(where + ": status/code %r/%r, table says %d/%d"
                                    % (exp.get("status"), exp.get("code"), s, c))
                if "id" not in exp:
                    problems.append(where + ": no id expectation")
                elif st <= 4 and exp["id"] is not None:
                    problems.append(where + ": steps 1-4 must carry id null")

            # reference model
            got = run(cfg, now, req)
            if got.outcome != exp["outcome"]:
                problems.append(where + ": model says %s %s, vector says %s %s"
                                % (got.outcome, got.reason or "", exp["outcome"], exp.get("reason", "")))
                continue
            if got.outcome == "reject":
                if got.reason != exp["reason"]:
                    problems.append(where + ": model says %s, vector says %s" % (got.reason, exp["reason"]))
                if not jeq(got.id, from_py(exp["id"])):
                    problems.append(where + ": model id %r, vector id %r" % (got.id, exp["id"]))
            if "forward" in exp or cfg.get("forward"):
                if got.outcome == "reject":
                    if "forward" in exp:
                        problems.append(where + ": expect.forward on a refusal")
                else:
                    want = expected_forward(cfg.get("forward") or {}, got)
                    have = {k: v for k, v in exp.get("forward", {}).items()}
                    if have != want:
                        problems.append(where + ": forward: model %r, vector %r" % (want, have))
                    sent = {n.lower() for n, _ in req["headers"]}
                    if sent & set(want) - set(have):
                        problems.append(where + ": a forwarded header sent but not checked")
                    forward_counts[got.outcome] = forward_counts.get(got.outcome, 0) + 1
            if got.outcome == "accept":
                for k, v in exp.get("context", {}).items():
                    if k not in got.context or not jeq(got.context[k], from_py(v)):
                        problems.append(where + ": context %s: model %r, vector %r"
                                        % (k, got.context.get(k), v))

    fnames = list(per_file)
    width = max(len(k) for k in list(counts) + ["reason"])
    print("%-*s %s  total" % (width, "reason", " ".join("%6s" % f.split(".")[0][:6] for f in fnames)))
    order = [r for r in STATUS if r in counts] + [k for k in ("accept", "pass") if k in counts]
    for r in order:
        row = counts[r]
        print("%-*s %s  %5d" % (width, r, " ".join("%6s" % (row.get(f, "") or "") for f in fnames),
                                sum(row.values())))
    print("%-*s %s  %5d" % (width, "cases", " ".join("%6d" % per_file[f] for f in fnames),
                            sum(per_file.values())))
    print("tokens (single header): %s" % ", ".join("%s %d" % kv for kv in sig_stats.items()))
    print("forwarded headers checked: %s" % ", ".join("%s %d" % kv for kv in sorted(forward_counts.items())))
    for r in STATUS:
        n = sum(counts.get(r, {}).values())
        # policy_denied's cases are tests/vectors/policy.json's (selfcheck_policy.py).
        if r not in ("token_replayed", "policy_denied") and n < 3:
            problems.append("reason %s has only %d cases" % (r, n))
    if sum(per_file.values()) < 200:
        problems.append("fewer than 200 cases")
    for p in problems:
        print("PROBLEM " + p)
    print("%d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
