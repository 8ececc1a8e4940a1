#!/usr/bin/env python3
"""Hostile traffic through a real Envoy with the release toolctx filter.

    ENVOY=... tests/envoy/hostile.py [--count 10000] [--seed 1] [--workers 4]

The seeded generator of tests/hostile/traffic.py sends malformed and
adversarial requests (mutated tokens and bodies, odd framing, huge headers,
slow and abandoned bodies, pipelines, spoofed forwarded headers) with a few
hundred valid calls mixed in, minted with Python's hmac, independently of
toolctx's code; traffic.drive runs the checks every front end shares (every
refusal well-formed and from the contract's table, every valid call handed
on, nothing meant to be refused handed on, the core's reference runner
reaching the same verdict for every request and the same forwarded headers
for every one handed on).

This driver adds Envoy's own: Envoy stays up (same process, /ready LIVE)
and its wasm VM is never recreated or reloaded, with no panic or error in
its log; no stream left open; the filter's counters agree with what the
upstream saw. Envoy answers some broken HTTP itself (400, 413, 431),
counted apart. The filter forwards the verified context
(x-toolctx-context), task_id (x-toolctx-task-id) and the Tuix headers.

Only 127.0.0.1; bounded in count and time (--max-seconds); Envoy and the
upstream are always stopped (tests/envoy/harness.py). Prints a summary and
closes with `N passed, N failed`.
"""

import collections
import os
import random
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hostile"))
import harness  # noqa: E402
# The generator, the wire, the driver and the judge, shared with every
# front end's driver; tests/envoy/soak.py imports them from here.
import traffic  # noqa: E402
from traffic import INSTANCE, MIB, Keys, call_doc, check, compact, fresh_claims, mint, results  # noqa: E402,F401
from traffic import FORWARD, gateway_settings, upstream_entries  # noqa: E402

# What Envoy may answer by itself, before the filter, for broken HTTP.
ENVOY_OWN = traffic.GATEWAY_OWN




