#!/usr/bin/env python3
"""End to end for the neighbouring conventions (CONTRACT §7) and the replay
guard (CONTRACT §3): the release filter in a real Envoy (two worker
threads) in front of the real MCP server (tests/envoy/upstream), one
listener per configuration:

  aivax    "profile": "aivax", nonces made with Python's bcrypt
  bearer   static `Authorization: Bearer` credential, several accepted
           values, no context token (Agenta style)
  apikey   the same with an `X-API-Key` header
  replay   replay_guard over Envoy's shared data (the module: its table
           in the Envoy process)
  tiny     replay_guard with one slot of one way: the documented fail-closed
           behaviour when the guard is full (the core's replay_guard_full)

and, in a second Envoy with a single worker, what a bcrypt nonce costs: the
wall time of one call per cost, and how long a request that needs no
bcrypt waits behind one on the same worker. Timings are printed, never
asserted.

    ENVOY=... TOOLCTX_ENVOY_WASM=target/envoy/toolctx_envoy.wasm tests/envoy/e2e_conventions.py
    ENVOY=... tests/envoy/e2e_conventions.py --module

Needs Python's `bcrypt` (scripts/test-envoy installs it into .tools/venv
and runs this file with that interpreter). Prints `ok - ...`, `FAIL - ...`
and `info - ...` lines, then `N passed, N failed`.
"""

import json
import os
import re
import secrets
import statistics
import sys
import threading
import time

import bcrypt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from e2e import (CONTEXT_CLAIMS, Upstream, call_body, check, claims, mint, results,  # noqa: E402
                 rpc_error, send, tool_result, INSTANCE, SECRET)

HOOK_KEY = "aivax-e2e-hook-" + secrets.token_hex(8)
OTHER_KEY = "aivax-e2e-other-" + secrets.token_hex(8)
BEARER_A = "Bearer agenta-a-" + secrets.token_hex(12)
BEARER_B = "Bearer agenta-b-" + secrets.token_hex(12)
API_KEY = "ak-" + secrets.token_hex(16)
TINY_INSTANCE = "tiny-" + INSTANCE
ENV = {"TOOLCTX_SECRET": SECRET, "TOOLCTX_AIVAX_HOOK_KEY": HOOK_KEY, "TOOLCTX_BEARER_A": BEARER_A,
       "TOOLCTX_BEARER_B": BEARER_B, "TOOLCTX_API_KEY": API_KEY}
AIVAX_HEADERS = {"external_user_id": "x-toolctx-aivax-user", "call_source": "x-toolctx-aivax-source",
                 "moment_unix": "x-toolctx-aivax-moment", "nonce_verified": "x-toolctx-aivax-nonce",
                 "metadata": "x-toolctx-aivax-metadata"}

PLUGINS = {
    "aivax": {"profile": "aivax", "hook_key_env": "TOOLCTX_AIVAX_HOOK_KEY", "max_bcrypt_cost": 12,
              "headers": AIVAX_HEADERS},
    # The same, with a cache of 64 verified nonces per VM (bcrypt_timings).
    "aivax_cached": {"profile": "aivax", "hook_key_env": "TOOLCTX_AIVAX_HOOK_KEY", "max_bcrypt_cost": 12,
                     "headers": AIVAX_HEADERS, "nonce_cache": 64},
    "bearer": {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "require_context": False,
               "credential": {"header": "Authorization", "values_env": ["TOOLCTX_BEARER_A", "TOOLCTX_BEARER_B"]}},
    "apikey": {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "require_context": False,
               "credential": {"header": "X-API-Key", "values_env": ["TOOLCTX_API_KEY"]}},
    "replay": {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "replay_guard": {"slots": 4096},
               "headers": {"jti": "x-toolctx-jti"}},
    "tiny": {"instance_id": TINY_INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
             "replay_guard": {"slots": 1, "ways": 1}},
}

JSON_HEADERS = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


def nonce(key=HOOK_KEY, cost=4):
    return bcrypt.hashpw(key.encode(), bcrypt.gensalt(rounds=cost)).decode()


