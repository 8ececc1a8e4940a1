#!/usr/bin/env python3
"""Hostile traffic through the ext_authz service behind a real Envoy:
envoy.filters.http.ext_authz (gRPC, the body as bytes, raw headers) ->
`toolctx serve ext-authz`, in front of a recording upstream.

    ENVOY=... tests/ext-authz/hostile.py [--count 10000] [--seed 1] [--workers 4]

The same seeded generator and checks as every front end's driver
(tests/hostile/traffic.py), with the forward settings of the filter's
driver (tests/envoy/hostile.py: the verified context, task_id and the Tuix
headers): two listeners, each with its own service (main; cred, with a
static credential). Checks besides the shared ones: Envoy and both services
stay up, no panic in their logs, the services' counters agree with what the
upstream saw. Envoy answers some broken HTTP itself (400, 413, 431),
counted apart. Needs the build scripts/test-ext-authz makes
(target/ext-authz/toolctx, or TOOLCTX_BIN).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hostile"))
import authz  # noqa: E402
import traffic  # noqa: E402
from authz import harness  # noqa: E402
from traffic import INSTANCE, check  # noqa: E402


class ExtAuthzTarget(traffic.Target):
    """Envoy + ext_authz + two `toolctx serve ext-authz` services."""

    name = "ext_authz"
    own = traffic.GATEWAY_OWN
    forward = traffic.FORWARD
    resend = True

    def view(self, headers):
        return traffic.envoy_view(headers)

    def __init__(self, keys, work):
        self.recorder = harness.Recorder()
        p_main, p_cred, s_main, m_main, s_cred, m_cred, admin = harness.free_ports(7)
        self.ports = {"main": p_main, "cred": p_cred}
        config = dict({"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"]}, **traffic.gateway_settings())
        cred = dict(config, credential={"header": "authorization", "values_env": ["TOOLCTX_CREDENTIAL"]})
        env = {"TOOLCTX_SECRET": keys.secret, "TOOLCTX_CREDENTIAL": keys.credential}
        self.services = {}
        self.envoy = None
        self.stopped = False
        for name, cfg, ports in (("main", config, (s_main, m_main)), ("cred", cred, (s_cred, m_cred))):
            self.services[name] = authz.Service(cfg, env, metrics=True, ports=ports).start()
        max_body = authz.DEFAULT_MAX_BODY_BYTES
        self.envoy, _ = authz.envoy_with([(p_main, s_main, max_body), (p_cred, s_cred, max_body)],
                                         self.recorder.port, admin_port=admin, concurrency=2)
        self.envoy.start(admin)
        self.pids = {"envoy": self.envoy.proc.pid, **{k: s.proc.pid for k, s in self.services.items()}}

    def upstream(self, status, body):
        return status == 200 and body == harness.Recorder.MARKER

    def handed(self):
        return traffic.upstream_entries(self.recorder)

    def alive(self):
        return self.envoy.proc.poll() is None and all(s.proc.poll() is None for s in self.services.values())

    def checks(self, sent):
        ready = self.envoy.get("/ready").strip() if self.alive() else "dead"
        now = {"envoy": self.envoy.proc.pid, **{k: s.proc.pid for k, s in self.services.items()}}
        check("Envoy and both services stay up: same processes %s, /ready LIVE" % self.pids,
              self.alive() and now == self.pids and ready == "LIVE", (now, ready))
        handed, _ = self.handed()
        accepted_up = sum(1 for es in handed.values() if es[0]["context"] is not None)
        m = {k: s.metrics() for k, s in self.services.items()}
        accepted = sum(x.get("toolctx_accepted", 0) for x in m.values())
        errors = sum(x.get("toolctx_errors", 0) for x in m.values())
        refused = sum(v for x in m.values() for k, v in x.items() if k.startswith("toolctx_refused_"))
        answered = sum(1 for r in sent if r.outcome == "refused")
        self.counted = (accepted, refused, errors)
        check("service counters agree: accepted %d = upstream requests with a verified context %d; refused %d >= "
              "refusals answered %d; errors 0 (%d)" % (accepted, accepted_up, refused, answered, errors),
              accepted == accepted_up and refused >= answered and errors == 0)

    def errors(self):
        out = []
        for s in self.services.values():
            out += [l for l in s.text().splitlines() if "panic" in l.lower()]
        try:
            log = open(self.envoy.log_path, errors="replace").read()
        except OSError:
            log = ""
        return out + [l for l in log.splitlines() if "panic" in l.lower() or "[critical]" in l]

    def stop(self):
        if not self.stopped:
            self.stopped = True
            if self.envoy is not None:
                self.envoy.stop()
            for s in self.services.values():
                s.stop()
            self.recorder.close()
        return {"envoy": None, **{"service " + k: None for k in self.services}}

    def summary(self, sent):
        return ["service counters: accepted %d, refused %d, errors %d" % self.counted]


def main():
    return traffic.main(lambda _name, keys, work: (ExtAuthzTarget(keys, work),
                                                   "Envoy with ext_authz and toolctx serve ext-authz", "search"),
                        __doc__, max_seconds=600)


if __name__ == "__main__":
    sys.exit(main())
