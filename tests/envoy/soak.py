#!/usr/bin/env python3
"""Soak: mixed valid and invalid traffic at saturation through Envoy with the
release toolctx filter (or, with --module, the dynamic module), for a
bounded time, watching Envoy's memory.

    ENVOY=... tests/envoy/soak.py [--module] [SECONDS | --minutes M]   (default 300 s)
    scripts/test-hostile soak [SECONDS] [--module]   (installs wrk and Envoy, builds both)

scripts/test-hostile runs a short one (--minutes 0.25 --warmup 5) for
each front end; the 5-minute run is by hand.

wrk (Debian's package) drives 127.0.0.1 only, with a Lua script rotating ten
requests: five valid calls with different tokens and bodies, a tools/list
that passes, and four that must be refused (wrong key, expired token, _meta
not matching the token, a body that is not JSON). The tokens are minted here
with Python's hmac and minted again for every wrk segment (60 s at most), so
they never expire mid-run. The upstream is a second Envoy answering 200 from
a direct_response (bench/envoy_bench.py's), so the Python side does no work
per request.

Checks: every answer's status is the one intended for its request (the mix of
statuses and the filter's counters match the rotation), no socket errors, no
filter error, Envoy up with the same PID and its wasm VMs never recreated or
reloaded, and Envoy's RSS, sampled every 5 s, flat within 10% after the
warm-up. Prints the figures and closes with `N passed, N failed`.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))
import envoy_bench  # noqa: E402
import harness  # noqa: E402
import hostile  # noqa: E402
from hostile import check, compact, fresh_claims, mint, call_doc  # noqa: E402

SAMPLE_S = 5

LUA = r"""
local reqs = {}
local threads = {}
local i = 0
function setup(thread) table.insert(threads, thread) end
function init(args)
  statuses = {}
  for _, r in ipairs(ROTATION) do
    table.insert(reqs, wrk.format("POST", "/mcp", r.headers, r.body))
  end
end
function request()
  i = i % #reqs + 1
  return reqs[i]
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do
      io.write(string.format("status %d %d\n", k, v))
    end
  end