def aivax_body(meta, rpc_id=7):
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call",
                       "params": {"name": "whoami", "arguments": {"note": "aiv"}, "_meta": meta}}).encode()


def aivax_meta(**over):
    m = {"_aiv_nonce": nonce(), "_aiv_external_user_id": "user-981", "_aiv_call_source": "WebChatClient",
         "_aiv_conversation_token": "conv-77", "_aiv_moment": "2025-09-09T19:58:05.123+03:00",
         "tenant_id": "tenant-3"}
    m.update(over)
    return {k: v for k, v in m.items() if v is not None}


def build_envoy(wasm, admin, ports, upstream_port, names, concurrency):
    listeners = [harness.listener(n, ports[n], [harness.toolctx_filter(wasm, PLUGINS[n], ENV)]) for n in names]
    return harness.Envoy(harness.bootstrap(admin, listeners, upstream_port), env=ENV, concurrency=concurrency)


def worker_connections(envoy, port):
    """Connections each worker thread accepted on a listener."""
    out = {}
    for line in envoy.get("/stats?filter=worker_").splitlines():
        m = re.match(r"listener\.127\.0\.0\.1_%d\.(worker_\d+)\.downstream_cx_total: (\d+)" % port, line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def parallel(n, fn):
    out = [None] * n
    gate = threading.Barrier(n)

    def run(i):
        gate.wait()
        try:
            out[i] = fn()
        except OSError as e:
            out[i] = e
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_aivax(port, upstream):
    # Accepted: the typed context reaches the tool as headers; spoofed ones go.
    spoof = [("x-toolctx-aivax-user", "evil"), ("X-Toolctx-Aivax-Nonce", "true")]
    status, _, body = send(port, JSON_HEADERS + spoof, aivax_body(aivax_meta()))
    report = tool_result(body) if status == 200 else {}
    want = {"x-toolctx-aivax-user": "user-981", "x-toolctx-aivax-source": "WebChatClient",
            "x-toolctx-aivax-moment": "1757437085", "x-toolctx-aivax-nonce": "true",
            "x-toolctx-aivax-metadata": '{"tenant_id":"tenant-3"}'}
    check("aivax: a nonce made by Python's bcrypt is accepted, typed context as headers",
          report.get("headers") == want, (status, body[:300], report.get("headers")))
    # Refusals, with the upstream seeing nothing.
    cases = [
        ("nonce of another hook key", 401, -32001, "nonce_invalid", aivax_meta(_aiv_nonce=nonce(OTHER_KEY))),
        ("the plain hook key as nonce", 401, -32001, "nonce_invalid", aivax_meta(_aiv_nonce=HOOK_KEY)),
        ("cost 13 over the cap of 12", 401, -32001, "nonce_invalid",
         aivax_meta(_aiv_nonce="$2b$13$" + nonce()[7:])),
        ("no nonce", 401, -32001, "nonce_missing", aivax_meta(_aiv_nonce=None)),
        ("moment without offset", 400, -32602, "context_malformed",
         aivax_meta(_aiv_moment="2025-09-09T16:58:05")),
    ]
    for what, status_want, code, reason, meta in cases:
        before = upstream.count()
        status, _, reply = send(port, JSON_HEADERS, aivax_body(meta))
        check("aivax: %s refused %s, upstream saw nothing" % (what, reason),
              status == status_want and rpc_error(reply) == (7, code, reason) and upstream.count() == before,
              (status, reply[:200]))
    before = upstream.count()
    status, _, body = send(port, JSON_HEADERS, json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode())
    check("aivax: tools/list passes", status == 200 and b"whoami" in body and upstream.count() == before + 1, status)


def test_bearer(ports, upstream):
    call = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "whoami", "arguments": {"note": "agenta"}}}).encode()
    p = ports["bearer"]
    for label, value in (("first", BEARER_A), ("second", BEARER_B)):
        status, _, body = send(p, JSON_HEADERS + [("authorization", value)], call)
        check("bearer: the %s accepted value reaches the tool" % label,
              status == 200 and tool_result(body).get("note") == "agenta", (status, body[:200]))
    for what, headers, reason in [
        ("missing", [], "credential_missing"),
        ("another value", [("authorization", "Bearer nope")], "credential_invalid"),
        ("the scheme in another case", [("authorization", "bearer" + BEARER_A[6:])], "credential_invalid"),
        ("the value with a trailing space trimmed by nobody",
         [("authorization", BEARER_A[:-1])], "credential_invalid"),
        ("sent twice", [("authorization", BEARER_A), ("authorization", BEARER_B)], "credential_invalid"),
    ]:
        before = upstream.count()
        status, _, reply = send(p, JSON_HEADERS + headers, call)
        check("bearer: %s refused 401 %s before the body, upstream saw nothing" % (what, reason),
              status == 401 and rpc_error(reply) == (None, -32001, reason) and upstream.count() == before,
              (status, reply[:200]))
    before = upstream.count()
    status, _, reply = send(p, JSON_HEADERS, json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode())
    check("bearer: every POST needs the credential, tools/list included",
          status == 401 and upstream.count() == before, status)
    status, _, _ = send(p, [("accept", "application/json")], b"", method="GET")
    check("bearer: GET passes without it", upstream.count() == before + 1, status)
    # X-API-Key style.
    p = ports["apikey"]
    status, _, body = send(p, JSON_HEADERS + [("X-API-Key", API_KEY)], call)
    check("x-api-key: the accepted key reaches the tool", status == 200, (status, body[:200]))
    before = upstream.count()
    status, _, reply = send(p, JSON_HEADERS + [("authorization", "Bearer " + API_KEY)], call)
    check("x-api-key: the key in another header is credential_missing",
          status == 401 and rpc_error(reply) == (None, -32001, "credential_missing") and upstream.count() == before,
          (status, reply[:200]))


