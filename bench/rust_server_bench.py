#!/usr/bin/env python3
"""What toolctx-tower adds to an rmcp server (not a test), run by
bench/rust-server.sh.

The same ~1 KB `tools/call` with the same HS256 token as bench/envoy_bench.py
(whose token, wrk and CPU pieces this reuses), driven by wrk (-t1, 16
connections) on 127.0.0.1 at three copies of one rmcp 3.11 server
(bench/rust-server, release build, stateless, JSON answers):
  rmcp plain            no check: the floor
  rmcp + toolctx-tower  toolctx_tower::ToolctxLayer
  rmcp + hand-written   the axum from_fn middleware a Rust developer would
                        write instead (jsonwebtoken + serde_json `_meta`
                        binding; see bench/rust-server/src/main.rs)
and the same call with a bad signature at the two checking copies.

Added CPU per request is the server process's user + system CPU per
request minus the plain copy's, taken within a round. The machine is small
and shared: BENCH_ROUNDS (3) interleaved rounds of BENCH_DURATION (5s) per
scenario after BENCH_WARMUP (2s); every round's figure and the median are
printed, in lines a script can read:
  toolctx-tower added CPU per request over plain rmcp, us ... median X
  hand-written added CPU per request over plain rmcp, us ... median X
  toolctx-tower / hand-written added CPU per request ... median X
TOOLCTX_BENCH_SERVER: the server binary (default target/release/...).

    bench/rust-server.sh instructions [N]
counts instead, with callgrind, the instructions each copy runs for N
(default 1000) and 2N calls sent one after another on one connection; the
difference over N is the figure per call, which the machine's load does not
move. The SHA-256 share is shown apart: under valgrind sha2 hashes in
software, natively it takes SHA-NI.
"""

import http.client
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import envoy_bench as eb  # noqa: E402
from envoy_bench import harness  # noqa: E402

SERVER = os.environ.get("TOOLCTX_BENCH_SERVER") or os.path.join(
    harness.ROOT, "target", "release", "toolctx-bench-rust-server")
VARIANTS = [("rmcp plain", "plain"), ("rmcp + toolctx-tower", "toolctx"), ("rmcp + hand-written", "handwritten")]
# BENCH_PIN=1 (default on a machine with 2 or more CPUs): the servers run on
# the last CPU, this driver and wrk on the others, so wrk's own work does
# not land on the CPU being measured.
CPUS = sorted(os.sched_getaffinity(0))
PIN = os.environ.get("BENCH_PIN", "1" if len(CPUS) >= 2 else "0") == "1"
SERVER_CPUS = set(CPUS[-1:])
TASK = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"


class Server:
    def __init__(self, variant, wrap=()):
        env = dict(os.environ, TOOLCTX_INSTANCE_ID=eb.INSTANCE, TOOLCTX_SECRET=eb.SECRET)
        self.proc = subprocess.Popen([*wrap, SERVER, variant, "--port", "0"],
                                     stdout=subprocess.PIPE, env=env, text=True, stderr=subprocess.DEVNULL if wrap else None,
                                     preexec_fn=(lambda: os.sched_setaffinity(0, SERVER_CPUS)) if PIN else None)
        line = self.proc.stdout.readline()
        if not line.startswith("listening http://127.0.0.1:"):
            sys.exit("%s %s did not start: %r" % (SERVER, variant, line))
        self.port = int(line.split(":")[2].split("/")[0])

    def stop(self):
        self.proc.terminate()  # valgrind writes its counts on SIGTERM too
        self.proc.wait(timeout=30)


def check(name, port, kind, want_task):
    """The copy answers as it should before it is measured: the call runs the
    tool with the task the check handed it; a bad signature is refused."""
    headers, body, want = eb.REQS[kind]
    status, _, reply = harness.raw_request(port, "POST", "/mcp", headers, body.encode())
    if status != want:
        sys.exit("%s answered %d to %s, expected %d: %s" % (name, status, kind, want, reply[:300]))
    if want == 200:
        text = json.loads(reply)["result"]["content"][0]["text"]
        if not text.endswith("task " + want_task):
            sys.exit("%s: the tool did not get the verified task: %r" % (name, text))


def callgrind(variant, calls, out):
    """Instructions (total, SHA-256 inclusive) of one copy serving `calls` calls."""
    s = Server(variant, ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out])
    headers, body, want = eb.REQS["call"]
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    for _ in range(calls):
        conn.request("POST", "/mcp", body=body, headers=dict(headers))
        reply = conn.getresponse()
        reply.read()
        if reply.status != want:
            sys.exit("%s answered %d under callgrind" % (variant, reply.status))
    conn.close()
    s.stop()
    with open(out) as f:
        total = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True,
                               text=True).stdout
    sha = next((int(line.split()[0].replace(",", "")) for line in annotated.splitlines()
                if "sha2::sha256::compress256 " in line), 0)
    return total, sha


