#!/usr/bin/env python3
"""Re-derive tests/vectors/policy.json another way than its generator.

The generator evaluates expression trees it built; this script reads each
rule's CEL *text* with its own small parser (the subset's grammar), reads
each request as a verifier would (the token's HMAC checked, its payload
decoded, `params.arguments` and `_meta` from the body), evaluates the
rules for the tool with its own evaluator, and compares the expected
verdict. A compile case that expects a position must point inside its
expression, at the token CEL's checker reports (an operator, `(`, `[`,
`?`, an identifier, or the end). Standard library only. Exit 1 on any
mismatch.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = re.compile(r"""\s*(?:(?P<num>\d+\.\d+|\d+e\d+|\d+)|(?P<str>'[^']*'|"[^"]*")|(?P<id>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>==|!=|<=|>=|&&|\|\||[<>!?:.,()\[\]]))""")


class Err(Exception):
    pass


def tokens(text):
    out, i = [], 0
    text = text.rstrip()
    while i < len(text):
        m = TOKEN.match(text, i)
        if not m:
            raise SyntaxError(text[i:])
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        i = m.end()
    return out + [("end", "")]


class Parser:
    """Precedence climbing over the subset: ?: < || < && < relations < unary < member."""

    def __init__(self, text):
        self.t, self.i = tokens(text), 0

    def peek(self):
        return self.t[self.i][1] if self.t[self.i][0] != "end" else None

    def take(self, want=None):
        kind, v = self.t[self.i]
        if want is not None and v != want:
            raise SyntaxError("expected %s, got %s" % (want, v))
        self.i += 1
        return kind, v

    def expr(self):
        c = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.binary(0)
            self.take(":")
            return ("?:", c, a, self.expr())
        return c

    LEVELS = [("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in")]

    def binary(self, level):
        if level == len(self.LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self.LEVELS[level]:
            op = self.take()[1]
            left = (op, left, self.binary(level + 1))
        return left

    def unary(self):
        if self.peek() == "!":
            self.take()
            return ("!", self.unary())
        return self.member()

    def member(self):
        x = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                name = self.take()[1]
                if self.peek() == "(":
                    self.take()
                    if name in ("all", "exists"):
                        var = self.take()[1]
                        self.take(",")
                        x = ("comp", name, x, var, self.expr())
                    else:
                        x = ("call", name, x, self.expr())
                    self.take(")")
                else:
                    x = ("sel", x, name)
            else:
                x = ("idx", x, self.expr())
                self.take("]")
        return x

    def primary(self):
        kind, v = self.take()
        if kind == "num":
            return ("lit", float(v) if ("." in v or "e" in v) else int(v))
        if kind == "str":
            return ("lit", v[1:-1])
        if v == "(":
            x = self.expr()
            self.take(")")
            return x
        if v in ("true", "false"):
            return ("lit", v == "true")
        if v == "null":
            return ("lit", None)
        if v in ("has", "size"):
            self.take("(")
            x = self.expr()
            self.take(")")
            return (v, x)
        if kind == "id":
            return ("var", v)
        raise SyntaxError(v)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a, b):
    if is_num(a) and is_num(b):
        return float(a) == float(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def truth(node, env):
    v = ev(node, env)
    if isinstance(v, bool):
        return v
    raise Err()


def ev(n, env):
    op = n[0]
    if op == "lit":
        return n[1]
    if op == "var":
        if n[1] not in env:
            raise Err()
        return env[n[1]]
    if op == "sel":
        m = ev(n[1], env)
        if isinstance(m, dict) and n[2] in m:
            return m[n[2]]
        raise Err()
    if op == "has":
        m = ev(n[1][1], env)
        if isinstance(m, dict):
            return n[1][2] in m
        if isinstance(m, list):
            raise Err()
        return False
    if op == "idx":
        x, i = ev(n[1], env), ev(n[2], env)
        if isinstance(x, dict) and isinstance(i, str) and i in x:
            return x[i]
        if isinstance(x, list) and is_num(i) and float(i).is_integer() and 0 <= int(i) < len(x):
            return x[int(i)]
        raise Err()
    if op in ("&&", "||"):
        stop = op == "||"
        sides = []
        for side in n[1:]:
            try:
                sides.append(truth(side, env))
            except Err:
                sides.append("err")
        if stop in sides:
            return stop
        if "err" in sides:
            raise Err()
        return not stop
    if op == "!":
        return not truth(n[1], env)
    if op == "?:":
        return ev(n[2], env) if truth(n[1], env) else ev(n[3], env)
    if op == "size":
        v = ev(n[1], env)
        if isinstance(v, (str, list, dict)):
            return len(v)
        raise Err()
    if op == "call":
        s, p = ev(n[2], env), ev(n[3], env)
        if isinstance(s, str) and isinstance(p, str):
            return {"startsWith": s.startswith(p), "endsWith": s.endswith(p), "contains": p in s}[n[1]]
        raise Err()
    if op == "comp":
        r = ev(n[2], env)
        want_all = n[1] == "all"
        if r == "":
            return want_all
        if not isinstance(r, (list, dict)):
            raise Err()
        results = []
        for item in r:
            try:
                results.append(truth(n[4], dict(env, **{n[3]: item})))
            except Err:
                results.append("err")
        if (not want_all) in results:
            return not want_all
        if "err" in results:
            raise Err()
        return want_all
    a, b = ev(n[1], env), ev(n[2], env)
    if op == "==":
        return same(a, b)
    if op == "!=":
        return not same(a, b)
    if op == "in":
        if isinstance(b, list):
            return any(same(a, x) for x in b)
        if isinstance(b, dict):
            return a in b if isinstance(a, str) else False
        raise Err()
    if is_num(a) and is_num(b):
        a, b = float(a), float(b)
    elif not (type(a) is type(b) and isinstance(a, (str, bool))):
        raise Err()
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def unb64(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def glob(pattern, name):
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), name, re.S) is not None


def expected_call(doc, case):
    req = case["request"]
    body = json.loads(req["body"])
    params = body["params"]
    tool = params["name"]
    token = dict(req["headers"]).get("x-agentarea-context")
    claims = {}
    if token:
        head, payload, sig = token.split(".")
        secret = doc["config"]["secrets"][0].encode()
        want = hmac.new(secret, (head + "." + payload).encode(), hashlib.sha256).digest()
        assert hmac.compare_digest(want, unb64(sig)), "%s: bad signature" % case["name"]
        p = json.loads(unb64(payload))
        keys = ["protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key",
                "agent_id", "end_user_id", "metadata", "tool", "jti", "iat", "exp"]
        claims = {k: p[k] for k in keys if k in p}
    env = {"claims": claims, "args": params.get("arguments", {}), "meta": params.get("_meta", {}), "tool": tool}
    policy = case["policy"]
    denied, named = None, False
    for pattern, rules in policy["rules"].items():
        if not glob(pattern, tool):
            continue
        for rule in rules:
            named = True
            try:
                ok = ev(Parser(rule["expr"]).expr(), env) is True
            except Err:
                ok = False
            if not ok and denied is None:
                denied = rule["name"]
    if not named and policy["default"] == "deny":
        denied = "default"
    if denied is None:
        return {"outcome": "accept", "policy_audit": None} if token else {"outcome": "pass"}
    if policy.get("mode") == "audit":
        return {"outcome": "accept", "policy_audit": denied} if token else {"outcome": "pass"}
    return {"outcome": "reject", "status": 403, "code": -32004, "reason": "policy_denied",
            "rule": denied, "id": body["id"]}


def check_position(case):
    exp = case["expect"]
    if "line" not in exp:
        return True
    (rules,) = case["policy"]["rules"].values()
    text = rules[0]["expr"]
    lines = text.split("\n")
    if not 1 <= exp["line"] <= len(lines):
        return False
    line = lines[exp["line"] - 1]
    col = exp["column"] - 1
    if col == len(line):
        return True  # the end of the expression
    if not 0 <= col < len(line):
        return False
    return line[col] in "=!<>(+[?'\"" or line[col].isalpha()


def main():
    with open(os.path.join(HERE, "policy.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    assert doc["format"] == "toolctx-policy"
    bad = 0
    for case in doc["cases"]:
        if case["kind"] == "call":
            want = expected_call(doc, case)
            if want != case["expect"]:
                bad += 1
                print("MISMATCH %s: file %s, re-derived %s" % (case["name"], case["expect"], want))
        elif case["kind"] == "compile":
            exp = case["expect"]
            if exp.get("ok"):
                for rules in case["policy"]["rules"].values():
                    for rule in rules:
                        Parser(rule["expr"]).expr()  # must at least parse
            elif not check_position(case):
                bad += 1
                print("BAD POSITION %s: %s" % (case["name"], exp))
        else:
            bad += 1
            print("UNKNOWN KIND %s" % case["name"])
    print("selfcheck_policy: %d cases, %d mismatches" % (len(doc["cases"]), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
