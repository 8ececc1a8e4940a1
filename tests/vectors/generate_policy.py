#!/usr/bin/env python3
"""Generate the policy vectors (tests/vectors/policy.json, CONTRACT §8).

Standard library only; never imports or runs project code. Each rule is
built as a small expression tree that renders its CEL text and evaluates
itself with this file's own evaluator of the subset (CEL's semantics: every
JSON number a double, heterogeneous numeric equality, `&&`/`||` absorbing
an error when the other side decides, a missing key an error); a call's
expected answer is the first rule for its tool that does not evaluate to
true, else the default. The requests carry real HS256 tokens.

File format (`"format"` keeps the verdict runners off it):

    {"format": "toolctx-policy", "description": ..., "now": ...,
     "config": {the verifier's settings, without "policy"},
     "cases": [
       {"name", "kind": "compile", "policy": {...},
        "expect": {"ok": true} |
                  {"code": "config_invalid", "rule": NAME, "line": L, "column": C} |
                  {"code": "config_invalid"}},
       {"name", "kind": "call", "policy": {...}, ["settings": {more settings},]
        "request": {method, headers, body},
        "expect": {"outcome": "accept", "policy_audit": NAME|null} |
                  {"outcome": "pass"} |
                  {"outcome": "reject", "status", "code", "reason", "rule", "id"}}]}

    python3 tests/vectors/generate_policy.py [--check]

tests/vectors/selfcheck_policy.py re-derives every expectation another way
(it parses the rules' CEL text itself).
"""

import base64
import hashlib
import hmac
import json
import os
import sys

import vectorfile

HERE = os.path.dirname(os.path.abspath(__file__))
FORMAT = "toolctx-policy"
NOW = 1767225600
INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "toolctx-vectors-secret-one-4f8a2c9e71d05b"
CONFIG = {"instance_id": INSTANCE, "secrets": [SECRET]}
DENIED = {"status": 403, "code": -32004, "reason": "policy_denied"}

# ---------------------------------------------------------------------------
# The expression trees: text() renders CEL, ev(env) evaluates.
# ---------------------------------------------------------------------------


class Err(Exception):
    """CEL's error value."""


class E:
    def bool_of(self, env):
        v = self.ev(env)
        if v is True or v is False:
            return v
        raise Err()


class Lit(E):
    def __init__(self, v, text=None):
        self.v, self.t = v, text

    def text(self):
        if self.t is not None:
            return self.t
        if isinstance(self.v, bool):
            return "true" if self.v else "false"
        if self.v is None:
            return "null"
        if isinstance(self.v, str):
            return json.dumps(self.v)
        return repr(self.v)

    def ev(self, env):
        return self.v


class Var(E):
    def __init__(self, name):
        self.name = name

    def text(self):
        return self.name

    def ev(self, env):
        return env[self.name]


class Sel(E):
    def __init__(self, x, f):
        self.x, self.f = x, f

    def text(self):
        return "%s.%s" % (self.x.text(), self.f)

    def ev(self, env):
        m = self.x.ev(env)
        if isinstance(m, dict) and self.f in m:
            return m[self.f]
        raise Err()


class Has(E):
    def __init__(self, x, f):
        self.x, self.f = x, f

    def text(self):
        return "has(%s.%s)" % (self.x.text(), self.f)

    def ev(self, env):
        m = self.x.ev(env)
        if isinstance(m, dict):
            return self.f in m
        if isinstance(m, list):
            raise Err()
        return False