def replay_call(c):
    return call_body(c, meta={"agentarea/" + k: c[k] for k in CONTEXT_CLAIMS if k in c})


def test_replay(envoy, ports, upstream):
    p = ports["replay"]
    c = claims()
    tok = mint(c)
    before = upstream.count()
    s1, _, b1 = send(p, JSON_HEADERS + [("x-agentarea-context", tok)], replay_call(c))
    s2, _, b2 = send(p, JSON_HEADERS + [("x-agentarea-context", tok)], replay_call(c))
    check("replay: the same token twice, the second refused 401 token_replayed, the tool ran once",
          s1 == 200 and tool_result(b1)["headers"].get("x-toolctx-jti") == c["jti"]
          and s2 == 401 and rpc_error(b2) == (7, -32001, "token_replayed") and upstream.count() == before + 1,
          (s1, s2, b2[:200], upstream.count() - before))
    c2 = claims(task_id=c["task_id"], tool_call_id=c["tool_call_id"], idempotency_key=c["idempotency_key"])
    s3, _, _ = send(p, JSON_HEADERS + [("x-agentarea-context", mint(c2))], replay_call(c2))
    check("replay: a retry with a new token (new jti) is accepted", s3 == 200, s3)
    c3 = claims(jti=None)
    s4, _, b4 = send(p, JSON_HEADERS + [("x-agentarea-context", mint(c3))], replay_call(c3))
    check("replay: a token without jti cannot be guarded: 401 claim_invalid",
          s4 == 401 and rpc_error(b4) == (7, -32001, "claim_invalid"), (s4, b4[:200]))

    # Two worker threads: the same token sent at once on 6 connections is
    # accepted once. Rounds go on until one round had connections on both
    # workers (the kernel spreads connections over the workers' sockets).
    crossed = rounds = 0
    ok = True
    detail = []
    while rounds < 12 and crossed < 2:
        rounds += 1
        c = claims()
        tok, body = mint(c), replay_call(c)
        w0 = worker_connections(envoy, p)
        before = upstream.count()
        got = parallel(6, lambda: send(p, JSON_HEADERS + [("x-agentarea-context", tok)], body))
        w1 = worker_connections(envoy, p)
        statuses = sorted(g[0] if isinstance(g, tuple) else str(g) for g in got)
        replayed = [g for g in got if isinstance(g, tuple) and g[0] == 401
                    and rpc_error(g[2]) == (7, -32001, "token_replayed")]
        workers = [w for w in w1 if w1[w] > w0.get(w, 0)]
        crossed += len(workers) > 1
        good = statuses.count(200) == 1 and len(replayed) == 5 and upstream.count() == before + 1
        ok = ok and good
        detail.append((statuses, workers))
    check("replay: across two worker threads a token is accepted once (%d rounds, %d on both workers)"
          % (rounds, crossed), ok and crossed > 0, detail)

    # Fail closed when full: one slot of one way holds one live token.
    p = ports["tiny"]
    a, b = claims(aud=TINY_INSTANCE), claims(aud=TINY_INSTANCE)
    sa, _, _ = send(p, JSON_HEADERS + [("x-agentarea-context", mint(a))], replay_call(a))
    sb, _, rb = send(p, JSON_HEADERS + [("x-agentarea-context", mint(b))], replay_call(b))
    check("replay: a full guard (slots 1, ways 1) refuses a new token as replay_guard_full (503) while the "
          "first lives", sa == 200 and sb == 503 and rpc_error(rb) == (7, -32603, "replay_guard_full"),
          (sa, sb, rb[:200]))


