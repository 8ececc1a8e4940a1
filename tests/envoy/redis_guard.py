#!/usr/bin/env python3
"""The dynamic module's fleet-wide replay guard (replay_guard.redis_url_env)
with real parts: Debian's redis-server and two Envoy 1.40 processes ("two
pods", the first with two workers) loading the release module, all on
127.0.0.1, a recording upstream behind both. Module only (the filter
refuses a Redis guard at load).

  two pods     a token accepted by one pod is refused token_replayed by the
               other (and by itself), a fresh one is accepted; the same
               token sent to both pods at once is accepted exactly once
  refusing     Redis answers the claim with an error (maxmemory reached):
               refused 500 internal_error, nothing handed on
  paused       redis-server stopped (SIGSTOP) mid-run: every call refused
               500 internal_error within the timeout, a stream reset while
               its claim waits harms nothing, none handed on; after SIGCONT
               calls pass again
  killed       redis-server killed (SIGKILL) mid-run: refused 500
               internal_error at once, none handed on; started again on the
               same port, calls pass without restarting Envoy
  panic        the test-crash module panics in the scheduled hook that
               settles a claim: that call is refused 500 internal_error,
               Envoy goes on serving

Every answer is checked against what reached the upstream: a call is
handed on exactly when it was answered 200, and never twice (the
upstream sees each jti at most once).

    ENVOY=... REDIS_SERVER=redis-server tests/envoy/redis_guard.py --module

Prints `ok - ...`, `FAIL - ...` and `info - ...` lines, then `N passed, N failed`.
"""

import json
import os
import secrets
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from e2e import INSTANCE, SECRET, call_body, check, claims, mint, results, rpc_error, send  # noqa: E402

TIMEOUT = 0.5  # toolctx_gateway_config::REDIS_TIMEOUT
PREFIX = "toolctx:envoy-test:%s:" % secrets.token_hex(4)
ENV = {"TOOLCTX_SECRET": SECRET}
PLUGIN = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
          "replay_guard": {"redis_url_env": "TOOLCTX_REDIS_URL", "redis_key_prefix": PREFIX},
          "headers": {"jti": "x-toolctx-jti"}}
HEADERS = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


class Pods:
    """Two Envoys with the module and one Redis URL, and what their answers
    and the upstream saw."""

    def __init__(self, redis, upstream, variant="release", pods=(2, 1)):
        self.upstream = upstream
        env = dict(ENV, TOOLCTX_REDIS_URL="redis://127.0.0.1:%d/0" % redis.port)
        module = harness.artifact(variant)
        self.ports = []
        self.envoys = []
        for concurrency in pods:
            admin, listen = harness.free_ports(2)
            listeners = [harness.listener("pod", listen, [harness.toolctx_filter(module, PLUGIN, ENV)])]
            e = harness.Envoy(harness.bootstrap(admin, listeners, upstream.port), env=env,
                              concurrency=concurrency)
            e.start(admin)
            self.envoys.append(e)
            self.ports.append(listen)
        self.lock = threading.Lock()
        self.answers = []  # (jti, status, reason, seconds)

    def call(self, pod, c=None, token=None, extra=()):
        c = c or claims()
        tok = token or mint(c)
        t0 = time.time()
        try:
            status, _, body = send(self.ports[pod], HEADERS + [("x-agentarea-context", tok)] + list(extra),
                                   call_body(c))
            err = rpc_error(body)
            reason = err[2] if err else None
        except OSError as e:
            status, reason = None, repr(e)
        took = time.time() - t0
        with self.lock:
            self.answers.append((c["jti"], status, reason, took))
        return status, reason, took

    def handed_on(self):
        """jti -> how many times it reached the upstream."""
        seen = {}
        with self.upstream.lock:
            for r in self.upstream.requests:
                for k, v in r["headers"]:
                    if k.lower() == "x-toolctx-jti":
                        seen[v] = seen.get(v, 0) + 1
        return seen

    def alive(self):
        return all(e.proc.poll() is None for e in self.envoys)

    def logs(self):
        return "".join(open(e.log_path).read() for e in self.envoys)

    def counters(self):
        total = {}
        for e in self.envoys:
            for k, v in e.counters().items():
                total[k] = total.get(k, 0) + v
        return total


