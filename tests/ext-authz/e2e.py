#!/usr/bin/env python3
"""End to end: real Envoy with `envoy.filters.http.ext_authz` in front of
the real MCP server (tests/envoy/upstream, the official TypeScript SDK), and
`toolctx serve ext-authz` deciding, with tokens minted here with hmac
(tests/envoy/e2e.py's helpers), independently of toolctx's own code.

One Envoy, one listener per service:
  main    AgentArea with a static credential, mapped context headers,
          Tuix `_meta` headers, the Prometheus endpoint; Envoy health-checks
          it over grpc.health.v1
  redis1, redis2
          two replicas sharing one Redis (Debian's redis-server on
          127.0.0.1) as replay guard: a token accepted by one is refused by
          the other; with Redis stopped, calls are refused with 500
  memory  the in-process replay guard
  aivax   the AIVAX profile (nonces from Python's bcrypt), then a graceful
          shutdown with a slow (cost 12) check in flight

and then examples/envoy-ext-authz (envoy.yaml and toolctx.json) as written.

    ENVOY=... REDIS_SERVER=redis-server .tools/venv/bin/python tests/ext-authz/e2e.py

Prints `ok - ...` or `FAIL - ...` per check and closes with `N passed, N failed`.
"""

import json
import os
import re
import secrets
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import authz  # noqa: E402
from prometheus import Prometheus  # noqa: E402
from authz import harness  # noqa: E402

sys.path.insert(0, harness.HERE)
from e2e import (CREDENTIAL, INSTANCE, MAPPED, MAX_BODY, PREVIOUS, SECRET,  # noqa: E402
                 UNKNOWN, Upstream, call_body, check, chunked_over_limit_refused, claims, forwarding_checks, mcp_headers, mint,
                 refusal_cases, results, rpc_error, send, slow_body_is_held, tool_result)
from e2e_conventions import AIVAX_HEADERS, HOOK_KEY, aivax_body, aivax_meta, nonce  # noqa: E402

ENV = {"TOOLCTX_SECRET": SECRET, "TOOLCTX_SECRET_PREVIOUS": PREVIOUS, "TOOLCTX_CREDENTIAL": CREDENTIAL,
       "TOOLCTX_AIVAX_HOOK_KEY": HOOK_KEY}
TUIX = {"sessionId": "X-Session-Id", "idempotencyKey": "X-Idempotency-Key"}
MAIN = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET", "TOOLCTX_SECRET_PREVIOUS"],
        "credential": {"header": "Authorization", "values_env": ["TOOLCTX_CREDENTIAL"]},
        "max_body_bytes": MAX_BODY, "headers": MAPPED, "meta_headers": TUIX}
REPLAY = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "headers": {"task_id": "x-toolctx-task-id"}}
JSON_HEADERS = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


