#!/usr/bin/env python3
"""End to end: the release filter in Envoy (examples/envoy/envoy.yaml) in
front of a real MCP server (tests/envoy/upstream, @modelcontextprotocol/sdk),
with tokens minted here with hmac, independently of toolctx's own code.
With --module, the same through the dynamic module
(examples/envoy-module/envoy.yaml).

    ENVOY=... TOOLCTX_ENVOY_WASM=target/envoy/toolctx_envoy.wasm tests/envoy/e2e.py
    ENVOY=... tests/envoy/e2e.py --module

Prints `ok - ...` or `FAIL - ...` per check and closes with `N passed, N failed`.
"""

import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "e2e-current-secret-" + secrets.token_hex(16)
PREVIOUS = "e2e-previous-secret-" + secrets.token_hex(16)
UNKNOWN = "e2e-unknown-secret-" + secrets.token_hex(16)
CREDENTIAL = "Bearer e2e-" + secrets.token_hex(12)
MAX_BODY = 262144
MAPPED = {"task_id": "x-toolctx-task-id", "tool_call_id": "x-toolctx-tool-call-id",
          "workspace_id": "x-toolctx-workspace-id", "idempotency_key": "x-toolctx-idempotency-key",
          "end_user_id": "x-toolctx-end-user-id"}

results = []
MESSAGES = {}  # refusal reason -> error.message, as first answered


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(("ok - %s" % name) if ok else ("FAIL - %s: %s" % (name, detail)), flush=True)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**over):
    task, call = "task-" + secrets.token_hex(4), "call-" + secrets.token_hex(4)
    now = int(time.time())
    c = {"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 300, "jti": secrets.token_hex(8),
         "protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-7",
         "idempotency_key": task + ":" + call, "end_user_id": "user-42"}
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


