#!/usr/bin/env python3
"""End to end over HTTP/2 (h2c): the release filter in Envoy in front of a
recording upstream, driven by tests/envoy/h2client.py (Python's h2), as MCP
clients and meshes (Istio's sidecars) speak to Envoy. Tokens are minted here
with hmac.

    ENVOY=... .tools/venv/bin/python tests/envoy/e2e_h2.py [--module]

Checks an accepted and a refused call, a body in many DATA frames, a body
that ends with trailers, a stream reset in the middle of a held request
(nothing reaches the upstream and the VM keeps serving), many streams
multiplexed on one connection, an over-limit body and a GET. Prints
`ok - ...` or `FAIL - ...` per check and closes with `N passed, N failed`.
"""

import json
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import h2client  # noqa: E402
from e2e import INSTANCE, SECRET, call_body, claims, mint  # noqa: E402

MAX_BODY = 65536
TASK_HEADER = "x-toolctx-task-id"
SESSION_HEADER = "x-session-id"

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(("ok - %s" % name) if ok else ("FAIL - %s: %s" % (name, detail)), flush=True)


def headers(token):
    return [("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
            ("x-agentarea-context", token)]


def good():
    c = claims()
    return c, mint(c), call_body(c, meta=dict({"agentarea/" + k: c[k] for k in
                                                ("protocol", "task_id", "tool_call_id", "workspace_id",
                                                 "idempotency_key", "end_user_id")}, sessionId="s-" + c["jti"]))


def bad():
    c = claims()
    return c, mint(c, secret="not-the-secret-" + secrets.token_hex(16)), call_body(c)


def reason(body):
    try:
        doc = json.loads(body)
        return doc.get("id"), doc["error"]["code"], doc["error"]["data"]["reason"]
    except (ValueError, KeyError, TypeError):
        return None


def header(req, name):
    return [v for k, v in req["headers"] if k.lower() == name]


def accepted(name, up, path, r, c, body):
    seen = up.seen(path)
    check("%s: 200 from the upstream" % name, r.status == 200 and r.body == harness.Recorder.MARKER,
          "status %s body %r reset %s" % (r.status, r.body[:120], r.reset))
    check("%s: the upstream got the body untouched, with the verified task id" % name,
          len(seen) == 1 and seen[0]["body"] == body and header(seen[0], TASK_HEADER) == [c["task_id"]],
          "seen %d %s" % (len(seen), [(s["headers"], s["body"][:60]) for s in seen]))


def refused(name, up, path, r, want_reason="signature_invalid", status=401):
    check("%s: %d %s" % (name, status, want_reason),
          r.status == status and (reason(r.body) or (0, 0, None))[2] == want_reason,
          "status %s body %r reset %s" % (r.status, r.body[:160], r.reset))
    check("%s: nothing reached the upstream" % name, not up.seen(path), up.seen(path))


def main():
    wasm = harness.artifact()
    admin, listen = harness.free_ports(2)
    up = harness.Recorder()
    plugin = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "max_body_bytes": MAX_BODY,
              "headers": {"task_id": TASK_HEADER}, "meta_headers": {"sessionId": SESSION_HEADER}}
    envoy = harness.Envoy(harness.bootstrap(admin, [harness.listener("h2", listen, [
        harness.toolctx_filter(wasm, plugin, ["TOOLCTX_SECRET"])])], up.port), env={"TOOLCTX_SECRET": SECRET})
    envoy.start(admin)
    try:
        run(listen, up, envoy)
    finally:
        envoy.stop()
        up.close()
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