class EnvoyTarget(traffic.Target):
    """Envoy with the release filter on two listeners (main; cred, with a
    static credential), in front of a recording upstream."""

    name = "envoy"
    own = ENVOY_OWN
    forward = FORWARD
    resend = True

    def view(self, headers):
        return traffic.envoy_view(headers)

    def __init__(self, keys, work):
        # The filter or the module (--module); a rebuild during the run must
        # not change what Envoy loads.
        wasm = harness.private_copy(harness.artifact(), work)
        self.keys = keys
        admin, p_main, p_cred = harness.free_ports(3)
        self.ports = {"main": p_main, "cred": p_cred}
        self.recorder = harness.Recorder()
        main_plugin = dict({"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"]}, **gateway_settings())
        cred_plugin = dict(main_plugin, credential={"header": "authorization", "values_env": ["TOOLCTX_CREDENTIAL"]})
        env_keys = ["TOOLCTX_SECRET", "TOOLCTX_CREDENTIAL"]
        listeners = [
            # max_body_bytes 1 MiB under a 2 MiB buffer: the filter answers 413 itself.
            harness.listener("main", p_main, [harness.toolctx_filter(wasm, main_plugin, env_keys)]),
            # Envoy's default 1 MiB buffer, equal to max_body_bytes: Envoy may answer 413 first.
            harness.listener("cred", p_cred, [harness.toolctx_filter(wasm, cred_plugin, env_keys)], buffer_limit=MIB),
        ]
        self.envoy = harness.Envoy(harness.bootstrap(admin, listeners, self.recorder.port),
                                   env=dict({"TOOLCTX_SECRET": keys.secret, "TOOLCTX_CREDENTIAL": keys.credential},
                                            **harness.module_env(wasm)),
                                   concurrency=2)
        self.envoy.start(admin)
        self.pid = self.envoy.proc.pid
        self.stopped = False

    def warm_up(self, gen):
        """Both listeners, then the wasm VM figures the run must keep."""
        out = []
        for name in ("main", "cred"):
            r = gen.valid(random.Random("warm:%s" % name))
            r.seq, r.listener, r.cls = -1 - len(out), name, "warm-up"
            if name == "cred":
                r.headers.append(("authorization", self.keys.credential))
            traffic.run_connection(self.ports[name], [r], self.classify)
            out.append(r)
        self.stats0 = self.envoy.stats("wasm.")
        print("envoy pid %d, wasm: %s" % (self.pid, {k: v for k, v in self.stats0.items() if "remote" not in k}),
              flush=True)
        return out

    def classify(self, req, status, headers, body):
        traffic.classify(req, status, headers, body, upstream=self.upstream, own=self.own, own_label="own")

    def upstream(self, status, body):
        return status == 200 and body == harness.Recorder.MARKER

    def handed(self):
        return upstream_entries(self.recorder)

    def alive(self):
        return self.envoy.proc.poll() is None

    def checks(self, sent):
        time.sleep(0.3)  # the last log lines
        alive = self.alive()
        ready = self.envoy.get("/ready").strip() if alive else "dead"
        check("Envoy stays up: same process (pid %d), /ready LIVE" % self.pid,
              alive and self.envoy.proc.pid == self.pid and ready == "LIVE", (alive, ready))
        self.stats1 = self.envoy.stats("wasm.")
        moved = {k: (self.stats0.get(k), v) for k, v in self.stats1.items() if self.stats0.get(k) != v}
        reloads = {k: v for k, v in self.stats1.items() if "vm_reload" in k and v}
        if harness.FRONT == "filter":
            check("wasm VMs never recreated or reloaded (wasm.* stats unchanged)",
                  not moved and not reloads and self.stats1.get("wasm.envoy.wasm.runtime.v8.active", 0) > 0,
                  (moved, reloads))
        gauges = {}
        for _ in range(50):  # bounded: abandoned streams are cleaned up promptly
            gauges = dict(l.split(": ", 1) for l in self.envoy.get(
                "/stats?filter=%5Ehttp%5C.(main%7Ccred)%5C.downstream_(rq%7Ccx)_active$").splitlines())
            if len(gauges) == 4 and set(gauges.values()) == {"0"}:
                break
            time.sleep(0.1)
        check("no stream or connection left open in Envoy (downstream_rq_active, downstream_cx_active 0)",
              len(gauges) == 4 and set(gauges.values()) == {"0"}, gauges)
        self.counters = self.envoy.counters()
        check("filter counted no internal error (toolctx.errors 0)",
              self.counters.get("toolctx.errors", 0) == 0, self.counters.get("toolctx.errors"))
        handed, _ = self.handed()
        accepted_up = sum(1 for es in handed.values() if es[0]["context"] is not None)
        refused_counted = sum(v for k, v in self.counters.items() if ".refused." in k)
        self.refused_counted = {k.rsplit(".", 1)[1]: v for k, v in self.counters.items() if ".refused." in k}
        answered = sum(1 for r in sent if r.outcome == "refused")
        check("filter counters agree: accepted %d = upstream requests with a verified context %d; refused %d >= "
              "refusals answered %d" % (self.counters.get("toolctx.accepted", 0), accepted_up,
                                        refused_counted, answered),
              self.counters.get("toolctx.accepted", 0) == accepted_up and refused_counted >= answered)

    def errors(self):
        try:
            log = open(self.envoy.log_path, errors="replace").read()
        except OSError:
            return []
        return [l for l in log.splitlines()
                if "panic" in l.lower() or "[critical]" in l
                or ("[error]" in l and ("wasm" in l.lower() or "dynamic_modules" in l))]

    def stop(self):
        if not self.stopped:
            self.stopped = True
            self.envoy.stop()
            self.recorder.close()
        return {"envoy": None}

    def summary(self, sent):
        refusals = collections.Counter(r.rpc[3] for r in sent if r.outcome == "refused")
        unseen = {k: v - refusals[k] for k, v in self.refused_counted.items() if v != refusals[k]}
        return ["refusals counted by the filter that the client got no JSON-RPC answer for (Envoy's own 413 on "
                "the 1 MiB-buffer listener, or a closed connection): %s" % (unseen or "none"),
                "envoy restarts 0 (pid %d); wasm VMs: %s" % (self.pid, {k: v for k, v in self.stats1.items()
                                                                         if "remote" not in k})]


def main():
    return traffic.main(lambda _name, keys, work: (EnvoyTarget(keys, work), "Envoy with the toolctx filter",
                                                   "search"), __doc__, max_seconds=600)


if __name__ == "__main__":
    sys.exit(main())