class Idx(E):
    def __init__(self, x, i):
        self.x, self.i = x, i

    def text(self):
        return "%s[%s]" % (self.x.text(), self.i.text())

    def ev(self, env):
        x, i = self.x.ev(env), self.i.ev(env)
        if isinstance(x, dict) and isinstance(i, str) and i in x:
            return x[i]
        if isinstance(x, list) and isinstance(i, (int, float)) and not isinstance(i, bool):
            if float(i).is_integer() and 0 <= int(i) < len(x):
                return x[int(i)]
        raise Err()


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def equal(a, b):
    if num(a) and num(b):
        return float(a) == float(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b


class Bin(E):
    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def text(self):
        return "%s %s %s" % (self.a.text(), self.op, self.b.text())

    def ev(self, env):
        if self.op in ("&&", "||"):
            decides = self.op == "||"
            out = []
            for side in (self.a, self.b):
                try:
                    out.append(side.bool_of(env))
                except Err:
                    out.append(None)
            if decides in out:
                return decides
            if None in out:
                raise Err()
            return not decides
        a, b = self.a.ev(env), self.b.ev(env)
        if self.op == "==":
            return equal(a, b)
        if self.op == "!=":
            return not equal(a, b)
        if self.op == "in":
            if isinstance(b, list):
                return any(equal(a, x) for x in b)
            if isinstance(b, dict):
                return isinstance(a, str) and a in b
            raise Err()
        ok = (num(a) and num(b)) or (type(a) is type(b) and isinstance(a, (str, bool)))
        if not ok:
            raise Err()
        a, b = (float(a), float(b)) if num(a) else (a, b)
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]


class Not(E):
    def __init__(self, x):
        self.x = x

    def text(self):
        return "!(%s)" % self.x.text()

    def ev(self, env):
        return not self.x.bool_of(env)


class Cond(E):
    def __init__(self, c, a, b):
        self.c, self.a, self.b = c, a, b

    def text(self):
        return "(%s ? %s : %s)" % (self.c.text(), self.a.text(), self.b.text())

    def ev(self, env):
        return self.a.ev(env) if self.c.bool_of(env) else self.b.ev(env)


class Size(E):
    def __init__(self, x):
        self.x = x

    def text(self):
        return "size(%s)" % self.x.text()

    def ev(self, env):
        v = self.x.ev(env)
        if isinstance(v, (str, list, dict)):
            return len(v)
        raise Err()


class Str(E):
    def __init__(self, fn, x, arg):
        self.fn, self.x, self.arg = fn, x, arg

    def text(self):
        return "%s.%s(%s)" % (self.x.text(), self.fn, self.arg.text())

    def ev(self, env):
        s, p = self.x.ev(env), self.arg.ev(env)
        if not (isinstance(s, str) and isinstance(p, str)):
            raise Err()
        return {"startsWith": s.startswith, "endsWith": s.endswith, "contains": s.__contains__}[self.fn](p)


class Comp(E):
    def __init__(self, fn, x, var, pred):
        self.fn, self.x, self.var, self.pred = fn, x, var, pred

    def text(self):
        return "%s.%s(%s, %s)" % (self.x.text(), self.fn, self.var, self.pred.text())

    def ev(self, env):
        r = self.x.ev(env)
        if r == "":
            return self.fn == "all"
        if not isinstance(r, (list, dict)):
            raise Err()
        decides = self.fn == "exists"
        failed = False
        for item in r:
            try:
                if self.pred.bool_of(dict(env, **{self.var: item})) == decides:
                    return decides
            except Err:
                failed = True
        if failed:
            raise Err()
        return not decides


def allows(expr, env):
    try:
        return expr.ev(env) is True
    except Err:
        return False


# Shorthands.
args, claims, meta, tool = Var("args"), Var("claims"), Var("meta"), Var("tool")


def eq(a, b):
    return Bin("==", a, b)


# ---------------------------------------------------------------------------
# Requests with real tokens.
# ---------------------------------------------------------------------------


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


TASK, CALL = "task-7", "call-1"
BASE_CLAIMS = {
    "protocol": "1",
    "task_id": TASK,
    "tool_call_id": CALL,
    "workspace_id": "ws-1",
    "idempotency_key": TASK + ":" + CALL,
    "end_user_id": "user-42",
    "metadata": {"roles": ["dev", "admin"], "level": 3, "region": "eu"},
}


def request(tool_name, arguments, ctx=None, jti="jti-1", rid=9):
    """A tools/call for `tool_name` with `arguments`, its token over the
    claims `ctx` (BASE_CLAIMS; None: no token), and `_meta` binding them."""
    headers = [["content-type", "application/json"]]
    meta = {"progressToken": 1}
    if ctx is not None:
        payload = {"iss": "agentarea", "aud": INSTANCE, "iat": NOW, "exp": NOW + 300, "jti": jti, "tool": tool_name}
        payload.update(ctx)
        head = b64u(compact({"alg": "HS256", "typ": "JWT"}).encode())
        body = b64u(compact(payload).encode("utf-8"))
        sig = b64u(hmac.new(SECRET.encode(), (head + "." + body).encode(), hashlib.sha256).digest())
        headers.append(["x-agentarea-context", head + "." + body + "." + sig])
        meta.update({"agentarea/" + k: v for k, v in ctx.items()})
    params = {"name": tool_name, "arguments": arguments, "_meta": meta}
    return {"method": "POST", "headers": headers,
            "body": compact({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})}