def test_main(port, svc, envoy, upstream, admin):
    accepted, refused, tokens = 0, {}, []
    clusters = ""
    for _ in range(40):
        clusters = envoy.get("/clusters")
        if re.search(r"^authz_0::127\.0\.0\.1:%d::health_flags::healthy$" % svc.port, clusters, re.M):
            break
        time.sleep(0.1)
    check("Envoy's gRPC health check (grpc.health.v1) sees the service healthy",
          "authz_0::127.0.0.1:%d::health_flags::healthy" % svc.port in clusters,
          [l for l in clusters.splitlines() if "authz_0" in l and "health" in l])

    accepted += forwarding_checks(port, upstream, tokens)

    accepted += slow_body_is_held(port, upstream)

    now = int(time.time())
    good = claims()
    tokens.append(mint(good))
    for reason, status_want, code, rpc_id, headers, body in refusal_cases(good, now):
        before = upstream.count()
        status, rh, reply = send(port, headers, body)
        err = rpc_error(reply)
        ctype = dict(rh).get("content-type", "")
        refused[reason] = refused.get(reason, 0) + 1
        check("refused %s: %d JSON-RPC %d, upstream saw nothing" % (reason, status_want, code),
              status == status_want and err == (rpc_id, code, reason) and ctype == "application/json"
              and upstream.count() == before, (status, rh, reply[:200], upstream.count() - before))
    chunked_over_limit_refused(port, upstream, good, refused)

    m = svc.metrics()
    check("counter toolctx_accepted counts the accepted calls", m.get("toolctx_accepted") == accepted, (accepted, m))
    wrong = {r: (k, m.get("toolctx_refused_" + r)) for r, k in refused.items() if m.get("toolctx_refused_" + r) != k}
    check("counters toolctx_refused_<reason> count each refusal", not wrong, wrong)
    check("counter toolctx_passed counts passing requests", m.get("toolctx_passed", 0) >= 3, m.get("toolctx_passed"))
    check("counter toolctx_errors is zero", m.get("toolctx_errors") == 0, m.get("toolctx_errors"))
    prometheus_checks(svc, accepted, refused)

    dump = envoy.get("/config_dump")
    check("/config_dump holds no secret or credential", all(s not in dump for s in (SECRET, PREVIOUS, CREDENTIAL)))
    time.sleep(0.2)
    log = svc.text()
    lines = [ln for ln in log.splitlines() if "toolctx: refused" in ln]
    check("one log line per refusal with reason, status and Envoy's request id",
          len(lines) == sum(refused.values())
          and all(re.search(r"refused \w+ status=\d+ request_id=[0-9a-f-]{36} rpc_id=", ln) for ln in lines),
          (len(lines), sum(refused.values()), lines[:2]))
    leaked = [s for s in [SECRET, PREVIOUS, CREDENTIAL] + tokens if s in log + envoy.tail(400)]
    check("the service's and Envoy's logs hold no token, secret or credential", not leaked, len(leaked))


def prometheus_checks(svc, accepted, refused):
    """A real Prometheus scrapes the service: its query API gives the same
    toolctx_verdicts_total as the service's /metrics and this test's counts."""
    served = svc.verdicts()
    want = dict({"reject/" + r: k for r, k in refused.items()}, accept=accepted, **{"pass": served.get("pass", 0)})
    check("toolctx_verdicts_total on /metrics: this test's accepted and refused counts",
          served == want, (served, want))
    rules = os.path.join(harness.ROOT, "examples", "prometheus", "envoy-filter.rules.yml")
    prom = Prometheus(svc.metrics_port, rules=[rules])
    try:
        seen = prom.wait_for(served)
        print("# ext_authz verdicts: test %s; Prometheus %s" % (json.dumps(want, sort_keys=True), json.dumps(seen, sort_keys=True)))
        check("Prometheus scraping the service returns the same toolctx_verdicts_total", seen == served, (seen, served))
        # The service's alias counters are named as the filter's in Envoy's /stats/prometheus.
        recorded = prom.wait_for(served, source="envoy-filter")
        check("examples/prometheus/envoy-filter.rules.yml turns the filter's counters into the same "
              "toolctx_verdicts_total", recorded == served, (recorded, served))
        hist = prom.query('sum by (outcome) (toolctx_check_duration_seconds_count)')
        counted = {h["metric"]["outcome"]: int(float(h["value"][1])) for h in hist}
        check("toolctx_check_duration_seconds counts every verdict, by outcome",
              counted.get("accept") == accepted and counted.get("reject") == sum(refused.values())
              and counted.get("pass") == served.get("pass"), counted)
        dashboard_checks(prom, refused)
    finally:
        prom.stop()


def dashboard_checks(prom, refused):
    """Every query of examples/grafana/toolctx.json runs on this Prometheus
    and gives series; refusals by reason name the reasons refused here."""
    with open(os.path.join(harness.ROOT, "examples", "grafana", "toolctx.json")) as f:
        dashboard = json.load(f)
    time.sleep(2.5)  # rate() needs two scrapes in its window
    answers = {}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            # Grafana's $__rate_interval: a window holding several 1 s scrapes.
            try:
                answers[(panel["title"], target["refId"])] = prom.query(target["expr"].replace("$__rate_interval", "30s"))
            except (OSError, RuntimeError) as e:
                answers[(panel["title"], target["refId"])] = e
    failed = {k: v for k, v in answers.items() if not isinstance(v, list) or not v}
    check("every query of the Grafana dashboard runs on Prometheus and gives series", not failed, failed)
    reasons = {r["metric"].get("reason") for r in answers.get(("Refusals by reason", "A"), [])}
    check("the dashboard's refusals by reason name every reason refused here", set(refused) <= reasons,
          (sorted(refused), sorted(r for r in reasons if r)))