end
"""


def lua_string(s):
    return json.dumps(s)  # a JSON string literal is a valid Lua string literal here (ASCII)


def rotation(keys, rng):
    """Ten requests and the status each must get."""
    now = int(time.time())
    out = []

    def call(c, token, doc=None):
        doc = doc or call_doc(c, rng)
        doc["params"]["arguments"]["query"] = "q" * 700
        return token, compact(doc).decode()

    for _ in range(5):
        c = fresh_claims(rng, now)
        out.append(("valid", 200) + call(c, mint(c, keys.secret)))
    c = fresh_claims(rng, now)
    listing = compact({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).decode()
    out.append(("pass", 200, mint(c, keys.secret), listing))
    c = fresh_claims(rng, now)
    out.append(("signature_invalid", 401) + call(c, mint(c, keys.wrong)))
    c = fresh_claims(rng, now, iat=now - 1000, exp=now - 700)
    out.append(("token_expired", 401) + call(c, mint(c, keys.secret)))
    c = fresh_claims(rng, now)
    doc = call_doc(c, rng)
    doc["params"]["_meta"]["agentarea/task_id"] = "someone-else"
    out.append(("meta_mismatch", 403) + call(c, mint(c, keys.secret), doc))
    c = fresh_claims(rng, now)
    out.append(("parse_error", 400, mint(c, keys.secret), call(c, "")[1][:-7]))
    return out


def write_lua(path, rot):
    entries = []
    for _, _, token, body in rot:
        entries.append('{headers = {["content-type"] = "application/json", ["accept"] = '
                       '"application/json, text/event-stream", ["x-agentarea-context"] = %s}, body = %s}'
                       % (lua_string(token), lua_string(body)))
    with open(path, "w") as f:
        f.write("ROTATION = {\n  " + ",\n  ".join(entries) + "\n}\n" + LUA)


def run_wrk(port, lua, seconds, connections):
    p = subprocess.run(["wrk", "-t", "1", "-c", str(connections), "-d", "%ds" % seconds, "--timeout", "5s",
                        "-s", lua, "http://127.0.0.1:%d/mcp" % port],
                       capture_output=True, text=True, timeout=seconds + 60)
    out = p.stdout
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", out)
    total = int(m.group(1)) if m else 0
    statuses = {}
    for s, n in re.findall(r"^status (\d+) (\d+)$", out, re.M):
        statuses[int(s)] = statuses.get(int(s), 0) + int(n)
    errors = re.search(r"Socket errors:.*", out)
    return {"total": total, "statuses": statuses, "socket_errors": errors.group(0) if errors else "",
            "rc": p.returncode, "out": out + p.stderr}


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seconds", nargs="?", type=int, default=300, help="how long to drive traffic (default 300)")
    ap.add_argument("--minutes", type=float, help="how long to drive traffic, in minutes (instead of SECONDS)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=30, help="seconds before the memory baseline")
    ap.add_argument("--segment", type=int, default=60, help="seconds per wrk run (tokens minted again each)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.minutes is not None:
        args.seconds = max(1, round(args.minutes * 60))
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: scripts/test-hostile soak installs it (Debian package wrk)")
    if args.seconds < 1 or args.seconds > 6 * 3600:
        sys.exit("SECONDS must be 1..21600")

    wasm_src = harness.artifact()
    work = tempfile.mkdtemp(prefix="toolctx-soak-")
    wasm = harness.private_copy(wasm_src, work)
    keys = hostile.Keys(args.seed)
    rng = random.Random("soak:%d" % args.seed)

    up_admin, up_port, admin, port = harness.free_ports(4)
    upstream = harness.Envoy(envoy_bench.upstream_config(up_admin, up_port)).start(up_admin)
    plugin = {"instance_id": hostile.INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
              "headers": {"task_id": "x-toolctx-task-id", "idempotency_key": "x-toolctx-idempotency-key"}}
    listeners = [harness.listener("soak", port, [harness.toolctx_filter(wasm, plugin, ["TOOLCTX_SECRET"])])]
    envoy = harness.Envoy(harness.bootstrap(admin, listeners, up_port),
                          env=dict({"TOOLCTX_SECRET": keys.secret}, **harness.module_env(wasm)),
                          concurrency=2)
    envoy.start(admin)
    pid = envoy.proc.pid
    samples = []  # (seconds since start, RSS KiB)
    stop = threading.Event()
    started = time.time()

    def sampler():
        while not stop.is_set():
            try:
                samples.append((time.time() - started, rss_kib(pid)))
            except OSError:
                return
            stop.wait(SAMPLE_S)

    runs = []
    expected = {}  # status -> requests, from the rotation's shares
    try:
        # Each path answers as intended before the soak starts.
        rot = rotation(keys, rng)
        for name, status, token, body in rot:
            got, _, reply = harness.raw_request(port, "POST", "/mcp", [("content-type", "application/json"),
                                                                      ("x-agentarea-context", token)], body.encode())
            if got != status:
                sys.exit("%s answered %d, not %d: %s" % (name, got, status, reply[:200]))
        counters0 = envoy.counters()
        wasm0 = envoy.stats("wasm.")
        threading.Thread(target=sampler, daemon=True).start()
        left = args.seconds
        while left > 0:
            seg = min(args.segment, left)
            rot = rotation(keys, rng)
            lua = os.path.join(work, "soak.lua")
            write_lua(lua, rot)
            r = run_wrk(port, lua, seg, args.connections)
            runs.append(r)
            print("segment %3ds: %d requests, %.0f req/s, statuses %s%s" % (
                seg, r["total"], r["total"] / seg, dict(sorted(r["statuses"].items())),
                (", " + r["socket_errors"]) if r["socket_errors"] else ""), flush=True)
            left -= seg
        elapsed = time.time() - started
        stop.set()
        time.sleep(0.2)

        total = sum(r["total"] for r in runs)
        statuses = {}
        for r in runs:
            for s, n in r["statuses"].items():
                statuses[s] = statuses.get(s, 0) + n
        share = {}
        for _, status, _, _ in rot:
            share[status] = share.get(status, 0) + 1
        answered = sum(statuses.values())
        for s, k in share.items():
            expected[s] = answered * k / len(rot)
        # Rotation position and answer are tied up to the requests in flight
        # when each segment ends: allow that many per status and segment.
        slack = (args.connections + 1) * len(runs)
        off = {s: (statuses.get(s, 0), round(expected.get(s, 0))) for s in set(statuses) | set(expected)
               if abs(statuses.get(s, 0) - expected.get(s, 0)) > slack}
        check("wrk ran every segment", all(r["rc"] == 0 and r["total"] > 0 for r in runs),
              [r["out"][-400:] for r in runs if r["rc"] or not r["total"]][:1])
        check("no socket errors", not any(r["socket_errors"] for r in runs), [r["socket_errors"] for r in runs])
        check("statuses exactly as intended: 200 for valid and passing calls, 401/403/400 for the refused ones "
              "(%s)" % dict(sorted(statuses.items())), not off and set(statuses) <= set(share), off)
        counters = envoy.counters()
        delta = {k.replace("toolctx.", "", 1): v - counters0.get(k, 0) for k, v in counters.items()
                 if v != counters0.get(k, 0)}
        per = answered / len(rot)
        want = {"accepted": 5 * per, "passed": per, "refused.signature_invalid": per, "refused.token_expired": per,
                "refused.meta_mismatch": per, "refused.parse_error": per}
        wrong = {k: (delta.get(k, 0), round(v)) for k, v in want.items() if abs(delta.get(k, 0) - v) > 5 * slack}
        extra = {k: v for k, v in delta.items() if k not in want}
        check("filter counters follow the rotation, no error (%s)" % delta, not wrong and not extra, (wrong, extra))
        alive = envoy.proc.poll() is None
        check("Envoy up: same process (pid %d), /ready LIVE" % pid,
              alive and envoy.get("/ready").strip() == "LIVE", alive)
        wasm1 = envoy.stats("wasm.")
        if harness.FRONT == "filter":
            moved = {k: (wasm0.get(k), v) for k, v in wasm1.items() if wasm0.get(k) != v}
            check("wasm VMs never recreated or reloaded", not moved and not any(v for k, v in wasm1.items()
                                                                                 if "vm_reload" in k), moved)
        log = open(envoy.log_path, errors="replace").read()
        bad = [l for l in log.splitlines() if "panic" in l.lower() or "[critical]" in l
               or ("[error]" in l and ("wasm" in l.lower() or "dynamic_modules" in l))]
        check("Envoy log: no panic, no critical line, no wasm or module error", not bad, bad[:3])
        after = [kib for t, kib in samples if t >= args.warmup]
        if len(after) >= 2:
            base, top, low = after[0], max(after), min(after)
            flat = top <= base * 1.10 and low >= base * 0.90
            check("Envoy RSS flat within 10%% after %d s warm-up (%d..%d KiB, baseline %d KiB)"
                  % (args.warmup, low, top, base), flat, after)
        else:
            print("note: run shorter than warm-up + 2 samples; RSS not judged")

        print("\nsoak (%s): %d s of traffic (%d wrk segments, %d connections, Envoy --concurrency 2), seed %d"
              % (harness.FRONT, args.seconds, len(runs), args.connections, args.seed))
        print("requests %d, %.0f req/s; statuses %s" % (total, total / args.seconds, dict(sorted(statuses.items()))))
        print("filter counters: %s" % dict(sorted(delta.items())))
        kib = [k for _, k in samples]
        print("Envoy RSS (KiB) every %d s: first %d, last %d, max %d, min %d; after warm-up first %s, max %s"
              % (SAMPLE_S, kib[0], kib[-1], max(kib), min(kib), after[0] if after else "-",
                 max(after) if after else "-"))
        print("RSS series: %s" % " ".join(str(k) for k in kib))
        print("envoy restarts 0 (pid %d); wasm VMs: %s; wall time %.0f s" % (
            pid, {k: v for k, v in wasm1.items() if "remote" not in k}, elapsed))
    finally:
        stop.set()
        envoy.stop()
        upstream.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (hostile.results.count(True), hostile.results.count(False)))
    return 0 if all(hostile.results) else 1


if __name__ == "__main__":
    sys.exit(main())
