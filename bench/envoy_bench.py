#!/usr/bin/env python3
"""Envoy benchmark driver, run by bench/envoy.sh (not a test).

Scenarios, each driven by wrk on 127.0.0.1 with the same valid ~1 KB
`tools/call` and the same HS256 token:
  upstream direct        wrk -> upstream
  envoy plain            wrk -> envoy (router only) -> upstream
  envoy + toolctx        ... toolctx verifies token and body
  envoy + jwt_authn      ... built-in jwt_authn verifies the token only
  envoy + jwt_authn (cache)
The upstream is a second Envoy answering 200 from a direct_response, so the
upstream's own cost stays small and equal for all scenarios.

The machine is small and shared, so the scenarios run in BENCH_ROUNDS
interleaved rounds and each is reported from its least disturbed round (the
one with the most requests/s); every round's requests/s is printed too.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "envoy"))
import harness  # noqa: E402

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "bench-secret-" + secrets.token_hex(24)
DURATION = os.environ.get("BENCH_DURATION", "5s")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
WARMUP = os.environ.get("BENCH_WARMUP", "2s")
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "16"))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token_and_body():
    now = int(time.time())
    task, call = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", "call_01HZX3"
    c = {"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 300, "jti": secrets.token_hex(8),
         "protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-7",
         "idempotency_key": task + ":" + call, "agent_id": "agent-3", "end_user_id": "user-42"}
    h = b64url(b'{"alg":"HS256","typ":"JWT"}')
    p = b64url(json.dumps(c, separators=(",", ":")).encode())
    sig = hmac.new(SECRET.encode(), (h + "." + p).encode(), hashlib.sha256).digest()
    token = h + "." + p + "." + b64url(sig)
    meta = {"agentarea/" + k: c[k] for k in ("protocol", "task_id", "tool_call_id", "workspace_id",
                                             "idempotency_key", "agent_id", "end_user_id")}
    doc = {"jsonrpc": "2.0", "id": 42, "method": "tools/call",
           "params": {"name": "search_documents", "arguments": {"query": ""}, "_meta": meta}}
    base = len(json.dumps(doc, separators=(",", ":")))
    doc["params"]["arguments"]["query"] = "q" * max(0, 1024 - base)
    return token, json.dumps(doc, separators=(",", ":"))


def upstream_config(admin, port):
    return {
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": admin}}},
        "static_resources": {"listeners": [{
            "name": "upstream",
            "address": {"socket_address": {"address": "127.0.0.1", "port_value": port}},
            "filter_chains": [{"filters": [{
                "name": "envoy.filters.network.http_connection_manager",
                "typed_config": {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                    "stat_prefix": "upstream",
                    "route_config": {"virtual_hosts": [{"name": "all", "domains": ["*"], "routes": [{
                        "match": {"prefix": "/"},
                        "direct_response": {"status": 200, "body": {"inline_string": '{"jsonrpc":"2.0","id":42,"result":{}}'}},
                    }]}]},
                    "http_filters": [{"name": "envoy.filters.http.router", "typed_config": {
                        "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}],
                }}]}],
        }]},
    }


def jwt_filter(cache):
    provider = {
        "issuer": "agentarea",
        "audiences": [INSTANCE],
        "from_headers": [{"name": "X-AgentArea-Context"}],
        "local_jwks": {"inline_string": json.dumps(
            {"keys": [{"kty": "oct", "alg": "HS256", "k": b64url(SECRET.encode())}]})},
        "forward": True,
    }
    if cache:
        provider["jwt_cache_config"] = {"jwt_cache_size": 100}
    return {
        "name": "envoy.filters.http.jwt_authn",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication",
            "providers": {"agentarea": provider},
            "rules": [{"match": {"prefix": "/"}, "requires": {"provider_name": "agentarea"}}],
        },
    }


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(port, token, body, duration, script_dir, envoy_pid=None):
    lua = os.path.join(script_dir, "post.lua")
    with open(lua, "w") as f:
        f.write('wrk.method = "POST"\n')
        f.write("wrk.body = %s\n" % json.dumps(body))
        f.write('wrk.headers["content-type"] = "application/json"\n')
        f.write('wrk.headers["accept"] = "application/json, text/event-stream"\n')
        f.write('wrk.headers["x-agentarea-context"] = "%s"\n' % token)
    cpu0 = cpu_seconds(envoy_pid) if envoy_pid else 0.0
    out = subprocess.run(["wrk", "-t", "1", "-c", str(CONNECTIONS), "-d", duration, "--latency", "-s", lua,
                          "http://127.0.0.1:%d/mcp" % port], capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(envoy_pid) - cpu0 if envoy_pid else 0.0
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))

    def pct(p):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % p, out, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v

    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "non2xx": int(bad.group(1)) if bad else 0,
            "cpu_us": cpu * 1e6 / total if total else 0.0,
            "socket_errors": errors.group(0) if errors else ""}


def main():
    wasm = os.environ.get("TOOLCTX_ENVOY_WASM") or os.path.join(harness.ROOT, "target", "envoy", "toolctx_envoy.wasm")
    work = tempfile.mkdtemp(prefix="toolctx-bench-")
    up_admin, up_port, admin, plain, toolctx, jwt, jwt_cache = harness.free_ports(7)
    upstream = harness.Envoy(upstream_config(up_admin, up_port)).start(up_admin)
    plugin = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
              "headers": {"task_id": "x-toolctx-task-id", "idempotency_key": "x-toolctx-idempotency-key"}}
    listeners = [
        harness.listener("plain", plain, []),
        harness.listener("toolctx", toolctx, [harness.wasm_filter(wasm, plugin, ["TOOLCTX_SECRET"])]),
        harness.listener("jwt", jwt, [jwt_filter(False)]),
        harness.listener("jwt_cache", jwt_cache, [jwt_filter(True)]),
    ]
    front = harness.Envoy(harness.bootstrap(admin, listeners, up_port), env={"TOOLCTX_SECRET": SECRET})
    front.start(admin)
    token, body = token_and_body()
    # Each path must answer 200 before it is measured.
    for port in (up_port, plain, toolctx, jwt, jwt_cache):
        status, _, reply = harness.raw_request(port, "POST", "/mcp", [("content-type", "application/json"),
                                                                      ("x-agentarea-context", token)], body.encode())
        if status != 200:
            sys.exit("port %d answered %d: %s" % (port, status, reply[:200]))
    scenarios = [("upstream direct", up_port), ("envoy plain", plain), ("envoy + toolctx", toolctx),
                 ("envoy + jwt_authn (no cache)", jwt), ("envoy + jwt_authn (cache)", jwt_cache)]
    rounds = {name: [] for name, _ in scenarios}
    print("body %d bytes, token %d bytes, %d connections, wrk -t1, %d round(s) of %s per scenario, %s warm-up"
          % (len(body), len(token), CONNECTIONS, ROUNDS, DURATION, WARMUP), flush=True)
    for name, port in scenarios:
        wrk(port, token, body, WARMUP, work)
    for i in range(ROUNDS):
        order = scenarios if i % 2 == 0 else scenarios[::-1]
        for name, port in order:
            # The front Envoy's CPU per request is steadier on a busy machine
            # than requests/s (for "upstream direct" it is idle: 0).
            rounds[name].append(wrk(port, token, body, DURATION, work, front.proc.pid))
    results = {}
    print("%-30s %12s %10s %10s %14s   %s" % ("scenario", "requests/s", "p50 ms", "p99 ms", "envoy CPU us/rq",
                                              "requests/s per round"))
    for name, _ in scenarios:
        r = max(rounds[name], key=lambda x: x["rps"])
        results[name] = r
        bad = [x for x in rounds[name] if x["non2xx"] or x["socket_errors"]]
        note = "" if not bad else "  (errors: %s)" % ["%d non-2xx %s" % (x["non2xx"], x["socket_errors"]) for x in bad]
        cpu = min(x["cpu_us"] for x in rounds[name])
        print("%-30s %12.0f %10.3f %10.3f %14.1f   %s%s" % (name, r["rps"], r["p50"], r["p99"], cpu,
                                                          " ".join("%.0f" % x["rps"] for x in rounds[name]), note))
    counters = front.counters()
    t, j, p = results["envoy + toolctx"], results["envoy + jwt_authn (no cache)"], results["envoy plain"]
    print("toolctx / jwt_authn (no cache) requests/s: %.2f" % (t["rps"] / j["rps"]))
    print("toolctx p99 over plain Envoy: %+.3f ms" % (t["p99"] - p["p99"]))
    cpu = {name: min(x["cpu_us"] for x in rounds[name]) for name in rounds}
    print("front Envoy CPU per request over plain: toolctx %+.1f us, jwt_authn (no cache) %+.1f us, "
          "jwt_authn (cache) %+.1f us" % (cpu["envoy + toolctx"] - cpu["envoy plain"],
                                          cpu["envoy + jwt_authn (no cache)"] - cpu["envoy plain"],
                                          cpu["envoy + jwt_authn (cache)"] - cpu["envoy plain"]))
    print("toolctx counters: accepted %s, refused %s" % (
        counters.get("wasmcustom.toolctx.accepted"),
        sum(v for k, v in counters.items() if ".refused." in k)))
    front.stop()
    upstream.stop()


if __name__ == "__main__":
    main()
