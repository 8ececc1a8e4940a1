#!/usr/bin/env python3
"""Fail closed, through real Envoy's ext_authz: whatever goes wrong with the
service or with the filter's settings, requests are refused and never reach
the upstream unverified.

  1. invalid configurations (unknown setting, inline secrets, credential
     values or hook key, bad JSON, a short secret, unset variables, a Redis
     URL that is unset, not redis://, or unreachable): the service exits
     with status 2 and one line saying what is wrong, never the secret;
  2. the service down (never started, then killed with SIGKILL) with
     `failure_mode_allow: false`: Envoy answers every request, valid calls,
     bad tokens and GETs alike, with `status_on_error` (503) and forwards
     nothing; `failure_mode_allow: true`, run as a control, lets a bad
     token through unverified (what the check above would catch);
  3. the filter configured otherwise than the service needs: without
     `pack_as_bytes` (the body as text), without `with_request_body`,
     `max_request_bytes` below max_body_bytes with `allow_partial_message`
     (a cut body): the service answers 500 internal_error with a log line
     naming the setting, and forwards nothing; with
     `allow_partial_message: false` an over-limit body gets Envoy's own 413;
     without `encode_raw_headers` (repeated headers joined with ",") a
     doubled token is still refused as token_duplicated.

The upstream is a recorder (tests/envoy/harness.py). All on 127.0.0.1.

    ENVOY=... tests/ext-authz/fail_closed.py

Prints `ok - ...` or `FAIL - ...` per check, then `N passed, N failed`.
"""

import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import authz  # noqa: E402
from authz import harness  # noqa: E402

sys.path.insert(0, harness.HERE)
from e2e import INSTANCE, SECRET, UNKNOWN, call_body, check, claims, mint, results  # noqa: E402

HOOK_KEY = "fail-closed-hook-key"
CREDENTIAL = "Bearer fail-closed-credential"
ENV = {"TOOLCTX_SECRET": SECRET, "TOOLCTX_AIVAX_HOOK_KEY": HOOK_KEY, "TOOLCTX_CREDENTIAL": CREDENTIAL}
GOOD = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "headers": {"task_id": "x-toolctx-task-id"}}
JSON_HEADERS = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


def good(**over):
    c = dict(GOOD)
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


def bad_configurations():
    cases = [
        ("unknown setting", good(clock_skew=3), ENV, "unknown setting"),
        ("unknown nested setting", good(replay_guard={"size": 3}), ENV, "replay_guard.size"),
        ("inline secrets", good(secret_env=None, secrets=[SECRET]), ENV, "inline `secrets` are refused"),
        ("inline credential values",
         good(credential={"header": "authorization", "values": [CREDENTIAL]}), ENV, "inline `credential.values`"),
        ("inline hook key", {"profile": "aivax", "hook_key": HOOK_KEY}, ENV, "inline `hook_key` is refused"),
        ("bad JSON", '{"instance_id": ', ENV, "not valid JSON"),
        ("not an object", "[]", ENV, "must be a JSON object"),
        ("max_body_bytes 0", good(max_body_bytes=0), ENV, "max_body_bytes"),
        ("secret too short", good(), dict(ENV, TOOLCTX_SECRET="short"), "secrets must be 32"),
        ("secret variable unset", good(), {}, "none of the environment variables named in `secret_env`"),
        ("hook key variable unset", {"profile": "aivax", "hook_key_env": "TOOLCTX_AIVAX_HOOK_KEY"}, {},
         "hook_key_env"),
        ("credential variable unset", good(credential={"header": "authorization", "values_env": ["TOOLCTX_CREDENTIAL"]}),
         {"TOOLCTX_SECRET": SECRET}, "credential.values_env"),
        ("Redis URL variable unset", good(replay_guard={"redis_url_env": "TOOLCTX_REDIS_URL"}), ENV,
         "replay_guard.redis_url_env"),
        ("Redis URL not redis://", good(replay_guard={"redis_url_env": "TOOLCTX_REDIS_URL"}),
         dict(ENV, TOOLCTX_REDIS_URL="http://127.0.0.1:1"), "must start with redis://"),
        ("Redis URL rediss:// naming a CA file that is not there",
         good(replay_guard={"redis_url_env": "TOOLCTX_REDIS_URL"}),
         dict(ENV, TOOLCTX_REDIS_URL="rediss://:pw-%s@127.0.0.1:1?ca=/nonexistent/ca.pem" % SECRET[:6]),
         "cannot read the ca file the store address names"),
        ("Redis URL with a misspelt durable-claims parameter",
         good(replay_guard={"redis_url_env": "TOOLCTX_REDIS_URL"}),
         dict(ENV, TOOLCTX_REDIS_URL="redis://:pw-%s@127.0.0.1:1?wait_replica=1" % SECRET[:6]),
         "unknown query parameter `wait_replica`"),
        ("Redis unreachable", good(replay_guard={"redis_url_env": "TOOLCTX_REDIS_URL"}),
         dict(ENV, TOOLCTX_REDIS_URL="redis://:pw-%s@127.0.0.1:%d" % (SECRET[:6], harness.free_ports(1)[0])),
         "cannot reach Redis (Io): the Redis named in TOOLCTX_REDIS_URL"),
    ]
    for what, cfg, env, expect in cases:
        code, text = authz.run_once(cfg, env)
        secrets = [SECRET, HOOK_KEY, CREDENTIAL, "pw-" + SECRET[:6]]
        check("bad configuration (%s): the service exits 2 with a clear line, no secret" % what,
              code == 2 and expect in text and not any(s in text for s in secrets), (code, text[-400:]))


def envoy_for(svc_port, upstream, **filter_options):
    port = harness.free_ports(1)[0]
    envoy, admin = authz.envoy_with([(port, svc_port, 4096)], upstream.port, filter_options=filter_options)
    envoy.start(admin)
    return envoy, port


