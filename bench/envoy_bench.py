#!/usr/bin/env python3
"""Envoy benchmark driver, run by bench/envoy.sh (not a test).

    bench/envoy.sh            requests/s, p50/p99 and Envoy CPU per request
    bench/envoy.sh profile    the filter's phase timings and host calls
    bench/envoy.sh perf       where Envoy's time goes with the dynamic module
                              (perf record on one worker, accepted calls)

Every scenario sends the same ~1 KB `tools/call` with the same HS256 token
(or, where named, the same call with a bad signature, or a `tools/list`),
from wrk over HTTP/1.1 or h2load over HTTP/2 (h2c), 16 connections, on
127.0.0.1. The upstream is a second Envoy answering 200 from a
direct_response once it has read the body, so its cost stays small and
equal for all scenarios and its connections are kept alive.

Sets (BENCH_SETS, comma-separated, default all):
  h1        upstream direct, envoy plain, toolctx (V8), the toolctx dynamic
            module, jwt_authn without and with its cache; refused calls (bad
            signature) through toolctx, the module and jwt_authn; a
            pass-through request (tools/list) through toolctx and the module
  runtimes  toolctx on Envoy's wasmtime and WAMR runtimes (V8 is in h1)
  h2        envoy plain, toolctx, the module and jwt_authn over HTTP/2
The machine is small and shared: every scenario runs once per round, in
BENCH_ROUNDS (3) interleaved rounds; ratios are taken within a round, then
the median over the rounds is reported with every round's figure.
BENCH_DURATION (5s per scenario and round), BENCH_WARMUP (2s; 0 skips the
warm-up), BENCH_CONNECTIONS (16). BENCH_BASELINE_WASM=path adds "envoy + toolctx
(baseline)": another build of the filter, side by side with this one;
BENCH_BASELINE_MODULE=path (lib<name>.so beside the module) adds another
build of the module to `profile`.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "envoy"))
import harness  # noqa: E402

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "bench-secret-" + secrets.token_hex(24)
DURATION = os.environ.get("BENCH_DURATION", "5s")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
WARMUP = os.environ.get("BENCH_WARMUP", "2s")
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
SETS = set(os.environ.get("BENCH_SETS", "h1,runtimes,h2").split(","))
RUNTIMES = {"v8": "envoy.wasm.runtime.v8", "wasmtime": "envoy.wasm.runtime.wasmtime",
            "wamr": "envoy.wasm.runtime.wamr"}
PLUGIN = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
          "headers": {"task_id": "x-toolctx-task-id", "idempotency_key": "x-toolctx-idempotency-key"}}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def requests():
    """The three requests: kind -> (headers, body, expected status)."""
    now = int(time.time())
    task, call = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", "call_01HZX3"
    c = {"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 3000, "jti": secrets.token_hex(8),
         "protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-7",
         "idempotency_key": task + ":" + call, "agent_id": "agent-3", "end_user_id": "user-42"}
    h = b64url(b'{"alg":"HS256","typ":"JWT"}')
    p = b64url(json.dumps(c, separators=(",", ":")).encode())
    sig = hmac.new(SECRET.encode(), (h + "." + p).encode(), hashlib.sha256).digest()
    token = h + "." + p + "." + b64url(sig)
    # Another valid signature's bytes: canonical base64url, wrong MAC.
    bad = h + "." + p + "." + b64url(bytes(b ^ 0x5A for b in sig))
    meta = {"agentarea/" + k: c[k] for k in ("protocol", "task_id", "tool_call_id", "workspace_id",
                                             "idempotency_key", "agent_id", "end_user_id")}
    doc = {"jsonrpc": "2.0", "id": 42, "method": "tools/call",
           "params": {"name": "search_documents", "arguments": {"query": ""}, "_meta": meta}}
    base = len(json.dumps(doc, separators=(",", ":")))
    doc["params"]["arguments"]["query"] = "q" * max(0, 1024 - base)
    body = json.dumps(doc, separators=(",", ":"))
    listing = json.dumps({"jsonrpc": "2.0", "id": 43, "method": "tools/list", "params": {}})
    common = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    return {
        "call": (common + [("x-agentarea-context", token)], body, 200),
        "badsig": (common + [("x-agentarea-context", bad)], body, 401),
        "list": (common + [("x-agentarea-context", token)], listing, 200),
    }


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
                    # The whole body is read before the direct response, as
                    # a real server would: else Envoy answers at the headers
                    # and closes the connection, and every request of every
                    # scenario pays for a new upstream connection.
                    "http_filters": [
                        {"name": "envoy.filters.http.buffer", "typed_config": {
                            "@type": "type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer",
                            "max_request_bytes": 1 << 20}},
                        {"name": "envoy.filters.http.router", "typed_config": {
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


def toolctx_filter(wasm, runtime):
    f = harness.wasm_filter(wasm, PLUGIN, ["TOOLCTX_SECRET"])
    vm = f["typed_config"]["config"]["vm_config"]
    vm["runtime"] = RUNTIMES[runtime]
    vm["vm_id"] = "toolctx-" + runtime
    return f


MODULE = os.environ.get("TOOLCTX_ENVOY_MODULE") or os.path.join(harness.ROOT, "target", "envoy",
                                                                 "libtoolctx_envoy_module.so")


def module_filter(path=MODULE, filter_name="toolctx"):
    return harness.module_filter(path, PLUGIN, filter_name)


def front_env(module=MODULE):
    """The front Envoy's environment: the secret, and where the module is."""
    return {"TOOLCTX_SECRET": SECRET,
            "ENVOY_DYNAMIC_MODULES_SEARCH_PATH": os.path.dirname(os.path.abspath(module))}