def claims_env(ctx, tool_name):
    """`claims` as a rule reads it: the context claims, tool, jti, iat, exp."""
    if ctx is None:
        return {}
    out = dict(ctx)
    out.update({"tool": tool_name, "jti": "jti-1", "iat": NOW, "exp": NOW + 300})
    return out


# ---------------------------------------------------------------------------
# The cases.
# ---------------------------------------------------------------------------

CASES = []


def policy_of(rules, default="allow", mode=None):
    """`rules`: [(pattern, name, expr)]; returns the setting and the trees."""
    setting = {"default": default}
    if mode:
        setting["mode"] = mode
    grouped = {}
    for pattern, name, expr in rules:
        grouped.setdefault(pattern, []).append({"name": name, "expr": expr.text()})
    setting["rules"] = grouped
    return setting


def matches(pattern, name):
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == name
    if not name.startswith(parts[0]):
        return False
    rest = name[len(parts[0]):]
    for part in parts[1:-1]:
        i = rest.find(part)
        if i < 0:
            return False
        rest = rest[i + len(part):]
    return len(rest) >= len(parts[-1]) and rest.endswith(parts[-1])


def call(name, rules, tool_name, arguments, ctx=BASE_CLAIMS, default="allow", mode=None, rid=9):
    # A call without a token passes only when the context is not required.
    """A call case: the expectation from this file's evaluator."""
    env = {"claims": claims_env(ctx, tool_name), "args": arguments,
           "meta": {}, "tool": tool_name}
    req = request(tool_name, arguments, ctx, rid=rid)
    env["meta"] = json.loads(req["body"])["params"]["_meta"]
    ordered = [(n, e) for pattern in dict.fromkeys(p for p, _, _ in rules)
               for p, n, e in rules if p == pattern]
    # The setting groups rules by pattern: the order a runner sees.
    pat = {n: p for p, n, _ in rules}
    named = [(n, e) for n, e in ordered if matches(pat[n], tool_name)]
    denied = next((n for n, e in named if not allows(e, env)), None)
    if not named and default == "deny":
        denied = "default"
    if denied is None:
        expect = {"outcome": "accept" if ctx is not None else "pass"}
        if ctx is not None:
            expect["policy_audit"] = None
    elif mode == "audit":
        expect = {"outcome": "accept", "policy_audit": denied} if ctx is not None else {"outcome": "pass"}
    else:
        expect = dict({"outcome": "reject"}, **DENIED, rule=denied, id=rid)
    case = {"name": name, "kind": "call", "policy": policy_of(rules, default, mode)}
    if ctx is None:
        case["settings"] = {"require_context": False}
    case.update(request=req, expect=expect)
    CASES.append(case)


def compile_case(name, setting, expect):
    CASES.append({"name": name, "kind": "compile", "policy": setting, "expect": expect})


def rule_setting(expr_text, default="allow"):
    return {"default": default, "rules": {"t": [{"name": "r", "expr": expr_text}]}}