def replay_call(c):
    return mcp_headers(mint(c), credential=None), call_body(c)


def test_replay(ports, services, upstream, redis):
    r1, r2, mem = ports
    c = claims()
    h, b = replay_call(c)
    before = upstream.count()
    s1, _, _ = send(r1, h, b)
    s2, _, reply2 = send(r2, h, b)
    s3, _, reply3 = send(r1, h, b)
    check("Redis replay guard: accepted by one replica, refused token_replayed by the other and by itself",
          s1 == 200 and s2 == 401 and rpc_error(reply2) == (7, -32001, "token_replayed")
          and s3 == 401 and upstream.count() == before + 1, (s1, s2, reply2[:160], s3))
    c2 = claims()
    s, _, _ = send(r2, *replay_call(c2))
    check("Redis replay guard: a new token is accepted by the other replica", s == 200, s)
    c3 = claims(jti=None)
    s, _, reply = send(r1, *replay_call(c3))
    check("Redis replay guard: a token without jti is refused claim_invalid",
          s == 401 and rpc_error(reply)[2] == "claim_invalid", (s, reply[:160]))

    c = claims()
    h, b = replay_call(c)
    s1, _, _ = send(mem, h, b)
    s2, _, reply2 = send(mem, h, b)
    check("in-process replay guard: the same token twice is accepted once",
          s1 == 200 and s2 == 401 and rpc_error(reply2) == (7, -32001, "token_replayed"), (s1, s2, reply2[:160]))

    redis.stop()
    before = upstream.count()
    c = claims()
    t0 = time.time()
    s, _, reply = send(r1, *replay_call(c))
    took = time.time() - t0
    # The core refuses a store that cannot answer, with the request's id.
    check("Redis down: a valid call is refused with 500 internal_error and never reaches the upstream",
          s == 500 and rpc_error(reply) == (7, -32603, "internal_error") and upstream.count() == before,
          (s, reply[:160]))
    print("info - refusal with Redis down took %.2f s" % took)
    time.sleep(0.1)
    check("Redis down: the log says why without the Redis URL",
          "replay guard: Redis" in services[1].text() and "redis://" not in services[1].text(),
          services[1].text()[-300:])


def test_aivax(port, svc, upstream):
    spoof = [("x-toolctx-aivax-user", "evil")]
    status, _, body = send(port, JSON_HEADERS + spoof, aivax_body(aivax_meta()))
    report = tool_result(body) if status == 200 else {}
    check("AIVAX: a call with a valid nonce reaches the tool with its typed context",
          report.get("headers", {}).get("x-toolctx-aivax-user") == "user-981", (status, body[:300]))
    before = upstream.count()
    status, _, reply = send(port, JSON_HEADERS, aivax_body(aivax_meta(_aiv_nonce=HOOK_KEY)))
    check("AIVAX: the plain hook key as nonce is refused nonce_invalid, upstream saw nothing",
          status == 401 and rpc_error(reply) == (7, -32001, "nonce_invalid") and upstream.count() == before,
          (status, reply[:160]))

    # Graceful shutdown: SIGTERM while a slow check (bcrypt cost 12) is in
    # flight; it still gets its verdict, then the service exits 0.
    slow = aivax_body(aivax_meta(_aiv_nonce=nonce(cost=12)))
    answer = {}

    def call():
        answer["r"] = send(port, JSON_HEADERS, slow)
    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.1)
    svc.signal(signal.SIGTERM)
    t.join(20)
    code = svc.wait(15)
    status = answer.get("r", (None,))[0]
    check("graceful shutdown: the check in flight at SIGTERM is answered (200), then the service exits 0",
          status == 200 and code == 0 and "shutting down" in svc.text() and "stopped" in svc.text(),
          (status, code, svc.text()[-300:]))