def warming():
    """Whether the scenarios get a warm-up run (BENCH_WARMUP=0: none, for a
    smoke run that only proves the benchmark still runs)."""
    return WARMUP not in ("0", "0s")


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ms(value, unit):
    v = float(value)
    return {"us": v / 1000, "ms": v, "s": v * 1000}[unit]


def wrk(port, req, duration, work):
    headers, body, _ = req
    lua = os.path.join(work, "post-%d.lua" % abs(hash(body)))
    with open(lua, "w") as f:
        f.write('wrk.method = "POST"\n')
        f.write("wrk.body = %s\n" % json.dumps(body))
        for n, v in headers:
            f.write('wrk.headers["%s"] = "%s"\n' % (n, v))
    out = subprocess.run(["wrk", "-t", "1", "-c", str(CONNECTIONS), "-d", duration, "--latency", "-s", lua,
                          "http://127.0.0.1:%d/mcp" % port], capture_output=True, text=True, check=True).stdout

    def pct(p):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % p, out, re.M)
        return ms(m.group(1), m.group(2))

    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "total": int(re.search(r"(\d+) requests in", out).group(1)),
            "p50": pct(50), "p99": pct(99), "non2xx": int(bad.group(1)) if bad else 0,
            "errors": errors.group(0) if errors else ""}


def h2load(port, req, duration, work):
    headers, body, _ = req
    data = os.path.join(work, "body-%d.json" % abs(hash(body)))
    with open(data, "w") as f:
        f.write(body)
    argv = ["h2load", "-t", "1", "-c", str(CONNECTIONS), "-m", "1", "-D", duration.rstrip("s"), "-d", data]
    for n, v in headers:
        argv += ["-H", "%s: %s" % (n, v)]
    out = subprocess.run(argv + ["http://127.0.0.1:%d/mcp" % port], capture_output=True, text=True,
                         check=True).stdout
    done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                     out)
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    mean = re.search(r"time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)", out)
    return {"rps": float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", out).group(1)),
            "total": int(done.group(1)), "mean": ms(mean.group(1), mean.group(2)), "p50": None, "p99": None,
            "non2xx": int(codes.group(3)) + int(codes.group(4)),
            "errors": "" if done.group(4) == "0" else "%s errored" % done.group(4)}


def measure(scenario, duration, work, pid):
    name, port, client, kind = scenario
    cpu0 = cpu_seconds(pid) if pid else 0.0
    r = (wrk if client == "h1" else h2load)(port, REQS[kind], duration, work)
    cpu = cpu_seconds(pid) - cpu0 if pid else 0.0
    r["cpu_us"] = cpu * 1e6 / r["total"] if r["total"] else 0.0
    want_refused = REQS[kind][2] != 200
    r["wrong"] = (r["non2xx"] != (r["total"] if want_refused else 0)) or bool(r["errors"])
    return r