def run_concurrently(pods, n, during=None, at=0.0):
    """`n` calls with fresh tokens from 4 threads over both pods; `during`
    runs `at` seconds after they start."""
    out = []
    lock = threading.Lock()
    counter = iter(range(n))

    def worker():
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            r = pods.call(i % 2)
            with lock:
                out.append(r)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    if during:
        time.sleep(at)
        during()
    for t in threads:
        t.join()
    return out


def test_two_pods(pods, redis):
    c = claims()
    tok = mint(c)
    first = pods.call(0, c, tok)
    other = pods.call(1, c, tok)
    again = pods.call(0, c, tok)
    check("two pods: a token accepted by pod A is refused token_replayed by pod B and by A again",
          first[0] == 200 and other[:2] == (401, "token_replayed") and again[:2] == (401, "token_replayed"),
          (first, other, again))
    with pods.upstream.lock:
        got = [r for r in pods.upstream.requests if ("x-toolctx-jti", c["jti"]) in
               [(k.lower(), v) for k, v in r["headers"]]]
    check("two pods: the accepted call reached the upstream once, its body whole and its verified header "
          "added after the claim", len(got) == 1 and got[0]["body"] == call_body(c), len(got))
    ttl = redis.command("PTTL", PREFIX + c["jti"])
    ms = int(ttl[1:].strip()) if ttl.startswith(b":") else -1
    check("two pods: the token id is one key in Redis, kept until exp + clock skew (the core's SET NX PX)",
          300_000 < ms <= 330_000, ttl)
    fresh = pods.call(1)
    check("two pods: a fresh token is accepted by pod B", fresh[0] == 200, fresh)
    # One token to both pods at once, over and over: accepted once each time.
    rounds, good = 6, 0
    for _ in range(rounds):
        c = claims()
        tok = mint(c)
        got = []
        threads = [threading.Thread(target=lambda i=i: got.append(pods.call(i % 2, c, tok))) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = sorted(g[0] for g in got)
        good += statuses == [200] + [401] * 5 and all(g[1] == "token_replayed" for g in got if g[0] == 401)
    check("two pods: the same token sent 6 times at once across both pods (3 workers) is accepted once "
          "(%d of %d rounds)" % (good, rounds), good == rounds)


def test_refusing(pods, redis):
    redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
    redis.command("CONFIG", "SET", "maxmemory", "1")
    got = [pods.call(i % 2) for i in range(4)]
    redis.command("CONFIG", "SET", "maxmemory", "0")
    check("refusing: Redis answers the claim with an error (maxmemory): refused 500 internal_error",
          all(g[:2] == (500, "internal_error") for g in got), got)
    after = [pods.call(i % 2) for i in range(2)]
    check("refusing: once Redis takes writes again, calls pass", all(g[0] == 200 for g in after), after)


def test_paused(pods, redis):
    before = [pods.call(i % 2) for i in range(4)]
    check("paused: calls pass before the pause", all(g[0] == 200 for g in before), before)
    # Mid-run: 40 calls from 4 threads, Redis stopped shortly after they start.
    mid = run_concurrently(pods, 40, during=lambda: redis.signal(signal.SIGSTOP), at=0.05)
    statuses = [g[0] for g in mid]
    refused = [g for g in mid if g[0] == 500]
    check("paused: mid-run every call is accepted (before the pause) or refused 500 internal_error "
          "(%d passed, %d refused)" % (statuses.count(200), len(refused)),
          all(g[0] == 200 or g[:2] == (500, "internal_error") for g in mid) and refused, mid)
    slow = max(g[2] for g in refused) if refused else 0
    # How fast is the benchmark's business; printed, never judged.
    print("info - paused: slowest refusal %.3f s (timeout %.1f s)" % (slow, TIMEOUT), flush=True)
    # A stream reset while its claim waits: nothing breaks, nothing is handed on.
    reset = claims()
    s = socket.create_connection(("127.0.0.1", pods.ports[0]), timeout=5)
    body = call_body(reset)
    head = ("POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            "x-agentarea-context: %s\r\ncontent-length: %d\r\n\r\n" % (mint(reset), len(body))).encode()
    s.sendall(head + body)
    time.sleep(0.1)
    s.close()
    still = [pods.call(i % 2) for i in range(4)]
    check("paused: later calls are each refused 500 internal_error",
          all(g[:2] == (500, "internal_error") for g in still), still)
    redis.signal(signal.SIGCONT)
    time.sleep(0.2)
    after = [pods.call(i % 2) for i in range(6)]
    check("paused: after SIGCONT calls pass again (no Envoy restart), and the reset stream did no harm",
          all(g[0] == 200 for g in after) and pods.alive(), after)
    check("paused: the stream reset while its claim waited never reached the upstream",
          reset["jti"] not in pods.handed_on())


def test_killed(pods, redis):
    mid = run_concurrently(pods, 40, during=redis.kill, at=0.05)
    refused = [g for g in mid if g[0] == 500]
    check("killed: mid-run every call is accepted (before the kill) or refused 500 internal_error "
          "(%d passed, %d refused)" % (len(mid) - len(refused), len(refused)),
          all(g[0] == 200 or g[:2] == (500, "internal_error") for g in mid) and refused, mid)
    down = [pods.call(i % 2) for i in range(6)]
    check("killed: with Redis gone every call is refused 500 internal_error",
          all(g[:2] == (500, "internal_error") for g in down), down)
    again = harness.Redis(redis.port)
    after = [pods.call(i % 2) for i in range(4)]
    check("killed: redis-server started again on the same port: calls pass without restarting Envoy",
          all(g[0] == 200 for g in after), after)
    return again


def test_panic(redis, upstream):
    crash = Pods(redis, upstream, variant="test_crash", pods=(1,))
    try:
        before = len(upstream.requests)
        got = [crash.call(0, extra=[("x-toolctx-test-crash", "scheduled")]) for _ in range(3)]
        after = [crash.call(0) for _ in range(2)]
        check("panic: a panic in the scheduled hook refuses that call 500 internal_error and reaches nothing; "
              "Envoy goes on serving", all(g[:2] == (500, "internal_error") for g in got)
              and all(g[0] == 200 for g in after) and len(upstream.requests) == before + 2
              and crash.alive() and "panic, the request is refused with 500" in crash.logs(), (got, after))
    finally:
        crash.envoys[0].stop()
    return crash.answers


def main():
    if harness.FRONT != "module":
        sys.exit("tests/envoy/redis_guard.py is for the dynamic module: run it with --module")
    upstream = harness.Recorder()
    redis = harness.Redis()
    pods = None
    try:
        pods = Pods(redis, upstream)
        test_two_pods(pods, redis)
        test_refusing(pods, redis)
        test_paused(pods, redis)
        redis = test_killed(pods, redis)
        crashed = test_panic(redis, upstream)
        # Every answer against the upstream: handed on exactly when 200, never twice.
        seen = pods.handed_on()
        answered = {}
        for jti, status, _, _ in pods.answers + crashed:
            answered.setdefault(jti, []).append(status)
        wrong = [(j, st, seen.get(j, 0)) for j, st in answered.items() if seen.get(j, 0) != st.count(200)]
        check("upstream: every call answered 200 reached it once, no refused one reached it "
              "(%d token ids, %d answers)" % (len(answered), len(pods.answers) + len(crashed)),
              not wrong, wrong[:5])
        check("upstream: no token id reached it twice", all(n == 1 for n in seen.values()),
              [j for j, n in seen.items() if n > 1][:5])
        refused_500 = sum(1 for a in pods.answers if a[1] == 500)
        counters = pods.counters()
        check("counters: toolctx.refused.internal_error counts every 500 (%d), toolctx.accepted every 200"
              % refused_500,
              counters.get("toolctx.refused.internal_error") == refused_500
              and counters.get("toolctx.accepted") == sum(1 for a in pods.answers if a[1] == 200),
              {k: v for k, v in counters.items() if v})
        text = pods.logs()
        check("logs: say why (Redis did not answer in time, cannot connect, refused the claim), "
              "never the URL", "replay guard: Redis did not answer in time" in text
              and "replay guard: cannot connect to Redis" in text and "Redis refused the claim (OOM" in text
              and "Redis answers again" in text and "redis://" not in text,
              text[-2000:])
        check("both Envoys kept serving throughout", pods.alive())
        print("info - module fault run: %s" % json.dumps({
            "answers": len(pods.answers), "passed": sum(1 for a in pods.answers if a[1] == 200),
            "refused_internal_error": refused_500,
            "token_replayed": sum(1 for a in pods.answers if a[2] == "token_replayed")}), flush=True)
    finally:
        if pods:
            for e in pods.envoys:
                e.stop()
        redis.stop()
        upstream.close()
    failed = results.count(False)
    print("%d passed, %d failed" % (results.count(True), failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