def probes():
    """(what, method, headers, body): a valid call, a bad token, a GET."""
    c = claims()
    bad = claims()
    return [
        ("a valid call", "POST", JSON_HEADERS + [("x-agentarea-context", mint(c))], call_body(c)),
        ("a bad token", "POST", JSON_HEADERS + [("x-agentarea-context", mint(bad, UNKNOWN))], call_body(bad)),
        ("a GET", "GET", [("accept", "text/event-stream")], b""),
    ]


def every_probe_gets_503(port, upstream, state):
    for what, method, headers, body in probes():
        before = len(upstream.requests)
        status, _, _ = harness.raw_request(port, method, "/mcp", headers, body)
        check("%s: %s gets 503, upstream saw nothing" % (state, what),
              status == 503 and len(upstream.requests) == before, status)


def service_down(upstream):
    # Never started: nothing listens on the cluster's port.
    dead_port = harness.free_ports(1)[0]
    envoy, port = envoy_for(dead_port, upstream)
    try:
        every_probe_gets_503(port, upstream, "service not running, failure_mode_allow false")
    finally:
        envoy.stop()
    # Running, then killed outright.
    svc = authz.Service(good(), ENV).start()
    envoy, port = envoy_for(svc.port, upstream)
    try:
        c = claims()
        status, _, _ = harness.raw_request(port, "POST", "/mcp", JSON_HEADERS + [("x-agentarea-context", mint(c))],
                                           call_body(c))
        check("service running: a valid call is accepted", status == 200, status)
        svc.signal(signal.SIGKILL)
        svc.wait(5)
        every_probe_gets_503(port, upstream, "service killed (SIGKILL)")
    finally:
        envoy.stop()
        svc.stop()
    # Control: failure_mode_allow true lets an unverified call through.
    envoy, port = envoy_for(dead_port, upstream, failure_mode_allow=True)
    try:
        before = len(upstream.requests)
        what, method, headers, body = probes()[1]
        status, _, _ = harness.raw_request(port, method, "/mcp", headers, body)
        check("control: failure_mode_allow true with the service down lets a bad token reach the upstream",
              status == 200 and len(upstream.requests) == before + 1, status)
    finally:
        envoy.stop()


def misconfigured_filter(upstream):
    svc = authz.Service(good(max_body_bytes=4096), ENV).start()
    try:
        for what, options, headers_extra, body_size, want, says in [
            ("pack_as_bytes false", {"pack_as_bytes": False}, [], 0, 500, "pack_as_bytes: true"),
            ("no with_request_body", {"with_request_body": False}, [], 0, 500, "with_request_body"),
            ("max_request_bytes below max_body_bytes", {"max_request_bytes": 1024}, [], 2000, 500,
             "max_request_bytes"),
        ]:
            envoy, port = envoy_for(svc.port, upstream, **options)
            try:
                c = claims()
                tok = mint(c)
                headers = JSON_HEADERS + [("x-agentarea-context", tok)]
                if headers_extra == "twice":
                    headers.append(("x-agentarea-context", tok))
                body = call_body(c, note="n" * body_size)
                before = len(upstream.requests)
                status, _, reply = harness.raw_request(port, "POST", "/mcp", headers, body)
                doc = json.loads(reply) if reply.startswith(b"{") else {}
                check("filter with %s: a valid call gets 500 internal_error, upstream saw nothing" % what,
                      status == want and (doc.get("error") or {}).get("data", {}).get("reason") == "internal_error"
                      and len(upstream.requests) == before, (status, reply[:160]))
                check("filter with %s: the service's log names the setting" % what, says in svc.text(),
                      svc.text()[-300:])
            finally:
                envoy.stop()
        # Without encode_raw_headers Envoy joins repeated headers with ",":
        # the token header is split back, so a doubled token is still
        # token_duplicated, and a valid call still goes through.
        envoy, port = envoy_for(svc.port, upstream, encode_raw_headers=False)
        try:
            c = claims()
            tok = mint(c)
            before = len(upstream.requests)
            status, _, reply = harness.raw_request(port, "POST", "/mcp", JSON_HEADERS + [("x-agentarea-context", tok)] * 2,
                                                   call_body(c))
            doc = json.loads(reply) if reply.startswith(b"{") else {}
            check("encode_raw_headers false (joined headers): a token sent twice is refused token_duplicated, "
                  "upstream saw nothing",
                  status == 401 and (doc.get("error") or {}).get("data", {}).get("reason") == "token_duplicated"
                  and len(upstream.requests) == before, (status, reply[:160]))
            status, _, _ = harness.raw_request(port, "POST", "/mcp", JSON_HEADERS + [("x-agentarea-context", tok)],
                                               call_body(c))
            check("encode_raw_headers false (joined headers): a valid call is accepted",
                  status == 200 and len(upstream.requests) == before + 1, status)
        finally:
            envoy.stop()
        # allow_partial_message false: Envoy answers an over-limit body itself.
        envoy, port = envoy_for(svc.port, upstream, allow_partial_message=False)
        try:
            c = claims()
            before = len(upstream.requests)
            status, _, _ = harness.raw_request(port, "POST", "/mcp", JSON_HEADERS + [("x-agentarea-context", mint(c))],
                                               call_body(c, note="n" * 5000))
            check("allow_partial_message false: an over-limit body gets Envoy's 413, upstream saw nothing",
                  status == 413 and len(upstream.requests) == before, status)
        finally:
            envoy.stop()
    finally:
        svc.stop()


def main():
    upstream = harness.Recorder()
    try:
        bad_configurations()
        service_down(upstream)
        misconfigured_filter(upstream)
    finally:
        upstream.close()
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
