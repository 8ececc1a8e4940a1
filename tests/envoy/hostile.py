#!/usr/bin/env python3
"""Hostile traffic through a real Envoy with the release toolctx filter
(or, with --module, the dynamic module).

    ENVOY=... tests/envoy/hostile.py [--module] [--count 10000] [--seed 1] [--workers 4]

A seeded generator sends malformed and adversarial requests (mutated tokens
and bodies, odd framing, huge headers, slow and abandoned bodies, pipelines)
with a few hundred valid calls mixed in, minted here with Python's hmac,
independently of toolctx's code. Each request is built from its own RNG
(seed, index), so the classes and mutations are the same on every run
whatever the thread interleaving; tokens are minted when the request is sent
(fresh however long the run), so their bytes, and where a bit flip lands in
them, follow the clock.

Checks: Envoy stays up (same process, /ready LIVE) and its wasm VM is never
recreated or reloaded, with no panic or error in its log; every refusal the
filter returns is well-formed JSON-RPC with a reason, status and code from
the contract's table; everything else Envoy refuses itself is counted apart;
every minted valid call reaches the upstream unchanged, and every request
the upstream saw is judged independently by the core's reference runner
(crates/vectors, run as the core's example), which must reach the filter's verdict:
accept (same context) or pass. The filter's refusals go through the same
runner and must get the same status, code, reason and id.

Only 127.0.0.1; bounded in count and time (--max-seconds); Envoy and the
upstream are always stopped (tests/envoy/harness.py). Prints a summary and
closes with `N passed, N failed`.
"""

import argparse
import collections
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hostile"))
import harness  # noqa: E402
# The generator, the wire and the judge, shared with the npm front end's
# driver (tests/hostile/npm.py); tests/envoy/soak.py imports them from here.
import traffic  # noqa: E402
from traffic import (CONTEXT_CLAIMS, INSTANCE, MIB, SEQ_HEADER, TABLE, Gen, Keys, Req, b64url,  # noqa: E402,F401
                     call_doc, check, compact, core_judgement, fresh_claims, meta_for, mint, results, sign,
                     vector_case)

CONTEXT_HEADER = "x-toolctx-context"
# What Envoy may answer by itself, before the filter, for broken HTTP.
ENVOY_OWN = {400, 413, 431}


def classify(req, status, headers, body):
    traffic.classify(req, status, headers, body, upstream=lambda s, b: s == 200 and b == harness.Recorder.MARKER,
                     own=ENVOY_OWN, own_label="envoy")


def run_connection(port, reqs, timeout=20):
    traffic.run_connection(port, reqs, classify, timeout=timeout)


# ------------------------------------------------------------------ main ----

def envoy_config(admin, ports, upstream_port, wasm, keys):
    main_plugin = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "headers": {"context": CONTEXT_HEADER}}
    cred_plugin = dict(main_plugin, credential={"header": "authorization", "values_env": ["TOOLCTX_CREDENTIAL"]})
    env_keys = ["TOOLCTX_SECRET", "TOOLCTX_CREDENTIAL"]
    listeners = [
        # max_body_bytes 1 MiB under a 2 MiB buffer: the filter answers 413 itself.
        harness.listener("main", ports["main"], [harness.toolctx_filter(wasm, main_plugin, env_keys)]),
        # Envoy's default 1 MiB buffer, equal to max_body_bytes: Envoy may answer 413 first.
        harness.listener("cred", ports["cred"], [harness.toolctx_filter(wasm, cred_plugin, env_keys)], buffer_limit=MIB),
    ]
    return harness.bootstrap(admin, listeners, upstream_port), {"TOOLCTX_SECRET": keys.secret,
                                                                "TOOLCTX_CREDENTIAL": keys.credential}