def timed(port, body):
    t = time.perf_counter()
    status, _, reply = send(port, JSON_HEADERS, body)
    return time.perf_counter() - t, status, reply


def bcrypt_timings(wasm, upstream):
    """One worker thread: the wall time of a call per bcrypt cost, and the
    wait of a request that needs no bcrypt sent while one runs."""
    admin, port, cached = harness.free_ports(3)
    envoy = build_envoy(wasm, admin, {"aivax": port, "aivax_cached": cached}, upstream.port,
                        ["aivax", "aivax_cached"], concurrency=1)
    envoy.start(admin)
    lines = []
    try:
        nonce_cache(cached, upstream, lines)
        for cost in (4, 10, 12):
            body = aivax_body(aivax_meta(_aiv_nonce=nonce(cost=cost)))
            runs = [timed(port, body) for _ in range(3)]
            ok = all(s == 200 for _, s, _ in runs)
            check("bcrypt: a cost-%d nonce is accepted" % cost, ok, [(s, r[:120]) for _, s, r in runs])
            ms = statistics.median(t for t, _, _ in runs) * 1000
            hashed = nonce(cost=cost).encode()
            native = []
            for _ in range(3):
                t = time.perf_counter()
                bcrypt.checkpw(HOOK_KEY.encode(), hashed)
                native.append((time.perf_counter() - t) * 1000)
            lines.append("cost %d: %.0f ms per call (median of 3, whole round trip); Python's bcrypt "
                         "package checks the same cost in %.0f ms here (median of 3)"
                         % (cost, ms, statistics.median(native)))
        # A GET needs no bcrypt; alone, then sent 20 ms after a cost-12 call.
        idle = statistics.median(timed_get(port) for _ in range(5)) * 1000
        slow = aivax_body(aivax_meta(_aiv_nonce=nonce(cost=12)))
        box = {}
        t = threading.Thread(target=lambda: box.update(call=timed(port, slow)))
        t.start()
        time.sleep(0.02)
        behind = timed_get(port) * 1000
        t.join()
        lines.append("a GET alone: %.1f ms; sent 20 ms into a cost-12 call on the same worker: %.0f ms"
                     % (idle, behind))
    finally:
        envoy.stop()
    for line in lines:
        runtime = "V8" if harness.FRONT == "filter" else "native module"
        print("info - bcrypt in Envoy (%s, one worker): %s" % (runtime, line), flush=True)