REQS = {}


def scenarios(ports, wasm):
    """(name, port, client, request kind) and the front Envoy's listeners."""
    out, listeners = [], []

    def add(name, filters, runs):
        port = ports.pop()
        listeners.append(harness.listener(name.replace(" ", "_"), port, filters))
        for label, client, kind in runs:
            out.append((label, port, client, kind))
        return port

    if "h1" in SETS or "h2" in SETS:
        add("plain", [], [r for r in [("envoy plain", "h1", "call"), ("h2 envoy plain", "h2", "call")]
                          if r[1] in SETS])
    if "h1" in SETS or "h2" in SETS:
        add("toolctx", [toolctx_filter(wasm, "v8")],
            [r for r in [("envoy + toolctx", "h1", "call"), ("toolctx refused (bad signature)", "h1", "badsig"),
                         ("toolctx pass-through (tools/list)", "h1", "list"),
                         ("h2 envoy + toolctx", "h2", "call")] if r[1] in SETS])
        add("module", [module_filter()],
            [r for r in [("envoy + toolctx module", "h1", "call"),
                         ("toolctx module refused (bad signature)", "h1", "badsig"),
                         ("toolctx module pass-through (tools/list)", "h1", "list"),
                         ("h2 envoy + toolctx module", "h2", "call")] if r[1] in SETS])
        add("jwt", [jwt_filter(False)],
            [r for r in [("envoy + jwt_authn (no cache)", "h1", "call"),
                         ("jwt_authn refused (bad signature)", "h1", "badsig"),
                         ("h2 envoy + jwt_authn (no cache)", "h2", "call")] if r[1] in SETS])
    if "h1" in SETS:
        add("jwt_cache", [jwt_filter(True)], [("envoy + jwt_authn (cache)", "h1", "call")])
    if os.environ.get("BENCH_BASELINE_WASM"):
        f = toolctx_filter(os.environ["BENCH_BASELINE_WASM"], "v8")
        f["typed_config"]["config"]["vm_config"]["vm_id"] = "toolctx-baseline"
        add("baseline", [f], [("envoy + toolctx (baseline)", "h1", "call")])
    if "runtimes" in SETS:
        for rt in OTHER_RUNTIMES:
            add("toolctx " + rt, [toolctx_filter(wasm, rt)], [("envoy + toolctx (%s)" % rt, "h1", "call")])
    return out, listeners


def runtime_available(wasm, rt):
    """Whether this Envoy has runtime `rt` compiled in: it says so at load."""
    admin, port, up = harness.free_ports(3)
    probe = harness.Envoy(harness.bootstrap(admin, [harness.listener("probe", port, [toolctx_filter(wasm, rt)])], up),
                          env={"TOOLCTX_SECRET": SECRET})
    if harness.starts(probe, admin):
        return True
    print("%s: not run: %s" % (RUNTIMES[rt], "; ".join(
        line.split("] ", 1)[-1].split("] ", 1)[-1] for line in probe.tail().splitlines()
        if "compiled without" in line) or "Envoy does not start with it"))
    return False