def instructions(n):
    work = tempfile.mkdtemp(prefix="toolctx-bench-")
    eb.REQS.update(eb.requests())
    per = {}
    for name, variant in VARIANTS:
        (t1, s1), (t2, s2) = (callgrind(variant, k, os.path.join(work, "%s.%d" % (variant, k))) for k in (n, 2 * n))
        per[name] = ((t2 - t1) / n, (s2 - s1) / n)
        print("%-24s %10.0f instructions per call, SHA-256 %7.0f of them" % ((name,) + per[name]), flush=True)
    P, T, H = (name for name, _ in VARIANTS)
    added = {k: (per[k][0] - per[P][0], per[k][1] - per[P][1]) for k in (T, H)}
    for k in (T, H):
        print("%s added instructions per call over plain rmcp: %.0f (%.0f without SHA-256)"
              % (k.replace("rmcp + ", ""), added[k][0], added[k][0] - added[k][1]))
    print("toolctx-tower / hand-written added instructions per call: %.2f (%.2f without SHA-256)"
          % (added[T][0] / added[H][0], (added[T][0] - added[T][1]) / (added[H][0] - added[H][1])))


def main():
    if sys.argv[1:2] == ["instructions"]:
        return instructions(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
    work = tempfile.mkdtemp(prefix="toolctx-bench-")
    if PIN:
        os.sched_setaffinity(0, set(CPUS[:-1]))
    eb.REQS.update(eb.requests())
    servers = {name: Server(variant) for name, variant in VARIANTS}
    runs = [(name, s.port, "h1", "call") for name, s in servers.items()]
    runs += [(name + " refused", servers[name].port, "h1", "badsig")
             for name in ("rmcp + toolctx-tower", "rmcp + hand-written")]
    pids = {run[0]: servers[run[0].replace(" refused", "")].proc.pid for run in runs}
    for name, port, _, kind in runs:
        check(name, port, kind, "none" if name == "rmcp plain" else TASK)
    print("body %d bytes, token %d bytes, %d connections, wrk -t1, %d round(s) of %s per scenario, %s warm-up%s"
          % (len(eb.REQS["call"][1]), len(eb.REQS["call"][0][-1][1]), eb.CONNECTIONS, eb.ROUNDS, eb.DURATION,
             eb.WARMUP, ", servers on CPU %s, wrk on CPU %s" % (CPUS[-1], ",".join(map(str, CPUS[:-1]))) if PIN else ""),
          flush=True)
    if eb.warming():
        for run in runs:
            eb.measure(run, eb.WARMUP, work, None)
    rounds = {run[0]: [] for run in runs}
    for i in range(eb.ROUNDS):
        for run in (runs if i % 2 == 0 else runs[::-1]):
            rounds[run[0]].append(eb.measure(run, eb.DURATION, work, pids[run[0]]))
    for s in servers.values():
        s.stop()

    print("\n%-34s %10s %8s %8s %10s %8s   %s" % ("scenario (median of rounds)", "req/s", "p50 ms", "p99 ms",
                                               "CPU us/rq", "status", "req/s per round"))
    for name, rs in rounds.items():
        bad = sum(1 for x in rs if x["wrong"])
        print("%-34s %10.0f %8.3f %8.3f %10.1f %8s   %s" % (
            name, eb.median([x["rps"] for x in rs]), eb.median([x["p50"] for x in rs]),
            eb.median([x["p99"] for x in rs]), eb.median([x["cpu_us"] for x in rs]),
            "ok" if not bad else "%d WRONG" % bad, " ".join("%.0f" % x["rps"] for x in rs)))

    def per_round(label, f, fmt):
        values = [f(lambda n: rounds[n][i]) for i in range(eb.ROUNDS)]
        print("%-66s %s   median %s" % (label, "  ".join(fmt % v for v in values), fmt % eb.median(values)))

    P, T, H = "rmcp plain", "rmcp + toolctx-tower", "rmcp + hand-written"
    print("\nper round (side by side in each round), then the median:")
    per_round("toolctx-tower added CPU per request over plain rmcp, us", lambda r: r(T)["cpu_us"] - r(P)["cpu_us"],
              "%+.1f")
    per_round("hand-written added CPU per request over plain rmcp, us", lambda r: r(H)["cpu_us"] - r(P)["cpu_us"],
              "%+.1f")
    per_round("toolctx-tower / hand-written added CPU per request",
              lambda r: (r(T)["cpu_us"] - r(P)["cpu_us"]) / (r(H)["cpu_us"] - r(P)["cpu_us"]), "%.2f")
    per_round("toolctx-tower / hand-written requests/s", lambda r: r(T)["rps"] / r(H)["rps"], "%.2f")
    per_round("toolctx-tower / hand-written refused requests/s",
              lambda r: r(T + " refused")["rps"] / r(H + " refused")["rps"], "%.2f")
    per_round("toolctx-tower / hand-written CPU per refused request",
              lambda r: r(T + " refused")["cpu_us"] / r(H + " refused")["cpu_us"], "%.2f")
    if any(x["wrong"] for rs in rounds.values() for x in rs):
        sys.exit("some scenario got answers it did not expect (see status)")


if __name__ == "__main__":
    main()
