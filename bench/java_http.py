#!/usr/bin/env python3
"""The Java front end over HTTP (bench/java.sh, not a test): the example's
java-sdk server (stateless, Jetty) plain, behind ToolctxFilter, and behind
the hand-written java-jwt filter (java/testkit BenchServer), each sent the
same accepted tools/call (toolctx_probe, a fresh token per call, minted
here with the standard library) on keep-alive connections from 4 threads.
The server's CPU (utime + stime from /proc) per call, median of 3 runs
after a warm-up; the added CPU is each mode's less the plain server's.
The warm-up (--warmup calls, --calls unless given) must outlast the JIT:
the server's CPU counts its compiler threads, and C2 compiles the
Chicory-compiled module's methods for some 10,000 calls.

    java_http.py CLASSPATH [--java JAVA] [--flags "..."] [--calls 4000] [--warmup N]
"""

import argparse
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "support"))
from checks import mint  # noqa: E402

INSTANCE = "bench-" + secrets.token_hex(4)
SECRET = "bench-secret-" + secrets.token_hex(16)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def request():
    task, call = "task-" + uuid.uuid4().hex[:8], "call-" + uuid.uuid4().hex[:8]
    ctx = {"protocol": "1", "task_id": task, "tool_call_id": call, "workspace_id": "ws-1", "idempotency_key": task + ":" + call}
    now = int(time.time())
    claims = {"iss": "agentarea", "aud": INSTANCE, "iat": now, "exp": now + 300, "jti": str(uuid.uuid4()),
              "tool": "toolctx_probe", **ctx}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "toolctx_probe", "arguments": {}, "_meta": {"agentarea/" + k: v for k, v in ctx.items()}}})
    return body, mint(claims, SECRET)


def load(port, calls, threads=4):
    work = [request() for _ in range(calls)]
    bad = []

    def run(part):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for body, token in part:
            c.request("POST", "/mcp", body, {"content-type": "application/json", "accept": "application/json, text/event-stream",
                                             "x-agentarea-context": token})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                bad.append(r.status)
        c.close()

    ts = [threading.Thread(target=run, args=(work[i::threads],)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if bad:
        raise SystemExit("refused calls in the benchmark: %s" % bad[:5])


def mode(args, name):
    env = dict(os.environ, TOOLCTX_INSTANCE_ID=INSTANCE, TOOLCTX_SECRET=SECRET)
    p = subprocess.Popen([args.java, "-Dslf4j.internal.verbosity=ERROR", *args.flags.split(), "-cp", args.classpath,
                          "dev.toolctx.testkit.BenchServer", name], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline().split(":")[2].split("/")[0])
        load(port, args.warmup or args.calls)  # warm-up
        runs = []
        for _ in range(3):
            before = cpu_seconds(p.pid)
            load(port, args.calls)
            runs.append((cpu_seconds(p.pid) - before) / args.calls * 1e6)
        return statistics.median(runs), runs
    finally:
        p.stdin.close()
        p.wait(20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("classpath")
    ap.add_argument("--java", default="java")
    ap.add_argument("--flags", default="")
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--warmup", type=int, default=0)
    args = ap.parse_args()
    got = {name: mode(args, name) for name in ("plain", "toolctx", "hand")}
    plain = got["plain"][0]
    for name, (median, runs) in got.items():
        added = "" if name == "plain" else ", added %.0f us" % (median - plain)
        print("%-8s %.0f us CPU per call (runs %s)%s" % (name, median, ", ".join("%.0f" % r for r in runs), added))
    hand = got["hand"][0] - plain
    if hand <= 0:
        print("added CPU, toolctx / hand-written: n/a (the hand-written filter's added CPU is within the noise)")
    else:
        print("added CPU, toolctx / hand-written: %.1fx" % ((got["toolctx"][0] - plain) / hand))


if __name__ == "__main__":
    main()