OTHER_RUNTIMES = []


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def report(rows, rounds):
    print("\n%-42s %10s %8s %8s %9s %8s   %s" % ("scenario (median of rounds)", "req/s", "p50 ms", "p99 ms",
                                               "CPU us/rq", "status", "req/s per round"))
    for name in rows:
        rs = rounds[name]
        p50 = median([x["p50"] for x in rs])
        p99 = median([x["p99"] for x in rs])
        lat = ("%8.3f %8.3f" % (p50, p99)) if p99 is not None else ("%8s %8s" % ("mean", "%.3f" % median(
            [x["mean"] for x in rs])))
        bad = sum(1 for x in rs if x["wrong"])
        print("%-42s %10.0f %s %9.1f %8s   %s" % (name, median([x["rps"] for x in rs]), lat,
                                               median([x["cpu_us"] for x in rs]),
                                               "ok" if not bad else "%d WRONG" % bad,
                                               " ".join("%.0f" % x["rps"] for x in rs)))

    def per_round(label, f, fmt):
        values = []
        for i in range(ROUNDS):
            try:
                values.append(f(lambda n: rounds[n][i]))
            except KeyError:
                return
        print("%-66s %s   median %s" % (label, "  ".join(fmt % v for v in values), fmt % median(values)))

    print("\nper round (side by side in each round), then the median:")
    T, J, P = "envoy + toolctx", "envoy + jwt_authn (no cache)", "envoy plain"
    per_round("toolctx / jwt_authn (no cache) requests/s", lambda r: r(T)["rps"] / r(J)["rps"], "%.2f")
    per_round("toolctx p99 over plain Envoy, ms", lambda r: r(T)["p99"] - r(P)["p99"], "%+.2f")
    per_round("jwt_authn (no cache) p99 over plain Envoy, ms", lambda r: r(J)["p99"] - r(P)["p99"], "%+.2f")
    per_round("CPU per request over plain, toolctx, us", lambda r: r(T)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    per_round("CPU per request over plain, jwt_authn (no cache), us",
              lambda r: r(J)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    per_round("CPU per request over plain, jwt_authn (cache), us",
              lambda r: r("envoy + jwt_authn (cache)")["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    M, MR, ML = "envoy + toolctx module", "toolctx module refused (bad signature)", \
        "toolctx module pass-through (tools/list)"
    JR = "jwt_authn refused (bad signature)"
    per_round("toolctx module / jwt_authn (no cache) requests/s", lambda r: r(M)["rps"] / r(J)["rps"], "%.2f")
    # No filter can beat Envoy without one: on a small machine, where wrk and
    # the upstream share the CPUs, this is the ceiling of the line above.
    per_round("envoy plain / jwt_authn (no cache) requests/s (no filter)", lambda r: r(P)["rps"] / r(J)["rps"],
              "%.2f")
    per_round("toolctx module / toolctx (wasm) requests/s", lambda r: r(M)["rps"] / r(T)["rps"], "%.2f")
    per_round("toolctx module p99 over plain Envoy, ms", lambda r: r(M)["p99"] - r(P)["p99"], "%+.2f")
    per_round("CPU per request over plain, toolctx module, us", lambda r: r(M)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    per_round("CPU per request over plain, toolctx module / jwt_authn (no cache)",
              lambda r: (r(M)["cpu_us"] - r(P)["cpu_us"]) / (r(J)["cpu_us"] - r(P)["cpu_us"]), "%.2f")
    per_round("toolctx module refused / jwt_authn refused requests/s", lambda r: r(MR)["rps"] / r(JR)["rps"],
              "%.2f")
    per_round("CPU per request over plain, toolctx module refused, us",
              lambda r: r(MR)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    per_round("CPU per request over plain, toolctx module pass-through, us",
              lambda r: r(ML)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    R, L = "toolctx refused (bad signature)", "toolctx pass-through (tools/list)"
    per_round("toolctx refused / accepted requests/s", lambda r: r(R)["rps"] / r(T)["rps"], "%.2f")
    per_round("CPU per request over plain, toolctx refused, us", lambda r: r(R)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    per_round("CPU per request over plain, jwt_authn refused, us",
              lambda r: r("jwt_authn refused (bad signature)")["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    per_round("toolctx pass-through / accepted requests/s", lambda r: r(L)["rps"] / r(T)["rps"], "%.2f")
    per_round("CPU per request over plain, toolctx pass-through, us",
              lambda r: r(L)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    for rt in OTHER_RUNTIMES:
        n = "envoy + toolctx (%s)" % rt
        per_round("toolctx %s / V8 requests/s" % rt, lambda r: r(n)["rps"] / r(T)["rps"], "%.2f")
        per_round("CPU per request over plain, toolctx %s, us" % rt,
                  lambda r: r(n)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    B = "envoy + toolctx (baseline)"
    per_round("toolctx / baseline build requests/s", lambda r: r(T)["rps"] / r(B)["rps"], "%.2f")
    per_round("CPU per request over plain, baseline build, us", lambda r: r(B)["cpu_us"] - r(P)["cpu_us"], "%+.1f")
    HT, HJ, HP = "h2 envoy + toolctx", "h2 envoy + jwt_authn (no cache)", "h2 envoy plain"
    per_round("HTTP/2: toolctx / jwt_authn (no cache) requests/s", lambda r: r(HT)["rps"] / r(HJ)["rps"], "%.2f")
    per_round("HTTP/2: toolctx / plain requests/s", lambda r: r(HT)["rps"] / r(HP)["rps"], "%.2f")
    HM = "h2 envoy + toolctx module"
    per_round("HTTP/2: toolctx module / jwt_authn (no cache) requests/s",
              lambda r: r(HM)["rps"] / r(HJ)["rps"], "%.2f")
    per_round("HTTP/2: CPU per request over plain, toolctx module, us",
              lambda r: r(HM)["cpu_us"] - r(HP)["cpu_us"], "%+.1f")
    per_round("HTTP/2: CPU per request over plain, toolctx, us",
              lambda r: r(HT)["cpu_us"] - r(HP)["cpu_us"], "%+.1f")
    per_round("HTTP/2: CPU per request over plain, jwt_authn, us",
              lambda r: r(HJ)["cpu_us"] - r(HP)["cpu_us"], "%+.1f")


def check_answers(runs):
    for name, port, client, kind in runs:
        headers, body, want = REQS[kind]
        status, _, reply = harness.raw_request(port, "POST", "/mcp", headers, body.encode())
        if status != want:
            sys.exit("%s (port %d) answered %d, expected %d: %s" % (name, port, status, want, reply[:200]))


def bench(wasm, work):
    ports = harness.free_ports(14)
    up_admin, up_port, admin = ports.pop(), ports.pop(), ports.pop()
    upstream = harness.Envoy(upstream_config(up_admin, up_port)).start(up_admin)
    runs, listeners = scenarios(ports, wasm)
    if "h1" in SETS:
        runs.insert(0, ("upstream direct", up_port, "h1", "call"))
    front = harness.Envoy(harness.bootstrap(admin, listeners, up_port), env=front_env())
    front.start(admin)
    check_answers(runs)
    print("body %d bytes, token %d bytes, %d connections (wrk -t1 over HTTP/1.1, h2load -t1 -m1 over h2c), "
          "%d round(s) of %s per scenario, %s warm-up" % (len(REQS["call"][1]), len(REQS["call"][0][-1][1]),
                                                         CONNECTIONS, ROUNDS, DURATION, WARMUP), flush=True)
    if warming():
        for r in runs:
            measure(r, WARMUP, work, None)
    rounds = {r[0]: [] for r in runs}
    for i in range(ROUNDS):
        for r in (runs if i % 2 == 0 else runs[::-1]):
            pid = front.proc.pid if r[0] != "upstream direct" else None
            rounds[r[0]].append(measure(r, DURATION, work, pid))
        print("round %d done" % (i + 1), flush=True)
    report([r[0] for r in runs], rounds)
    front.stop()
    upstream.stop()


def profile(wasm, work):
    """The bench-profile build on V8: per request, where the filter's time
    goes and how many host calls it makes; and, side by side, the floors
    under it (Envoy CPU per request over plain Envoy): a wasm filter that
    continues at once (noop), one that holds the request and reads headers
    and body (hold), the profile build, the release build, the same two
    floors and the release build of the dynamic module, and jwt_authn."""
    release = os.path.join(os.path.dirname(wasm), "toolctx_envoy.wasm")
    ports = harness.free_ports(18)
    up_admin, up_port, admin = ports.pop(), ports.pop(), ports.pop()
    upstream = harness.Envoy(upstream_config(up_admin, up_port)).start(up_admin)
    listeners, runs = [], []

    def add(name, filters, kinds):
        port = ports.pop()
        listeners.append(harness.listener(name, port, filters))
        runs.extend((name, port, "h1", k) for k in kinds)

    def floor(mode):
        f = toolctx_filter(wasm, "v8")
        vm = f["typed_config"]["config"]["vm_config"]
        vm["vm_id"] = "toolctx-floor-" + mode
        vm["environment_variables"]["key_values"] = {"TOOLCTX_BENCH_FLOOR": mode}
        return f

    add("plain", [], ["call"])
    add("noop", [floor("noop")], ["call"])
    add("hold", [floor("hold")], ["call"])
    add("profile", [toolctx_filter(wasm, "v8")], ["call", "badsig", "list"])
    if os.environ.get("BENCH_BASELINE_WASM"):
        # Another bench-profile build (an earlier commit's), side by side.
        f = toolctx_filter(os.environ["BENCH_BASELINE_WASM"], "v8")
        f["typed_config"]["config"]["vm_config"]["vm_id"] = "toolctx-baseline"
        add("baseline", [f], ["call", "badsig", "list"])
    add("release", [toolctx_filter(release, "v8")], ["call"])
    # The module's floors (bench-profile build, chosen by filter_name) and
    # the release module.
    floors = os.path.join(os.path.dirname(MODULE), "libtoolctx_envoy_module_profile.so")
    add("mod-noop", [module_filter(floors, "toolctx-floor-noop")], ["call"])
    add("mod-hold", [module_filter(floors, "toolctx-floor-hold")], ["call"])
    add("module", [module_filter()], ["call", "badsig", "list"])
    if os.environ.get("BENCH_BASELINE_MODULE"):
        # Another release build of the module (an earlier commit's), side by
        # side; it must sit beside the module (one search path).
        add("mod-base", [module_filter(os.environ["BENCH_BASELINE_MODULE"])], ["call", "badsig"])
    add("jwt_authn", [jwt_filter(False)], ["call"])
    front = harness.Envoy(harness.bootstrap(admin, listeners, up_port), env=front_env())
    front.start(admin)
    check_answers(runs)
    if warming():
        for r in runs:
            measure(r, WARMUP, work, None)
    table, cpu = {}, {}
    for i in range(ROUNDS):
        for name, port, client, kind in (runs if i % 2 == 0 else runs[::-1]):
            before = profile_counters(front)
            r = measure((name, port, client, kind), DURATION, work, front.proc.pid)
            after = profile_counters(front)
            cpu.setdefault((name, kind), []).append(r)
            if name in ("profile", "baseline"):
                d = {k: after.get(k, 0) - before.get(k, 0) for k in after}
                n = d.pop("requests", 0) or 1
                table.setdefault((name, kind), []).append({k: v / n for k, v in d.items()})
    print("Envoy CPU per request over plain Envoy (median of %d rounds of %s; every round in brackets)"
          % (ROUNDS, DURATION))
    for name, port, client, kind in runs:
        over = [x["cpu_us"] - p["cpu_us"] for x, p in zip(cpu[(name, kind)], cpu[("plain", "call")])]
        print("  %-10s %-8s %+7.1f us  req/s %6.0f   [%s]" % (
            name, kind, median(over), median([x["rps"] for x in cpu[(name, kind)]]),
            " ".join("%+.1f" % v for v in over)))
    for (name, kind), rs in sorted(table.items(), key=lambda x: (x[0][1], x[0][0] != "baseline")):
        print("\n%s build, %s: inside the filter, per request (median of rounds)" % (name, {
            "call": "accepted call", "badsig": "refused (bad signature)", "list": "pass-through (tools/list)"}[kind]))
        for k in sorted(rs[0]):
            v = median([x.get(k, 0) for x in rs])
            if k.startswith("ns."):
                print("  %-22s %8.2f us" % (k[3:], v / 1000))
            elif v:
                print("  host calls %-11s %8.2f" % (k[6:], v))
    front.stop()
    upstream.stop()


def profile_counters(front):
    out = {}
    for line in front.get("/stats?filter=%5Ewasmcustom%5C.toolctx%5C.profile%5C.").splitlines():
        name, _, value = line.partition(": ")
        if value.strip().isdigit():
            out[name.strip().split("toolctx.profile.", 1)[1]] = int(value)
    return out


def perf_profile(work):
    """Samples one Envoy worker (`perf record`, software clock) while wrk
    sends accepted calls through the release module, built with its
    symbols (cargo's output before stripping), and prints where the time
    goes: by object (Envoy, the module, libc, the kernel), then by symbol
    (Envoy's binary is stripped but for its exported ABI callbacks)."""
    host = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    triple = re.search(r"^host: (\S+)", host, re.M).group(1)
    symbols = os.path.join(harness.ROOT, "target", triple, "release", "libtoolctx_envoy_module.so")
    kind = os.environ.get("BENCH_PERF_REQUEST", "call")
    ports = harness.free_ports(4)
    up_admin, up_port, admin, port = ports
    upstream = harness.Envoy(upstream_config(up_admin, up_port)).start(up_admin)
    front = harness.Envoy(harness.bootstrap(admin, [harness.listener("module", port, [module_filter(symbols)])],
                                            up_port), env=front_env(symbols), concurrency=1)
    front.start(admin)
    check_answers([("module", port, "h1", kind)])
    seconds = int(DURATION.rstrip("s")) * 2
    result = []
    load = threading.Thread(target=lambda: result.append(wrk(port, REQS[kind], "%ds" % (seconds + 3), work)))
    load.start()
    time.sleep(2)
    data = os.path.join(work, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "1999", "-p", str(front.proc.pid), "-o", data, "--",
                    "sleep", str(seconds)], check=True, capture_output=True)
    load.join()
    r = result[0] if result else {}
    print("load: %s request(s), %.0f req/s, %s non-2xx" % (r.get("total"), r.get("rps", 0), r.get("non2xx")))
    # Per request: the worker's samples over the requests answered while
    # perf ran (wrk's rate times the sampled seconds).
    raw = subprocess.run(["perf", "report", "-i", data, "--sort", "dso,sym", "--stdio", "-q", "-g", "none",
                          "-F", "sample,dso,sym"], capture_output=True, text=True).stdout
    total = module = callbacks = 0
    for line in raw.splitlines():
        parts = line.split()
        if not parts or not parts[0].isdigit():
            continue
        n = int(parts[0])
        total += n
        module += n if "libtoolctx_envoy_module.so" in line else 0
        callbacks += n if "envoy_dynamic_module_callback_" in line else 0
    served = r.get("rps", 0) * seconds
    if total and served:
        per = 1e6 / 1999 / served
        print("worker CPU per request %.1f us: the module's own code (the core included) %.1f us, Envoy's ABI "
              "callbacks it calls %.1f us, the rest of Envoy, libc and the kernel %.1f us"
              % (total * per, module * per, callbacks * per, (total - module - callbacks) * per))
    for sort, n in (("dso", 10), ("dso,sym", 40)):
        rep = subprocess.run(["perf", "report", "-i", data, "--sort", sort, "--stdio", "-q", "-g", "none",
                              "--percent-limit", "0.3"], capture_output=True, text=True).stdout
        print("\nperf report --sort %s (share of the worker's samples):" % sort)
        for line in [l for l in rep.splitlines() if "%" in l][:n]:
            print("  " + " ".join(line.split()))
    rep = subprocess.run(["perf", "report", "-i", data, "--dsos", "libtoolctx_envoy_module.so", "--sort", "sym",
                          "--stdio", "-q", "-g", "none"], capture_output=True, text=True).stdout
    print("\ninside the module (share of all the worker's samples):")
    for line in [l for l in rep.splitlines() if "%" in l][:25]:
        print("  " + " ".join(line.split()))
    rep = subprocess.run(["perf", "report", "-i", data, "--sort", "sym", "--stdio", "-q", "-g", "none"],
                         capture_output=True, text=True).stdout
    print("\nEnvoy's ABI callbacks:")
    for line in [l for l in rep.splitlines() if "envoy_dynamic_module_callback_" in l][:15]:
        print("  " + " ".join(line.split()))
    front.stop()
    upstream.stop()


def main():
    work = tempfile.mkdtemp(prefix="toolctx-bench-")
    if sys.argv[1:] == ["perf"]:
        REQS.update(requests())
        return perf_profile(work)
    REQS.update(requests())
    name = "toolctx_envoy_profile.wasm" if sys.argv[1:] == ["profile"] else "toolctx_envoy.wasm"
    wasm = os.environ.get("TOOLCTX_ENVOY_WASM") or os.path.join(harness.ROOT, "target", "envoy", name)
    if "runtimes" in SETS and sys.argv[1:] != ["profile"]:
        OTHER_RUNTIMES.extend(rt for rt in ("wasmtime", "wamr") if runtime_available(wasm, rt))
    (profile if sys.argv[1:] == ["profile"] else bench)(wasm, work)


if __name__ == "__main__":
    main()