def wasm_stats(envoy):
    out = {}
    for line in envoy.get("/stats?filter=%5Ewasm%5C.").splitlines():
        name, _, value = line.partition(": ")
        if value.strip().isdigit():
            out[name.strip()] = int(value)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000, help="requests to send (at least)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4, help="client threads")
    ap.add_argument("--slow", type=int, default=4, help="drip-fed bodies, alongside the rest")
    ap.add_argument("--max-seconds", type=float, default=600, help="stop sending after this long")
    args = ap.parse_args()

    wasm_src = harness.artifact()
    work = tempfile.mkdtemp(prefix="toolctx-hostile-")
    wasm = harness.private_copy(wasm_src, work)  # a rebuild during the run must not change what Envoy loads
    keys = Keys(args.seed)
    gen = Gen(keys, args.seed)

    admin, p_main, p_cred = harness.free_ports(3)
    ports = {"main": p_main, "cred": p_cred}
    upstream = harness.Recorder()
    config, env = envoy_config(admin, ports, upstream.port, wasm, keys)
    envoy = harness.Envoy(config, env=dict(env, **harness.module_env(wasm)), concurrency=2)
    envoy.start(admin)
    pid = envoy.proc.pid
    sent = []
    started = time.time()
    try:
        # Warm both listeners, then record the wasm VM figures the run must keep.
        for name in ("main", "cred"):
            r = gen.valid(random.Random("warm:%s" % name))
            r.seq, r.listener = -1 - len(sent), name
            if name == "cred":
                r.headers.append(("authorization", keys.credential))
            r.cls = "warm-up"
            run_connection(ports[name], [r])
            sent.append(r)
        stats0 = wasm_stats(envoy)
        print("envoy pid %d, wasm: %s" % (pid, {k: v for k, v in stats0.items() if "remote" not in k}), flush=True)

        feed = traffic.Feed(gen, args.count, started + args.max_seconds, sent)

        def worker():
            while True:
                reqs = feed.take()
                if reqs is None:
                    return
                pending = reqs
                while pending:
                    try:
                        run_connection(ports[pending[0].listener], pending)
                    except OSError:
                        for r in pending:
                            r.outcome = r.outcome or "none"
                    # Envoy closes a pipelined connection after any local
                    # reply (its own 404 too) and drops what follows: a
                    # client sends the rest again on a new connection.
                    rest = [r for r in pending if r.outcome == "none" and r.cut is None]
                    if len(reqs) == 1 or len(rest) == len(pending):
                        break
                    for r in rest:
                        r.outcome = None
                        r.resent += 1
                    pending = rest

        def slow_worker(k):
            r = gen.slow(random.Random("slow:%d:%d" % (args.seed, k)), k)
            feed.add(r)
            run_connection(ports["main"], [r], timeout=60)

        threads = [threading.Thread(target=slow_worker, args=(k,)) for k in range(args.slow)]
        threads += [threading.Thread(target=worker) for _ in range(args.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.time() - started
        time.sleep(0.3)  # the last log lines

        # ------------------------------------------------------ the checks
        alive = envoy.proc.poll() is None
        ready = envoy.get("/ready").strip() if alive else "dead"
        check("Envoy stays up: same process (pid %d), /ready LIVE" % pid,
              alive and envoy.proc.pid == pid and ready == "LIVE", (alive, ready))
        stats1 = wasm_stats(envoy)
        moved = {k: (stats0.get(k), v) for k, v in stats1.items() if stats0.get(k) != v}
        reloads = {k: v for k, v in stats1.items() if "vm_reload" in k and v}
        if harness.FRONT == "filter":
            check("wasm VMs never recreated or reloaded (wasm.* stats unchanged)",
                  not moved and not reloads and stats1.get("wasm.envoy.wasm.runtime.v8.active", 0) > 0,
                  (moved, reloads))
        log = open(envoy.log_path, errors="replace").read()
        bad_lines = [l for l in log.splitlines()
                     if "panic" in l.lower() or "[critical]" in l
                     or ("[error]" in l and ("wasm" in l.lower() or "dynamic_modules" in l))]
        check("Envoy log: no panic, no critical line, no wasm or module error", not bad_lines, bad_lines[:5])
        gauges = {}
        for _ in range(50):  # bounded: abandoned streams are cleaned up promptly
            gauges = dict(l.split(": ", 1) for l in envoy.get(
                "/stats?filter=%5Ehttp%5C.(main%7Ccred)%5C.downstream_(rq%7Ccx)_active$").splitlines())
            if len(gauges) == 4 and set(gauges.values()) == {"0"}:
                break
            time.sleep(0.1)
        check("no stream or connection left open in Envoy (downstream_rq_active, downstream_cx_active 0)",
              len(gauges) == 4 and set(gauges.values()) == {"0"}, gauges)
        counters = envoy.counters()
        check("filter counted no internal error (toolctx.errors 0)", counters.get("toolctx.errors", 0) == 0,
              counters.get("toolctx.errors"))

        reqs = [r for r in sent if r.cls != "warm-up"]
        n_requests = len(reqs)
        check("sent at least %d requests" % args.count, n_requests >= args.count, n_requests)
        bad = [r for r in reqs if r.outcome == "bad"]
        check("every JSON answer is a well-formed JSON-RPC refusal with a reason, status and code from the "
              "contract, and every other refusal is Envoy's own 400/413/431",
              not bad, [(r.cls, r.seq, r.status, r.reply[:200]) for r in bad[:5]])

        valid = [r for r in reqs if r.expect == "accept"]
        lost = [r for r in valid if r.outcome == "none" and r.cls != "pipeline"]
        wrong = [r for r in valid if r.outcome not in ("upstream", "none")]
        check("every valid call was accepted and reached the upstream (%d)" % len(valid),
              not wrong and not lost, [(r.cls, r.seq, r.status, (r.reply or b"")[:200]) for r in (wrong + lost)[:5]])
        leaked = [r for r in reqs if r.expect in ("refuse", "none") and r.outcome == "upstream"]
        check("no request meant to be refused or abandoned reached the upstream",
              not leaked, [(r.cls, r.seq) for r in leaked[:5]])

        with upstream.lock:
            seen = list(upstream.requests)
        by_seq = {r.seq: r for r in sent}
        orphan, mismatch, dup = [], [], collections.Counter()
        accepted_up = 0
        for u in seen:
            hdr = dict((k.lower(), v) for k, v in u["headers"])
            r = by_seq.get(int(hdr.get(SEQ_HEADER, "-999999")))
            if r is None:
                orphan.append(u)
                continue
            dup[r.seq] += 1
            if u["body"] != r.body or r.outcome != "upstream" or u["method"] != r.method:
                mismatch.append((r.cls, r.seq, r.outcome, len(u["body"]), len(r.body)))
            accepted_up += CONTEXT_HEADER in hdr
        answered_up = [r for r in sent if r.outcome == "upstream"]
        check("the upstream saw only requests answered by it, each once, bodies unchanged (%d)" % len(seen),
              not orphan and not mismatch and max(dup.values() or [1]) == 1 and len(seen) == len(answered_up),
              (len(orphan), mismatch[:5], [s for s, n in dup.items() if n > 1][:5], len(seen), len(answered_up)))
        minted_up = sum(1 for r in answered_up if r.expect == "accept")
        refusals = [r for r in sent if r.outcome == "refused"]
        refused_counted = sum(v for k, v in counters.items() if ".refused." in k)
        check("filter counters agree: accepted %d = upstream requests with a verified context; refused %d >= "
              "refusals answered %d" % (counters.get("toolctx.accepted", 0), refused_counted,
                                        len(refusals)),
              counters.get("toolctx.accepted", 0) == accepted_up and refused_counted >= len(refusals),
              (accepted_up, len(refusals)))

        # Independent verdict: the core's reference runner on the same bytes.
        cases, unjudged = [], 0
        for u in seen:
            hdr = dict((k.lower(), v) for k, v in u["headers"])
            r = by_seq.get(int(hdr.get(SEQ_HEADER, "-1")))
            try:
                headers = [[k, v.encode("latin-1").decode("utf-8")] for k, v in u["headers"]]
            except UnicodeError:
                unjudged += 1
                continue
            ctx = hdr.get(CONTEXT_HEADER)
            expect = {"outcome": "pass"} if ctx is None else \
                {"outcome": "accept", "context": json.loads(urllib.parse.unquote(ctx))}
            cases.append(vector_case(r, headers, u["body"], expect, keys))
        for r in refusals:
            headers = r.head_values()
            if headers is None:
                unjudged += 1
                continue
            rid, code, _, reason = r.rpc
            cases.append(vector_case(r, headers, r.body, {"outcome": "reject", "status": r.status, "code": code,
                                                          "reason": reason, "id": rid}, keys))
        ok, out = core_judgement(cases, keys, work, "requests from tests/envoy/hostile.py, with the verdict Envoy reached")
        tail = out.splitlines()[-1] if out else ""
        check("core reference runner reaches the same verdict for every upstream request and every refusal "
              "(%d cases; %s)" % (len(cases), tail), ok and tail.startswith("%d passed, 0 failed" % len(cases)),
              "\n".join(out.splitlines()[:10]))

        # ------------------------------------------------------ the summary
        print("\nhostile traffic: %d requests in %.1f s (%d workers, %d drip-fed), seed %d"
              % (n_requests, elapsed, args.workers, args.slow, args.seed))
        per = collections.defaultdict(collections.Counter)
        for r in reqs:
            per[r.cls][r.outcome] += 1
        print("%-18s %6s %9s %8s %10s %9s" % ("class", "sent", "upstream", "refused", "envoy-own", "no-answer"))
        for cls in sorted(per):
            c = per[cls]
            print("%-18s %6d %9d %8d %10d %9d" % (cls, sum(c.values()), c["upstream"], c["refused"], c["envoy"],
                                                  c["none"]))
        print("pipelined requests sent again on a new connection after Envoy closed the pipeline "
              "following a local reply: %d" % sum(r.resent for r in reqs))
        reasons = collections.Counter(r.rpc[3] for r in refusals)
        print("refused by the filter, per reason (%d): %s" % (len(refusals), ", ".join(
            "%s %d" % kv for kv in sorted(reasons.items(), key=lambda kv: -kv[1]))))
        seen_reasons = collections.Counter(r.rpc[3] for r in refusals)
        unseen = {k.rsplit(".", 1)[1]: v - seen_reasons[k.rsplit(".", 1)[1]] for k, v in counters.items()
                  if ".refused." in k and v != seen_reasons[k.rsplit(".", 1)[1]]}
        print("refusals counted by the filter that the client got no JSON-RPC answer for (Envoy's own 413 "
              "on the 1 MiB-buffer listener, or a closed connection): %s"
              % (unseen or "none"))
        own = collections.Counter(r.status for r in reqs if r.outcome == "envoy")
        print("refused by Envoy itself, per status: %s" % (dict(sorted(own.items())) or "none"))
        own_cls = collections.Counter("%s %d" % (r.cls, r.status) for r in reqs if r.outcome == "envoy")
        print("  per class: %s" % ", ".join("%s × %d" % kv for kv in sorted(own_cls.items())))
        print("reached the upstream: %d (%d minted valid calls of %d, %d others the core also passes or accepts; "
              "%d with a verified context)" % (len(seen) - 2, minted_up - 2, len(valid), len(seen) - minted_up,
                                              accepted_up - 2))
        print("not judged by the core runner (header bytes not UTF-8): %d" % unjudged)
        print("envoy restarts 0 (pid %d); wasm VMs: %s" % (pid, {k: v for k, v in stats1.items()
                                                                  if "remote" not in k}))
    finally:
        envoy.stop()
        upstream.close()
        if not os.environ.get("TOOLCTX_ENVOY_KEEP_LOG"):
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