def generate():
    CASES.clear()
    # The confused deputy: an argument bound to the verified context.
    own = ("transfer", "own-account", eq(Sel(args, "from_user"), Sel(claims, "end_user_id")))
    call("transfer from the caller's own account: allowed", [own], "transfer", {"from_user": "user-42", "amount": 100})
    call("transfer from another user's account: denied by the rule", [own], "transfer", {"from_user": "user-7", "amount": 100})
    call("transfer without the argument: an error, denied", [own], "transfer", {"amount": 100})
    call("another tool: no rule, the default allows", [own], "read", {"from_user": "user-7"})
    call("another tool: no rule, the default denies", [own], "read", {}, default="deny")
    call("audit mode: the denial reported, the call accepted", [own], "transfer", {"from_user": "user-7"}, mode="audit")
    call("audit mode: an allowed call reports nothing", [own], "transfer", {"from_user": "user-42"}, mode="audit")

    # Every JSON number is a double: 100, 100.0 and 1e2 decide alike.
    cap = ("transfer", "cap", Bin("<=", Sel(args, "amount"), Lit(100)))
    for spelling in ("100", "100.0", "1e2", "100.5"):
        body_amount = json.loads(spelling)
        call("amount written %s against the int literal 100" % spelling, [cap], "transfer",
             {"from_user": "user-42", "amount": body_amount})
    exact = ("transfer", "exact", eq(Sel(args, "amount"), Lit(100.0, "100.0")))
    call("amount 1e2 equals the double literal 100.0", [exact], "transfer", {"amount": 1e2})
    call("a string '100' is not the number 100", [exact], "transfer", {"amount": "100"})

    # Metadata claims, has(), in, size(), strings, comprehensions.
    admin = ("delete_*", "admins", Bin("in", Lit("admin"), Sel(Sel(claims, "metadata"), "roles")))
    call("delete_repo by an admin (a pattern names the tool)", [admin], "delete_repo", {"repo": "r"})
    call("delete_repo by a non-admin", [admin], "delete_repo", {"repo": "r"},
         ctx=dict(BASE_CLAIMS, metadata={"roles": ["dev"]}))
    call("a pattern that does not match: the default", [admin], "undelete", {}, default="allow")
    ws = ("*", "workspace", Bin("||", Bin("&&", Has(args, "workspace"), Lit(True)), Lit(False)))
    ws2 = ("*", "workspace-bound", Bin("||", Not(Has(args, "workspace")),
                                        eq(Sel(args, "workspace"), Sel(claims, "workspace_id"))))
    call("the workspace argument is the verified one", [ws2], "search", {"workspace": "ws-1"})
    call("the workspace argument is another", [ws2], "search", {"workspace": "ws-2"})
    call("no workspace argument: allowed", [ws2], "search", {"q": "x"})
    call("two rules, the second denies", [ws, own], "transfer", {"workspace": "w", "from_user": "user-7"})
    call("two patterns for one tool, both allow", [ws, own], "transfer", {"workspace": "w", "from_user": "user-42"})
    files = ("read_files", "paths", Comp("all", Sel(args, "paths"), "p",
                                          Str("startsWith", Var("p"), Lit("/home/user-42/"))))
    call("every path under the user's home", [files], "read_files", {"paths": ["/home/user-42/a", "/home/user-42/b"]})
    call("one path outside it", [files], "read_files", {"paths": ["/home/user-42/a", "/etc/passwd"]})
    call("paths not a list: an error, denied", [files], "read_files", {"paths": "/home/user-42/a"})
    call("an empty string ranges over nothing: all() is true", [files], "read_files", {"paths": ""})
    anyurl = ("fetch", "host", Comp("exists", Sel(args, "urls"), "u", Str("contains", Var("u"), Lit("example.org"))))
    call("exists(): one URL matches", [anyurl], "fetch", {"urls": ["https://a.test", "https://example.org/x"]})
    call("exists(): none matches", [anyurl], "fetch", {"urls": ["https://a.test"]})
    short = ("note", "short", Bin("<", Size(Sel(args, "text")), Lit(5)))
    call("size() counts code points", [short], "note", {"text": "héllo"})
    call("size() of a short text", [short], "note", {"text": "hé"})
    level = ("report", "level", Bin(">=", Sel(Sel(claims, "metadata"), "level"), Lit(3)))
    call("a metadata number compares with an int literal", [level], "report", {})
    idx = ("pick", "first", eq(Idx(Sel(args, "items"), Lit(0)), Lit("a")))
    call("a list index", [idx], "pick", {"items": ["a", "b"]})
    call("a list index out of range: an error, denied", [idx], "pick", {"items": []})
    cond = ("cond", "cond", Cond(Has(args, "limit"), Bin("<", Sel(args, "limit"), Lit(10)), Lit(True)))
    call("?: picks the limit check", [cond], "cond", {"limit": 50})
    call("?: without a limit", [cond], "cond", {})
    tname = ("*", "tool-name", Bin("||", Str("startsWith", tool, Lit("get_")), eq(tool, Lit("search"))))
    call("the tool name itself", [tname], "get_order", {})
    call("the tool name itself, refused", [tname], "put_order", {})

    # Errors and non-bools deny; && and || absorb an error the other side decides.
    absorb = ("x", "absorb", Bin("||", Sel(args, "missing"), Lit(True)))
    call("error || true is true", [absorb], "x", {})
    absorb2 = ("x", "absorb-and", Bin("&&", Sel(args, "missing"), Lit(False)))
    call("error && false is false: denied by the value, not the error", [absorb2], "x", {})
    nonbool = ("x", "non-bool", Sel(args, "flag"))
    call("a rule that yields a string denies", [nonbool], "x", {"flag": "yes"})
    call("a rule that yields true allows", [nonbool], "x", {"flag": True})
    call("no context (require_context false): the rule on claims denies", [own], "transfer",
         {"from_user": "user-42"}, ctx=None)
    meta_rule = ("x", "progress", eq(Sel(meta, "progressToken"), Lit(1)))
    call("_meta is read as `meta`", [meta_rule], "x", {})

    # Compile time: refused with the rule and the position, as cel-go's checker.
    ok = {"ok": True}
    compile_case("a rule that compiles", rule_setting("args.a == claims.end_user_id && size(tool) > 0"), ok)
    for text, col, why in [
        ("1 == 1.0", 3, "int == double between literals"),
        ("'a' < 1", 5, "string < int"),
        ("args.a == 1 && 1 < 1.5", 18, "int < double between literals (cross-type ordering is off)"),
        ("size(1) == 1", 5, "size of an int"),
        ("tool.startsWith(1)", 16, "startsWith an int"),
        ("has(tool.x)", 4, "has() on a string"),
        ("tool[0] == 'a'", 5, "indexing a string"),
        ("true ? 1 : 'a'", 6, "?: with an int and a string"),
        ("unknown == 1", 1, "an undeclared variable"),
        ("args.a + 1 == 2", 8, "arithmetic is outside the subset"),
        ("int(args.a) == 1", 1, "a function outside the subset"),
        ("args.a ==", 10, "a syntax error"),
        ("args.a == 'x", 11, "an unterminated string"),
        ("[1] == ['a']", 5, "list(int) == list(string)"),
        ("args.a", 0, "not a bool: fine, dyn"),
        ("'x'", 1, "a string rule"),
    ]:
        if col == 0:
            compile_case("compiles: " + why, rule_setting(text), ok)
        else:
            compile_case("refused: " + why, rule_setting(text),
                         {"code": "config_invalid", "rule": "r", "line": 1, "column": col})
    compile_case("refused: a rule on the second line", rule_setting("args.a == 1 &&\n  tool < 1"),
                 {"code": "config_invalid", "rule": "r", "line": 2, "column": 8})
    for name, setting in [
        ("default is required", {"rules": {}}),
        ("default must be allow or deny", {"default": "maybe", "rules": {}}),
        ("mode must be enforce or audit", {"default": "allow", "mode": "log", "rules": {}}),
        ("an unknown member", {"default": "allow", "rule": {}}),
        ("a rule without expr", {"default": "allow", "rules": {"t": [{"name": "r"}]}}),
        ("two rules with one name", {"default": "allow", "rules": {"t": [{"name": "r", "expr": "true"}],
                                                                   "u": [{"name": "r", "expr": "true"}]}}),
        ("a rule named default", {"default": "allow", "rules": {"t": [{"name": "default", "expr": "true"}]}}),
        ("a rule name with a space", {"default": "allow", "rules": {"t": [{"name": "a b", "expr": "true"}]}}),
        ("a tool pattern with a space", {"default": "allow", "rules": {"a b": [{"name": "r", "expr": "true"}]}}),
    ]:
        compile_case("refused: " + name, setting, {"code": "config_invalid"})
    return CASES


def render():
    doc = {
        "format": FORMAT,
        "description": "The policy (CONTRACT §8): rules in CEL's subset over the verified context, "
                       "the arguments and _meta, compiled at configuration and decided after the verdict.",
        "now": NOW,
        "config": CONFIG,
        "cases": generate(),
    }
    return {"policy.json": json.dumps(doc, indent=2, ensure_ascii=False) + "\n"}


if __name__ == "__main__":
    sys.exit(vectorfile.main(sys.argv, "generate_policy.py", HERE, render))
