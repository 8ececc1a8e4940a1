#!/usr/bin/env python3
"""What the ext_authz hop costs (not a test), run by bench/ext-authz.sh.

The same valid ~1 KB `tools/call` with the same HS256 token, driven by wrk
on 127.0.0.1 through one front Envoy (one worker) with one listener per
scenario:
  envoy plain                  router only
  envoy + wasm filter          toolctx's proxy-wasm filter in the VM
  envoy + ext_authz + toolctx  envoy.filters.http.ext_authz (gRPC, body as
                               bytes, raw headers) -> `toolctx serve
                               ext-authz` (the release build)
  envoy + jwt_authn            the built-in jwt_authn (token only, no cache)
The upstream is a second Envoy answering 200 from a direct_response, as in
bench/envoy_bench.py, whose pieces (token, upstream, jwt_authn, wrk) this
reuses.

The machine is small and shared: every scenario runs in BENCH_ROUNDS
interleaved rounds (default 3) and is reported by its median round
(requests/s and p99 from that round); every round's requests/s is printed.
CPU per request is the front Envoy's and, for ext_authz, the service's too.
"""

import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "ext-authz"))
import authz  # noqa: E402
import envoy_bench as eb  # noqa: E402
from authz import harness  # noqa: E402

ROUNDS = eb.ROUNDS
TOOLCTX_RELEASE = os.environ.get("TOOLCTX_BIN") or os.path.join(harness.ROOT, "target", "release", "toolctx")


def main():
    wasm = os.environ.get("TOOLCTX_ENVOY_WASM") or os.path.join(harness.ROOT, "target", "envoy", "toolctx_envoy.wasm")
    work = tempfile.mkdtemp(prefix="toolctx-bench-")
    up_admin, up_port, admin, plain, filt, authz_port, jwt, svc_port, svc_metrics = harness.free_ports(9)
    upstream = harness.Envoy(eb.upstream_config(up_admin, up_port)).start(up_admin)
    plugin = {"instance_id": eb.INSTANCE, "secret_env": ["TOOLCTX_SECRET"],
              "headers": {"task_id": "x-toolctx-task-id", "idempotency_key": "x-toolctx-idempotency-key"}}
    service = authz.Service(plugin, {"TOOLCTX_SECRET": eb.SECRET}, TOOLCTX_RELEASE, metrics=True,
                            ports=(svc_port, svc_metrics)).start()
    listeners = [
        harness.listener("plain", plain, []),
        harness.listener("wasm", filt, [harness.wasm_filter(wasm, plugin, ["TOOLCTX_SECRET"])]),
        harness.listener("authz", authz_port, [authz.ext_authz_filter("toolctx_authz")]),
        harness.listener("jwt", jwt, [eb.jwt_filter(False)]),
    ]
    boot = harness.bootstrap(admin, listeners, up_port)
    boot["static_resources"]["clusters"].append(authz.cluster("toolctx_authz", svc_port))
    front = harness.Envoy(boot, env={"TOOLCTX_SECRET": eb.SECRET})
    front.start(admin)
    eb.REQS.update(eb.requests())
    headers, body, _ = eb.REQS["call"]
    token = dict(headers)["x-agentarea-context"]
    scenarios = [("envoy plain", plain), ("envoy + wasm filter", filt), ("envoy + ext_authz + toolctx", authz_port),
                 ("envoy + jwt_authn", jwt)]
    runs = [(name, port, "h1", "call") for name, port in scenarios]
    eb.check_answers(runs)
    rounds = {name: [] for name, _ in scenarios}
    print("body %d bytes, token %d bytes, %d connections, wrk -t1, front Envoy 1 worker, %d round(s) of %s per "
          "scenario, %s warm-up" % (len(body), len(token), eb.CONNECTIONS, ROUNDS, eb.DURATION, eb.WARMUP), flush=True)
    if eb.warming():
        for run in runs:
            eb.measure(run, eb.WARMUP, work, None)
    for i in range(ROUNDS):
        for run in (runs if i % 2 == 0 else runs[::-1]):
            s0 = eb.cpu_seconds(service.proc.pid)
            r = eb.measure(run, eb.DURATION, work, front.proc.pid)
            r["svc_cpu_us"] = (eb.cpu_seconds(service.proc.pid) - s0) * 1e6 / max(1, r["total"])
            rounds[run[0]].append(r)
    print("%-30s %12s %10s %10s %12s %12s   %s" % ("scenario", "requests/s", "p50 ms", "p99 ms", "envoy us/rq",
                                                   "service us/rq", "requests/s per round"))
    med = {}
    for name, _ in scenarios:
        ordered = sorted(rounds[name], key=lambda x: x["rps"])
        r = ordered[len(ordered) // 2]
        med[name] = r
        bad = [x for x in rounds[name] if x["wrong"]]
        note = "" if not bad else "  (errors: %s)" % ["%d non-2xx %s" % (x["non2xx"], x["errors"]) for x in bad]
        print("%-30s %12.0f %10.3f %10.3f %12.1f %12.1f   %s%s" % (
            name, r["rps"], r["p50"], r["p99"], statistics.median(x["cpu_us"] for x in rounds[name]),
            statistics.median(x["svc_cpu_us"] for x in rounds[name]) if "ext_authz" in name else 0.0,
            " ".join("%.0f" % x["rps"] for x in rounds[name]), note))
    cpu = {name: statistics.median(x["cpu_us"] for x in rounds[name]) for name in rounds}
    svc_cpu = statistics.median(x["svc_cpu_us"] for x in rounds["envoy + ext_authz + toolctx"])
    a, w, j, p = (med["envoy + ext_authz + toolctx"], med["envoy + wasm filter"], med["envoy + jwt_authn"],
                  med["envoy plain"])
    print("ext_authz / wasm filter requests/s: %.2f; ext_authz / jwt_authn: %.2f" % (a["rps"] / w["rps"],
                                                                                  a["rps"] / j["rps"]))
    print("p99 over plain Envoy: ext_authz %+.3f ms, wasm filter %+.3f ms, jwt_authn %+.3f ms"
          % (a["p99"] - p["p99"], w["p99"] - p["p99"], j["p99"] - p["p99"]))
    m = service.metrics()
    print("service counters: accepted %s, refused %s, errors %s" % (
        m.get("toolctx_accepted"), sum(v for k, v in m.items() if k.startswith("toolctx_refused_")),
        m.get("toolctx_errors")))
    print("CPU per request over plain Envoy: wasm filter %+.1f us; ext_authz %+.1f us in Envoy and %.1f us in "
          "the service; jwt_authn %+.1f us" % (
              cpu["envoy + wasm filter"] - cpu["envoy plain"], cpu["envoy + ext_authz + toolctx"] - cpu["envoy plain"],
              svc_cpu, cpu["envoy + jwt_authn"] - cpu["envoy plain"]))
    front.stop()
    service.stop()
    upstream.stop()


if __name__ == "__main__":
    main()