def test_example(upstream):
    """examples/envoy-ext-authz as written (free ports swapped in)."""
    example = os.path.join(authz.ROOT, "examples", "envoy-ext-authz")
    admin, listen, svc_port, svc_metrics = harness.free_ports(4)
    with open(os.path.join(example, "toolctx.json")) as f:
        svc = authz.Service(f.read(), ENV, ports=(svc_port, svc_metrics)).start()
    with open(os.path.join(example, "envoy.yaml")) as f:
        text = f.read()
    for old, new in (("port_value: 9901", "port_value: %d" % admin), ("port_value: 10000", "port_value: %d" % listen),
                     ("port_value: 8080", "port_value: %d" % upstream.port),
                     ("port_value: 9001", "port_value: %d" % svc_port)):
        if old not in text:
            raise RuntimeError("examples/envoy-ext-authz/envoy.yaml lost %r" % old)
        text = text.replace(old, new)
    envoy = harness.Envoy(text)
    try:
        envoy.start(admin)
        c = claims()
        status, _, body = send(listen, mcp_headers(mint(c)), call_body(c))
        report = tool_result(body) if status == 200 else {}
        check("examples/envoy-ext-authz: a valid call reaches the tool with the mapped headers",
              report.get("headers", {}).get("x-toolctx-task-id") == c["task_id"], (status, body[:200]))
        before = upstream.count()
        status, _, reply = send(listen, mcp_headers(mint(c, UNKNOWN)), call_body(c))
        check("examples/envoy-ext-authz: a bad signature is refused, upstream saw nothing",
              status == 401 and rpc_error(reply) == (7, -32001, "signature_invalid") and upstream.count() == before,
              (status, reply[:160]))
    finally:
        envoy.stop()
        svc.stop()


def main():
    redis = harness.Redis()
    up_port = harness.free_ports(1)[0]
    upstream = Upstream(up_port)
    aivax_cfg = {"profile": "aivax", "hook_key_env": "TOOLCTX_AIVAX_HOOK_KEY", "max_bcrypt_cost": 12,
                 "headers": AIVAX_HEADERS}
    redis_env = dict(ENV, TOOLCTX_REDIS_URL="redis://127.0.0.1:%d/0" % redis.port)
    redis_cfg = dict(REPLAY, replay_guard={"redis_url_env": "TOOLCTX_REDIS_URL",
                                           "redis_key_prefix": "toolctx:e2e:%s:" % secrets.token_hex(4)})
    specs = [(MAIN, ENV, True), (redis_cfg, redis_env, False), (redis_cfg, redis_env, False),
             (dict(REPLAY, replay_guard={"slots": 64}), ENV, False), (aivax_cfg, ENV, False)]
    all_ports = harness.free_ports(1 + 3 * len(specs))
    admin, ports = all_ports[0], all_ports[1:1 + len(specs)]
    services = [authz.Service(cfg, env, metrics=metrics, ports=all_ports[1 + len(specs) + 2 * i:3 + len(specs) + 2 * i])
                for i, (cfg, env, metrics) in enumerate(specs)]
    envoy = None
    try:
        for s in services:
            s.start()
        layout = [(ports[i], s.port, int(spec[0].get("max_body_bytes") or authz.DEFAULT_MAX_BODY_BYTES))
                  for i, (s, spec) in enumerate(zip(services, specs))]
        envoy, admin = authz.envoy_with(layout, up_port, admin_port=admin, health_check=True, concurrency=2)
        envoy.start(admin)
        test_main(ports[0], services[0], envoy, upstream, admin)
        test_replay(ports[1:4], services, upstream, redis)
        test_aivax(ports[4], services[4], upstream)
        test_example(upstream)
    finally:
        if envoy:
            envoy.stop()
        for s in services:
            s.stop()
        redis.stop()
        harness.stop(upstream.proc)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