def nonce_cache(port, upstream, lines):
    """`nonce_cache`: a nonce verified once is not hashed again; the verdict
    stays bcrypt's (timings printed, never asserted)."""
    repeated = aivax_meta(_aiv_nonce=nonce(cost=10))
    runs = [timed(port, aivax_body(repeated)) for _ in range(4)]
    reports = [tool_result(r) if s == 200 else {} for _, s, r in runs]
    check("nonce cache: a cost-10 nonce sent four times is accepted each time, with the same verified headers",
          all(s == 200 for _, s, _ in runs) and all(r.get("headers") == reports[0].get("headers") for r in reports)
          and reports[0].get("headers", {}).get("x-toolctx-aivax-nonce") == "true",
          [(s, r[:120]) for _, s, r in runs])
    before = upstream.count()
    other = aivax_meta(_aiv_nonce=nonce(OTHER_KEY, cost=10))
    refusals = [timed(port, aivax_body(other)) for _ in range(2)]
    check("nonce cache: a nonce of another hook key is refused each time (refusals are not cached)",
          all(s == 401 and rpc_error(r) == (7, -32001, "nonce_invalid") for _, s, r in refusals)
          and upstream.count() == before, [(s, r[:160]) for _, s, r in refusals])
    bad_moment = dict(repeated, _aiv_moment="2025-09-09T16:58:05")
    status, _, reply = send(port, JSON_HEADERS, aivax_body(bad_moment))
    check("nonce cache: a cached nonce does not excuse the other checks (bad moment: context_malformed)",
          status == 400 and rpc_error(reply) == (7, -32602, "context_malformed") and upstream.count() == before,
          (status, reply[:200]))
    lines.append("nonce_cache: a cost-10 nonce took %.0f ms the first time, then %.1f ms (median of the three "
                 "repeats); a refused nonce %.0f ms each time (median of 2)"
                 % (runs[0][0] * 1000, statistics.median(t for t, _, _ in runs[1:]) * 1000,
                    statistics.median(t for t, _, _ in refusals) * 1000))


def timed_get(port):
    t = time.perf_counter()
    send(port, [("accept", "application/json")], b"", method="GET")
    return time.perf_counter() - t


def main():
    wasm = harness.artifact()
    names = [n for n in PLUGINS if n != "aivax_cached"]
    ports = dict(zip(["admin", "upstream"] + names, harness.free_ports(2 + len(names))))
    upstream = Upstream(ports["upstream"])
    envoy = build_envoy(wasm, ports["admin"], ports, ports["upstream"], names, concurrency=2)
    envoy.start(ports["admin"])
    try:
        test_aivax(ports["aivax"], upstream)
        test_bearer(ports, upstream)
        test_replay(envoy, ports, upstream)
        counters = envoy.counters()
        check("counters: toolctx.refused.token_replayed and nonce_invalid count",
              counters.get("toolctx.refused.token_replayed", 0) >= 7
              and counters.get("toolctx.refused.nonce_invalid", 0) == 3, counters)
        dump = envoy.get("/config_dump")
        check("/config_dump holds no hook key, bearer or API key",
              all(s not in dump for s in (HOOK_KEY, BEARER_A, BEARER_B, API_KEY, SECRET))
              and "TOOLCTX_AIVAX_HOOK_KEY" in dump)
        time.sleep(0.2)
        log = open(envoy.log_path).read()
        check("the log holds no hook key, bearer or API key",
              all(s not in log for s in (HOOK_KEY, BEARER_A, BEARER_B, API_KEY, SECRET)))
    finally:
        envoy.stop()
    # An inline hook key is refused like inline secrets: Envoy does not start.
    bad_admin, bad_port = harness.free_ports(2)
    inline = dict(PLUGINS["aivax"], hook_key=HOOK_KEY)
    inline.pop("hook_key_env")
    bad = harness.Envoy(harness.bootstrap(bad_admin, [harness.listener(
        "bad", bad_port, [harness.toolctx_filter(wasm, inline, ENV)])], upstream.port), env=ENV)
    started = harness.starts(bad, bad_admin)
    log = bad.tail(200)
    check("an inline hook_key stops Envoy with a clear log line",
          not started and "inline `hook_key` is refused" in log, log[-400:])
    bcrypt_timings(wasm, upstream)
    harness.stop(upstream.proc)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