def mint(payload, secret=SECRET, header=None):
    h = b64url(json.dumps(header or {"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    p = b64url(json.dumps(payload, separators=(",", ":")).encode())
    sig = hmac.new(secret.encode(), (h + "." + p).encode(), hashlib.sha256).digest()
    return h + "." + p + "." + b64url(sig)


CONTEXT_CLAIMS = ("protocol", "task_id", "tool_call_id", "workspace_id", "idempotency_key",
                  "agent_id", "end_user_id", "metadata")


def call_body(c, name="whoami", rpc_id=7, meta=None, note="hi"):
    if meta is None:
        meta = {"agentarea/" + k: c[k] for k in CONTEXT_CLAIMS if k in c}
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
                       "params": {"name": name, "arguments": {"note": note}, "_meta": meta}}).encode()


def mcp_headers(token=None, credential=CREDENTIAL, extra=()):
    h = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    if credential is not None:
        h.append(("authorization", credential))
    if token is not None:
        h.append(("x-agentarea-context", token))
    return h + list(extra)


class Upstream:
    def __init__(self, port):
        here = os.path.join(harness.HERE, "upstream")
        self.proc = harness.start(["node", os.path.join(here, "server.mjs"), str(port)], cwd=here,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("listening"):
            raise RuntimeError("upstream did not start: %r" % line)
        self.port = port

    def stats(self):
        _, _, body = harness.raw_request(self.port, "GET", "/__stats", [], b"")
        return json.loads(body)

    def count(self):
        return self.stats()["requests"]


EXAMPLES = {"filter": os.path.join(harness.ROOT, "examples", "envoy", "envoy.yaml"),
            "module": os.path.join(harness.ROOT, "examples", "envoy-module", "envoy.yaml")}


def example_json(path):
    """The toolctx configuration JSON written in an example, unindented."""
    with open(path) as f:
        text = f.read()
    block = text.split("value: |\n", 1)[1].split("\n          - name: envoy.filters.http.router", 1)[0]
    return "\n".join(line.strip() for line in block.splitlines())


def envoy_config(admin, listen, upstream, wasm):
    with open(EXAMPLES[harness.FRONT]) as f:
        text = f.read()
    swaps = [("port_value: 9901", "port_value: %d" % admin),
             ("port_value: 10000", "port_value: %d" % listen),
             ("port_value: 8080", "port_value: %d" % upstream)]
    if harness.FRONT == "filter":
        swaps.append(("/etc/envoy/toolctx_envoy.wasm", wasm))
    for old, new in swaps:
        if old not in text:
            raise RuntimeError("%s lost %r" % (EXAMPLES[harness.FRONT], old))
        text = text.replace(old, new)
    return text


def send(port, headers, body, method="POST", path="/mcp"):
    return harness.raw_request(port, method, path, headers, body)


def rpc_error(body):
    try:
        doc = json.loads(body)
        return doc.get("id", "<absent>"), doc["error"]["code"], (doc["error"].get("data") or {}).get("reason")
    except (ValueError, KeyError, TypeError):
        return None


def tool_result(body):
    """The whoami tool's report from an MCP response (JSON or SSE framing)."""
    text = body.decode("utf-8", "replace")
    m = re.search(r"^data: (.*)$", text, re.M)
    doc = json.loads(m.group(1) if m else text)
    return json.loads(doc["result"]["content"][0]["text"])


def slow_body_is_held(port, upstream):
    """A valid call sent slowly in chunks: the headers are held until the
    body is judged, then everything goes up. 1 when it was accepted."""
    c = claims()
    body_bytes = call_body(c, note="x" * 3000)
    pieces = [body_bytes[i:i + 700] for i in range(0, len(body_bytes), 700)]
    held, before = {}, upstream.count()

    def hold():
        time.sleep(0.3)
        held["count"] = upstream.count()
    status, _, body = chunked(port, mcp_headers(mint(c)), pieces, pause=0.02, hold=hold)
    check("headers are held until the body is judged (chunked, slow body)",
          held.get("count") == before and status == 200 and upstream.count() == before + 1,
          (held, status, body[:200]))
    return int(status == 200)


def chunked_over_limit_refused(port, upstream, c, refused):
    """A call over max_body_bytes sent in chunks: refused with the core's
    413 as it grows (counted in `refused`), the upstream saw nothing."""
    before = upstream.count()
    big = call_body(c, note="y" * (MAX_BODY + 10))
    status, _, reply = chunked(port, mcp_headers(mint(c)), [big[i:i + 65536] for i in range(0, len(big), 65536)])
    refused["body_too_large"] += 1
    check("chunked body over max_body_bytes refused with the core's 413, upstream saw nothing",
          status == 413 and rpc_error(reply) == (None, -32600, "body_too_large") and upstream.count() == before,
          (status, reply[:200]))


def chunked(port, headers, pieces, pause=0.0, hold=None):
    """Sends the body in chunked encoding, piece by piece; `hold` runs after
    the headers went out and before any body byte."""
    lines = ["POST /mcp HTTP/1.1", "host: 127.0.0.1:%d" % port, "transfer-encoding: chunked", "connection: close"]
    lines += ["%s: %s" % h for h in headers]
    with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        if hold:
            hold()
        for p in pieces:
            s.sendall(b"%x\r\n%s\r\n" % (len(p), p))
            time.sleep(pause)
        s.sendall(b"0\r\n\r\n")
        r = http.client.HTTPResponse(s, method="POST")
        r.begin()
        return r.status, r.getheaders(), r.read()


def refusal_cases(good, now):
    """Every refusal class the AgentArea profile has, as (reason, status,
    code, id, headers, body), for a gateway with MAPPED, MAX_BODY and the
    credential (the filter here, the ext_authz service in tests/ext-authz)."""
    return [
        ("credential_missing", 401, -32001, None, mcp_headers(mint(good), credential=None), call_body(good)),
        ("credential_invalid", 401, -32001, None, mcp_headers(mint(good), credential="Bearer nope"), call_body(good)),
        ("credential_invalid", 401, -32001, None,
         mcp_headers(mint(good), extra=[("authorization", CREDENTIAL)]), call_body(good)),
        ("body_too_large", 413, -32600, None, mcp_headers(mint(good)), call_body(good, note="x" * MAX_BODY)),
        ("parse_error", 400, -32700, None, mcp_headers(mint(good)), b'{"jsonrpc":'),
        ("duplicate_member", 400, -32600, None, mcp_headers(mint(good)),
         b'{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"whoami"}}'),
        ("batch_with_tools_call", 400, -32600, None, mcp_headers(mint(good)), b"[" + call_body(good) + b"]"),
        ("invalid_params", 400, -32602, 7, mcp_headers(mint(good)),
         b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}'),
        ("header_mismatch", 400, -32020, 7, mcp_headers(mint(good), extra=[("mcp-name", "other")]), call_body(good)),
        ("token_missing", 401, -32001, 7, mcp_headers(None), call_body(good)),
        ("token_duplicated", 401, -32001, 7, mcp_headers(mint(good), extra=[("x-agentarea-context", mint(good))]),
         call_body(good)),
        ("token_malformed", 401, -32001, 7, mcp_headers("not-a-token"), call_body(good)),
        ("alg_not_allowed", 401, -32001, 7, mcp_headers(mint(good, header={"alg": "none"})), call_body(good)),
        ("signature_invalid", 401, -32001, 7, mcp_headers(mint(good, UNKNOWN)), call_body(good)),
        ("audience_invalid", 401, -32001, 7, mcp_headers(mint(claims(aud="other"))), call_body(good)),
        ("token_expired", 401, -32001, 7, mcp_headers(mint(claims(iat=now - 400, exp=now - 100))), call_body(good)),
        ("context_malformed", 400, -32602, 7, mcp_headers(mint(claims(idempotency_key="x:y"))), call_body(good)),
        ("tool_mismatch", 403, -32003, 7, mcp_headers(mint(claims(tool="other"))), call_body(good)),
        ("meta_mismatch", 403, -32003, 7, mcp_headers(mint(good)),
         call_body(good, meta={"agentarea/task_id": "someone-else"})),
        ("meta_missing", 403, -32003, 7, mcp_headers(mint(good)), call_body(good, meta={})),
    ]


def forwarding_checks(port, upstream, tokens):
    """What a gateway in front of the MCP server forwards (the filter here,
    the ext_authz service in tests/ext-authz/e2e.py): requests that are not
    tools/call untouched, accepted calls with their mapped and Tuix headers,
    every spoofed copy of those removed, both secrets of a rotation. Sends
    to the gateway on `port`; `tokens` collects the tokens sent (the log
    checks look for them). Returns how many calls were accepted."""
    accepted = 0
    # Not tools/call: passes untouched, and the body is the server's business.
    n0 = upstream.count()
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    status, _, body = send(port, mcp_headers(), init)
    check("tools/list passes to the MCP server", status == 200 and b"whoami" in body
          and upstream.count() == n0 + 1, (status, body[:200]))
    status, _, _ = send(port, [("accept", "application/json")], b"", method="GET")
    check("GET passes without a body or token", upstream.count() == n0 + 2, status)

    # Accepted: the tool runs and sees the verified context as headers.
    c = claims()
    tok = mint(c)
    tokens.append(tok)
    status, _, body = send(port, mcp_headers(tok), call_body(c))
    ok = status == 200
    report = tool_result(body) if ok else {}
    accepted += ok
    want = {MAPPED[k]: c[k] for k in MAPPED}
    check("valid tools/call reaches the tool with mapped headers",
          ok and report.get("headers") == want and report.get("note") == "hi", (status, body[:300]))

    # A caller cannot spoof a mapped header, in any case or count.
    c = claims()
    tok = mint(c)
    spoof = [("x-toolctx-task-id", "evil"), ("X-Toolctx-Task-Id", "evil2"), ("x-toolctx-workspace-id", "evil")]
    status, _, body = send(port, mcp_headers(tok, extra=spoof), call_body(c))
    report = tool_result(body) if status == 200 else {}
    accepted += status == 200
    check("spoofed mapped headers are removed",
          report.get("headers", {}).get("x-toolctx-task-id") == c["task_id"]
          and report.get("headers", {}).get("x-toolctx-workspace-id") == "ws-7", (status, body[:300]))
    n = upstream.count()
    send(port, mcp_headers(extra=[("x-toolctx-task-id", "evil"), ("x-toolctx-task-id", "evil2")]), init)
    last = upstream.stats()
    check("spoofed mapped header removed on a passing request too",
          last["requests"] == n + 1 and last["last"] == {}, last["last"])

    # Tuix: verified _meta members forwarded as headers (meta_headers),
    # spoofed ones removed first.
    c = claims()
    meta = {"agentarea/" + k: c[k] for k in CONTEXT_CLAIMS if k in c}
    meta.update(sessionId="sess-1 \u00fc", idempotencyKey="idem-" + c["tool_call_id"])
    spoof = [("x-session-id", "evil"), ("X-Idempotency-Key", "evil")]
    status, _, body = send(port, mcp_headers(mint(c), extra=spoof), call_body(c, meta=meta))
    report = tool_result(body) if status == 200 else {}
    accepted += status == 200
    check("_meta sessionId and idempotencyKey forwarded as X-Session-Id and X-Idempotency-Key",
          report.get("meta") == {"x-session-id": "sess-1%20%C3%BC", "x-idempotency-key": meta["idempotencyKey"]},
          (status, body[:300]))
    c = claims()
    status, _, body = send(port, mcp_headers(mint(c), extra=spoof), call_body(c))
    report = tool_result(body) if status == 200 else {}
    accepted += status == 200
    check("spoofed X-Session-Id/X-Idempotency-Key removed when _meta has none",
          status == 200 and report.get("meta") == {}, (status, body[:300]))
    n = upstream.count()
    send(port, mcp_headers(extra=spoof), init)
    last = upstream.stats()
    check("spoofed X-Session-Id removed on a passing request too",
          last["requests"] == n + 1 and last["lastMeta"] == {}, last["lastMeta"])

    # Rotation: current and previous secret both verify, others do not.
    c = claims()
    status, _, body = send(port, mcp_headers(mint(c, PREVIOUS)), call_body(c))
    accepted += status == 200
    check("rotation: a token signed with the previous secret is accepted",
          status == 200 and tool_result(body)["headers"].get("x-toolctx-task-id") == c["task_id"], status)
    return accepted


def main():
    wasm = harness.artifact()
    # Switching from the filter to the module changes one stanza: the
    # configuration JSON of the two examples is the same text.
    check("examples/envoy and examples/envoy-module hold the same toolctx configuration",
          example_json(EXAMPLES["filter"]) == example_json(EXAMPLES["module"]))
    admin, listen, up_port, bad_admin, bad_listen = harness.free_ports(5)
    upstream = Upstream(up_port)
    env = {"TOOLCTX_SECRET": SECRET, "TOOLCTX_SECRET_PREVIOUS": PREVIOUS, "TOOLCTX_CREDENTIAL": CREDENTIAL}
    envoy = harness.Envoy(envoy_config(admin, listen, up_port, wasm), env=env, concurrency=2)
    envoy.start(admin)
    sent_tokens = []
    accepted = 0
    refused = {}
    try:
        accepted += forwarding_checks(listen, upstream, sent_tokens)

        accepted += slow_body_is_held(listen, upstream)

        # Every refusal class: the right answer, and the upstream sees nothing.
        now = int(time.time())
        good = claims()
        cases = refusal_cases(good, now)
        for reason, status_want, code, rpc_id, headers, body in cases:
            before = upstream.count()
            status, rh, reply = send(listen, headers, body)
            err = rpc_error(reply)
            ctype = dict(rh).get("content-type", "")
            refused[reason] = refused.get(reason, 0) + 1
            MESSAGES[reason] = json.loads(reply)["error"]["message"] if err else None
            check("refused %s: %d JSON-RPC %d, upstream saw nothing" % (reason, status_want, code),
                  status == status_want and err == (rpc_id, code, reason) and ctype == "application/json"
                  and upstream.count() == before, (status, reply[:200], upstream.count() - before))
        # An over-limit body that arrives in chunks is refused as it grows.
        chunked_over_limit_refused(listen, upstream, good, refused)

        # Counters: Envoy's /stats and /stats/prometheus.
        counters = envoy.counters()
        check("counter toolctx.accepted counts the accepted calls",
              counters.get("toolctx.accepted") == accepted, (accepted, counters))
        wrong = {r: (n, counters.get("toolctx.refused." + r)) for r, n in refused.items()
                 if counters.get("toolctx.refused." + r) != n}
        check("counters toolctx.refused.<reason> count each refusal", not wrong, wrong)
        check("counter toolctx.passed counts passing requests", counters.get("toolctx.passed", 0) >= 3,
              counters.get("toolctx.passed"))
        prom = envoy.get("/stats/prometheus")
        pp = harness.PROMETHEUS_PREFIX[harness.FRONT]
        check("counters in /stats/prometheus (%stoolctx_*)" % pp,
              re.search(r"^%stoolctx_accepted\{?.*\}? %d$" % (pp, accepted), prom, re.M)
              and pp + "toolctx_refused_signature_invalid" in prom, [l for l in prom.splitlines() if "toolctx" in l][:5])

        # Nothing secret in the admin config dump, nor in the log.
        dump = envoy.get("/config_dump")
        check("/config_dump holds no secret or credential",
              all(s not in dump for s in (SECRET, PREVIOUS, CREDENTIAL)) and "TOOLCTX_SECRET" in dump)
        time.sleep(0.2)
        log = open(envoy.log_path).read()
        lines = [l for l in log.splitlines() if "toolctx: refused" in l]
        check("one log line per refusal with reason and request id",
              len(lines) == sum(refused.values()) and all(re.search(r"refused \w+ status=\d+ request_id=[0-9a-f-]{36}", l)
                                                          for l in lines), (len(lines), sum(refused.values()), lines[:2]))
        leaked = [s for s in [SECRET, PREVIOUS, CREDENTIAL] + sent_tokens if s in log]
        check("the log holds no token, secret or credential", not leaked, len(leaked))
    finally:
        envoy.stop()

    # A bad configuration fails closed: Envoy refuses to start on it.
    for what, change, env2, expect in [
        ("inline secrets", ('"secret_env": ["TOOLCTX_SECRET", "TOOLCTX_SECRET_PREVIOUS"]', '"secrets": ["%s"]' % SECRET),
         env, "inline `secrets` are refused"),
        ("secret variable unset", None, {"TOOLCTX_CREDENTIAL": CREDENTIAL}, "none of the environment variables"),
        ("secret too short", None, dict(env, TOOLCTX_SECRET="short", TOOLCTX_SECRET_PREVIOUS=""), "secrets must be 32"),
    ]:
        text = envoy_config(bad_admin, bad_listen, up_port, wasm)
        if change:
            text = text.replace(*change)
        bad = harness.Envoy(text, env={k: env2.get(k, "") for k in env})
        started = harness.starts(bad, bad_admin)
        log = bad.tail(200)
        check("bad configuration (%s) stops Envoy with a clear log line" % what,
              not started and expect in log and SECRET not in log, log[-600:])
    # Without allow_on_headers_stop_iteration Envoy never delivers the body to
    # a filter that holds the headers: the filter notices and answers 500
    # instead of letting the request hang, and the upstream sees nothing.
    # (The module has no such setting: Envoy hands it the body anyway.)
    if harness.FRONT == "filter":
        flagless_check(bad_admin, bad_listen, up_port, wasm, env, upstream)
    # include_reason false: the same status, code and message, no error.data.
    text = envoy_config(bad_admin, bad_listen, up_port, wasm).replace(
        '"include_reason": true', '"include_reason": false')
    quiet = harness.Envoy(text, env=env)
    try:
        quiet.start(bad_admin)
        c = claims()
        status, _, reply = send(bad_listen, mcp_headers(mint(c, UNKNOWN)), call_body(c))
        doc = json.loads(reply)
        check("include_reason false leaves error.data out",
              status == 401 and doc["error"]["code"] == -32001 and doc["id"] == 7 and "data" not in doc["error"]
              and doc["error"]["message"] == MESSAGES.get("signature_invalid"), reply[:200])
    finally:
        quiet.stop()
    if harness.FRONT == "module":
        struct_config_check(bad_admin, bad_listen, up_port, env, upstream)
    upstream_proc = upstream.proc
    harness.stop(upstream_proc)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


def struct_config_check(admin, listen, up_port, env, upstream):
    """The module's configuration as a google.protobuf.Struct (what Envoy
    Gateway's EnvoyExtensionPolicy writes) instead of a StringValue: Envoy
    hands it over as JSON, numbers included, and the module reads it."""
    text = envoy_config(admin, listen, up_port, None)
    block = text.split("value: |\n", 1)[1].split("\n          - name: envoy.filters.http.router", 1)[0]
    doc = json.loads(block)
    stanza = harness.module_filter(harness.artifact(), doc)
    stanza["typed_config"]["filter_config"] = {"@type": "type.googleapis.com/google.protobuf.Struct",
                                               "value": doc}
    boot = harness.bootstrap(admin, [harness.listener("struct", listen, [stanza])], up_port)
    envoy = harness.Envoy(boot, env=env)
    try:
        envoy.start(admin)
        c = claims()
        status, _, body = send(listen, mcp_headers(mint(c)), call_body(c))
        got = tool_result(body)["headers"] if status == 200 else {}
        c2 = claims()
        bad, _, _ = send(listen, mcp_headers(mint(c2, UNKNOWN)), call_body(c2))
        check("module: the configuration as a google.protobuf.Struct verifies and forwards the same",
              status == 200 and got.get("x-toolctx-task-id") == c["task_id"] and bad == 401, (status, bad, got))
    finally:
        envoy.stop()


def flagless_check(bad_admin, bad_listen, up_port, wasm, env, upstream):
    text = envoy_config(bad_admin, bad_listen, up_port, wasm).replace(
        "allow_on_headers_stop_iteration: true", "allow_on_headers_stop_iteration: false")
    flagless = harness.Envoy(text, env=env)
    try:
        flagless.start(bad_admin)
        # A body the filter did not hold proves nothing about the setting.
        send(bad_listen, [("content-type", "application/json")], b"{}", method="PUT")
        before = upstream.count()
        c = claims()
        status, _, reply = send(bad_listen, mcp_headers(mint(c)), call_body(c))
        time.sleep(0.1)
        check("without allow_on_headers_stop_iteration: 500, a log line naming it, upstream saw nothing",
              status == 500 and rpc_error(reply) == (None, -32603, "internal_error") and upstream.count() == before
              and "allow_on_headers_stop_iteration: true" in flagless.tail(), (status, reply[:200]))
    finally:
        flagless.stop()


if __name__ == "__main__":
    sys.exit(main())