def run(port, up, envoy):
    # One accepted and one refused call, each on its own connection; the
    # caller's own x-toolctx-task-id and x-session-id never reach the upstream.
    c, token, body = good()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/accept", headers(token) + [(TASK_HEADER, "spoofed"), (SESSION_HEADER, "spoofed")],
                         body)
    accepted("accepted call", up, "/accept", r, c, body)
    seen = up.seen("/accept")
    check("accepted call: _meta.sessionId forwarded, spoofed headers dropped",
          seen and header(seen[0], SESSION_HEADER) == ["s-" + c["jti"]], seen and seen[0]["headers"])
    _, token, body = bad()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/refuse", headers(token), body)
    refused("bad signature", up, "/refuse", r)
    check("bad signature: the JSON-RPC id is the request's", (reason(r.body) or (None,))[0] == 7, r.body[:160])

    # The body in one DATA frame per byte (and per 7 bytes for a refusal).
    c, token, body = good()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/frames", headers(token), body, frame=1)
    accepted("body in %d one-byte DATA frames" % len(body), up, "/frames", r, c, body)
    _, token, bbody = bad()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/frames-bad", headers(token), bbody, frame=7)
    refused("bad signature, body in 7-byte DATA frames", up, "/frames-bad", r)

    # A body that ends with trailers: the verdict comes at the trailers.
    c, token, body = good()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/trailers", headers(token), body, frame=100, trailers=[("x-checksum", "abc")])
    accepted("body ending with trailers", up, "/trailers", r, c, body)
    _, token, bbody = bad()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/trailers-bad", headers(token), bbody, trailers=[("x-checksum", "abc")])
    refused("bad signature, body ending with trailers", up, "/trailers-bad", r)

    # A reset in the middle of a held request: nothing goes upstream, and
    # the same connection, then a new one, are served.
    c, token, body = good()
    with h2client.Connection(port) as conn:
        sid = conn.start("POST", "/reset", headers(token))
        conn.send_data(sid, body[: len(body) // 2], frame=64)
        time.sleep(0.2)
        conn.reset(sid)
        time.sleep(0.5)
        check("stream reset while held: nothing reached the upstream", not up.seen("/reset"), up.seen("/reset"))
        c2, token2, body2 = good()
        r = conn.request("POST", "/after-reset", headers(token2), body2)
        accepted("after the reset, same connection", up, "/after-reset", r, c2, body2)
    with h2client.Connection(port) as conn:
        sid = conn.start("POST", "/reset-headers", headers(token))
        conn.reset(sid)
    c3, token3, body3 = good()
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/after-reset-2", headers(token3), body3)
    time.sleep(0.2)
    check("stream reset right after its headers: nothing reached the upstream",
          not up.seen("/reset-headers"), up.seen("/reset-headers"))
    accepted("after the resets, a new connection", up, "/after-reset-2", r, c3, body3)

    # Twenty streams on one connection, their frames interleaved: each gets
    # its own verdict.
    with h2client.Connection(port) as conn:
        streams = []
        for i in range(20):
            c, token, body = good() if i % 2 == 0 else bad()
            path = "/mux/%d" % i
            streams.append((i, path, c, body, conn.start("POST", path, headers(token))))
        for off in range(0, max(len(s[3]) for s in streams), 256):
            for i, path, c, body, sid in streams:
                piece = body[off:off + 256]
                if piece:
                    conn.send_data(sid, piece, end_stream=off + 256 >= len(body))
        rs = [(i, path, c, body, conn.wait(sid)) for i, path, c, body, sid in streams]
    ok_accept = all(r.status == 200 and len(up.seen(path)) == 1 and up.seen(path)[0]["body"] == body
                    and header(up.seen(path)[0], TASK_HEADER) == [c["task_id"]]
                    for i, path, c, body, r in rs if i % 2 == 0)
    ok_refuse = all(r.status == 401 and not up.seen(path) for i, path, c, body, r in rs if i % 2 == 1)
    check("20 interleaved streams on one connection: the 10 valid ones reached the upstream with their own task id",
          ok_accept, [(i, r.status) for i, _, _, _, r in rs])
    check("20 interleaved streams on one connection: the 10 refused ones did not", ok_refuse,
          [(i, r.status) for i, _, _, _, r in rs])

    # Over the limit: the core's 413, not Envoy's.
    c, token, _ = good()
    big = call_body(c, note="x" * (MAX_BODY + 10))
    with h2client.Connection(port) as conn:
        r = conn.request("POST", "/big", headers(token), big)
    refused("body over max_body_bytes", up, "/big", r, "body_too_large", 413)

    # A GET passes without its body being read.
    with h2client.Connection(port) as conn:
        r = conn.request("GET", "/get", [("accept", "text/event-stream")])
    check("GET passes over HTTP/2", r.status == 200 and len(up.seen("/get")) == 1, (r.status, r.body[:80]))

    counters = envoy.counters()
    want = {"accepted": 15, "signature_invalid": 13, "body_too_large": 1, "passed": 1}
    got = {"accepted": counters.get("toolctx.accepted"),
           "signature_invalid": counters.get("toolctx.refused.signature_invalid"),
           "body_too_large": counters.get("toolctx.refused.body_too_large"),
           "passed": counters.get("toolctx.passed")}
    check("counters: %s" % want, got == want, got)
    check("no errors counted (the resets are not the filter's failures)",
          counters.get("toolctx.errors", 0) == 0, counters.get("toolctx.errors"))
    log = open(envoy.log_path).read()
    check("no panic in the log", "panic" not in log, log[-400:])


if __name__ == "__main__":
    sys.exit(main())
