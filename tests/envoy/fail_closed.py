#!/usr/bin/env python3
"""Fail closed, through a real Envoy: whatever goes wrong with the filter,
requests are refused and never reach the upstream unverified.

  1. invalid plugin configurations (unknown setting, inline secrets and
     hook key, bad JSON, limits out of range, a short secret): the filter's
     on_configure fails and Envoy does not start;
  2. missing environment variables: every `secret_env` name unset, the
     AIVAX `hook_key_env` unset, a credential's `values_env` unset (Envoy
     does not start); one of two `secret_env` names unset (Envoy starts,
     the other secret verifies, nothing else does);
  3. a crashing VM (the test-crash build panics on `x-toolctx-test-crash`,
     in on_http_request_headers or in on_http_request_body): with
     `failure_policy: FAIL_CLOSED` the crashing request and every request
     after it are answered by Envoy with a 503 and reach nothing (with two
     workers, only the crashed worker's VM stops; the other one goes on
     verifying; with `failure_policy` unset Envoy 1.40 does the same); with
     `FAIL_RELOAD` the crashing request gets the 503 and the next ones are
     judged by a fresh VM; `FAIL_OPEN`, run as a control, lets requests
     through unverified (what the checks above would catch). With
     --module, the dynamic module's test-crash build: the panic is caught
     in the hook, the crashing request is answered 500 `internal_error`
     by the module and reaches nothing, and Envoy (the same process) goes
     on judging every later request, on one worker or two.

The upstream is a recorder (tests/envoy/harness.py) counting every request
that reaches it. One Envoy per case (one worker, except where two are
said), all on 127.0.0.1.

    ENVOY=... tests/envoy/fail_closed.py [release.wasm [test-crash.wasm]]
    ENVOY=... tests/envoy/fail_closed.py --module [release.so [test-crash.so]]

Prints `ok - ...` or `FAIL - ...` per check, then `N passed, N failed`.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from e2e import INSTANCE, PREVIOUS, SECRET, call_body, check, claims, mint, results  # noqa: E402

WASM = harness.artifact()
CRASH_WASM = harness.artifact("test_crash")
CRASH_HEADER = "x-toolctx-test-crash"
# In the test-crash builds' panic message (crates/envoy-filter, crates/envoy-module).
PANIC_PAYLOAD = "toolctx-panic-payload-5f1c"
HOOK_KEY = "fail-closed-hook-key"
CREDENTIAL = "Bearer fail-closed-credential"
ENV_KEYS = ["TOOLCTX_SECRET", "TOOLCTX_SECRET_PREVIOUS", "TOOLCTX_AIVAX_HOOK_KEY", "TOOLCTX_CREDENTIAL"]
FULL_ENV = {"TOOLCTX_SECRET": SECRET, "TOOLCTX_SECRET_PREVIOUS": PREVIOUS, "TOOLCTX_AIVAX_HOOK_KEY": HOOK_KEY,
            "TOOLCTX_CREDENTIAL": CREDENTIAL}
GOOD = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET", "TOOLCTX_SECRET_PREVIOUS"],
        "headers": {"task_id": "x-toolctx-task-id"}}
JSON_HEADERS = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
REFUSED = "configuration refused: "
RELOAD_TRIES = 40
TWO_WORKER_ROUNDS = 12

# The variables named in ENV_KEYS come from FULL_ENV or nowhere: none may
# leak in from the environment this runs in.
for _k in ENV_KEYS:
    os.environ.pop(_k, None)


def good(**over):
    c = dict(GOOD)
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


def envoy_for(plugin, env, wasm=None, policy="FAIL_CLOSED", concurrency=1):
    """One Envoy, one worker, one listener with the filter (or the module);
    `plugin` is a dict (written as JSON) or the configuration's exact text.
    `policy` is the wasm filter's failure_policy (the module has none)."""
    wasm = wasm or WASM
    admin, listen = harness.free_ports(2)
    rec = harness.Recorder()
    wf = harness.toolctx_filter(wasm, plugin, ENV_KEYS)
    if harness.FRONT == "filter":
        cfg = wf["typed_config"]["config"]
        if policy is None:
            del cfg["failure_policy"]
        else:
            cfg["failure_policy"] = policy
        cfg["configuration"]["value"] = plugin if isinstance(plugin, str) else json.dumps(plugin)
    boot = harness.bootstrap(admin, [harness.listener("mcp", listen, [wf])], rec.port)
    env = dict(env, **harness.module_env(wasm))
    return harness.Envoy(boot, env=env, concurrency=concurrency), admin, listen, rec


def request(port, headers, body=b"", method="POST"):
    """(status, body), or ("reset", error) when Envoy closed the connection
    without an answer."""
    try:
        status, _, payload = harness.raw_request(port, method, "/mcp", headers, body)
        return status, payload
    except (OSError, harness.http.client.HTTPException) as e:
        return "reset", repr(e)


def valid_call(extra=()):
    c = claims()
    return JSON_HEADERS + [("x-agentarea-context", mint(c))] + list(extra), call_body(c), c


def bad_call(extra=()):
    c = claims()
    return JSON_HEADERS + [("x-agentarea-context", mint(c, secret="not-the-secret-" + "x" * 32))] + list(extra), \
        call_body(c)


TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).encode()


# ---------------------------------------------------------------- 1 and 2

def refused_at_startup(name, plugin, env, expect):
    """The configuration is refused: on_configure fails, Envoy exits before
    its admin endpoint is ready, nothing is forwarded, and the log names the
    problem (and never the secret)."""
    envoy, admin, listen, rec = envoy_for(plugin, env)
    try:
        envoy.start(admin, timeout=30)
        started = True
    except RuntimeError:
        started = False
    log = envoy.tail(200)
    rc = envoy.proc.returncode if envoy.proc else None
    if not started:
        envoy.stop()  # in case it neither exited nor became ready
    if started:
        # Never expected; if it happens, show that nothing gets through.
        outcomes = [request(listen, *valid_call()[:2]), request(listen, JSON_HEADERS, TOOLS_LIST),
                    request(listen, [], method="GET")]
        envoy.stop()
        check("%s: Envoy refuses to start" % name, False,
              "Envoy started; answers %s; upstream saw %d" % ([o[0] for o in outcomes], len(rec.requests)))
    else:
        lines = [ln for ln in log.splitlines() if REFUSED in ln]
        why = lines[0].split(REFUSED, 1)[1] if lines else ""
        check("%s: Envoy exits with status 1 instead of serving" % name, rc == 1,
              "status %s; log:\n%s" % (rc, log[-600:]))
        check("%s: one log line says why: %r" % (name, why[:110]), len(lines) == 1 and expect in why,
              "expected %r in the refusal line; log:\n%s" % (expect, log[-1500:]))
        leaked = [v for v in env.values() if len(v) >= 8 and v in log]
        check("%s: the log shows no secret" % name, not leaked, "log contains a configured secret")
        check("%s: the upstream saw nothing" % name, not rec.requests, "%d requests" % len(rec.requests))
    rec.close()


def configuration_cases():
    short = dict(FULL_ENV, TOOLCTX_SECRET="short")
    cases = [
        ("unknown setting", good(colour="blue"), FULL_ENV, "colour"),
        ("unknown nested setting", good(replay_guard={"slots": 8, "size": 1}), FULL_ENV,
         "unknown setting `replay_guard.size`"),
        ("inline secrets", good(secret_env=None, secrets=[SECRET]), FULL_ENV, "inline `secrets` are refused"),
        ("inline credential value",
         good(credential={"header": "authorization", "values": [CREDENTIAL]}), FULL_ENV, "credential.values"),
        ("inline AIVAX hook_key", {"profile": "aivax", "hook_key": HOOK_KEY}, FULL_ENV,
         "inline `hook_key` is refused"),
        ("bad JSON (truncated)", json.dumps(GOOD)[:-9], FULL_ENV, "not valid JSON"),
        ("bad JSON (trailing comma)", json.dumps(GOOD)[:-1] + ",}", FULL_ENV, "not valid JSON"),
        ("JSON that is not an object", "[]", FULL_ENV, "must be a JSON object"),
        ("empty configuration", "", FULL_ENV, "not valid JSON"),
        ("limit: max_body_bytes 0", good(max_body_bytes=0), FULL_ENV, "max_body_bytes"),
        ("limit: clock_skew_s far too large", good(clock_skew_s=10 ** 9), FULL_ENV, "clock_skew_s"),
        ("limit: max_token_bytes negative", good(max_token_bytes=-1), FULL_ENV, "max_token_bytes"),
        ("limit: replay_guard.slots 0", good(replay_guard={"slots": 0}), FULL_ENV, "replay_guard.slots"),
        ("limit: AIVAX max_bcrypt_cost 40",
         {"profile": "aivax", "hook_key_env": "TOOLCTX_AIVAX_HOOK_KEY", "max_bcrypt_cost": 40}, FULL_ENV,
         "max_bcrypt_cost"),
        ("secret of 5 bytes", GOOD, short, "the secret in TOOLCTX_SECRET is 5 bytes"),
    ]
    for name, plugin, env, expect in cases:
        refused_at_startup(name, plugin, env, expect)


def missing_env_cases():
    no_secrets = {k: v for k, v in FULL_ENV.items() if not k.startswith("TOOLCTX_SECRET")}
    refused_at_startup("every secret_env variable unset", GOOD, no_secrets,
                       "none of the environment variables named in `secret_env` "
                       "(TOOLCTX_SECRET, TOOLCTX_SECRET_PREVIOUS) is set")
    no_key = {k: v for k, v in FULL_ENV.items() if k != "TOOLCTX_AIVAX_HOOK_KEY"}
    refused_at_startup("AIVAX hook_key_env unset", {"profile": "aivax", "hook_key_env": "TOOLCTX_AIVAX_HOOK_KEY"},
                       no_key, "none of the environment variables named in `hook_key_env` (TOOLCTX_AIVAX_HOOK_KEY)")
    no_cred = {k: v for k, v in FULL_ENV.items() if k != "TOOLCTX_CREDENTIAL"}
    refused_at_startup("credential values_env unset",
                       good(credential={"header": "authorization", "values_env": ["TOOLCTX_CREDENTIAL"]}),
                       no_cred, "TOOLCTX_CREDENTIAL")

    # One of two unset: Envoy starts; the set one verifies, nothing else.
    name = "secret_env with TOOLCTX_SECRET_PREVIOUS unset"
    env = {k: v for k, v in FULL_ENV.items() if k != "TOOLCTX_SECRET_PREVIOUS"}
    envoy, admin, listen, rec = envoy_for(GOOD, env)
    envoy.start(admin)
    try:
        log = envoy.tail(200)
        check("%s: Envoy starts, each VM warns about the unset variable" % name,
              "environment variable TOOLCTX_SECRET_PREVIOUS (from `secret_env`) is unset or empty; skipped" in log
              and "with 1 secret(s)" in log, log[-1500:])
        h, b, c = valid_call()
        st, _ = request(listen, h, b)
        seen = rec.seen("/mcp")
        check("%s: a token signed with TOOLCTX_SECRET is accepted and forwarded" % name,
              st == 200 and len(seen) == 1
              and dict((k.lower(), v) for k, v in seen[0]["headers"]).get("x-toolctx-task-id") == c["task_id"],
              "status %s, upstream saw %d" % (st, len(seen)))
        c = claims()
        st, body = request(listen, JSON_HEADERS + [("x-agentarea-context", mint(c, secret=PREVIOUS))], call_body(c))
        check("%s: a token signed with the unset variable's secret is refused (401 signature_invalid)" % name,
              st == 401 and b"signature_invalid" in body and len(rec.requests) == 1,
              "status %s %r, upstream saw %d" % (st, body[:200], len(rec.requests)))
        st, _ = request(listen, *bad_call())
        check("%s: a token signed with another secret is refused" % name, st == 401 and len(rec.requests) == 1,
              "status %s, upstream saw %d" % (st, len(rec.requests)))
    finally:
        envoy.stop()
        rec.close()


# ---------------------------------------------------------------------- 3

def crash_case(where, policy, concurrency=1):
    """Starts Envoy with the test-crash build under `policy`, proves the
    listener verifies, crashes the VM in `where` (headers or body) and
    returns what came after: (envoy, listen, rec, crash outcome, log)."""
    envoy, admin, listen, rec = envoy_for(GOOD, FULL_ENV, wasm=CRASH_WASM, policy=policy, concurrency=concurrency)
    envoy.start(admin)
    tag = "%s, crash in on_http_request_%s" % (policy or "failure_policy unset", where)
    if harness.FRONT == "module":
        tag = "module, crash in the request %s hook" % where
    if concurrency > 1:
        tag += ", %d workers" % concurrency
    h, b, _ = valid_call()
    st, _ = request(listen, h, b)
    st2, _ = request(listen, *bad_call())
    check("%s: before the crash a valid call is forwarded and a bad one refused" % tag,
          st == 200 and st2 == 401 and len(rec.requests) == 1,
          "statuses %s %s, upstream saw %d" % (st, st2, len(rec.requests)))
    h, b, _ = valid_call([(CRASH_HEADER, where)])
    crash = request(listen, h, b)
    log = envoy.tail(400)
    said = ("panic, the VM stops and requests fail closed (at ", "request_headers.rs:")
    if harness.FRONT == "module":
        said = ("panic, the request is refused with 500 and Envoy goes on (at ", "filter.rs:")
    check("%s: the panic hook logged the panic and where" % tag, all(x in log for x in said), log[-1500:])
    # The test build's panic message stands for a request's data.
    check("%s: the panic's message is not logged" % tag,
          PANIC_PAYLOAD not in log and "test crash in" not in log, log[-1500:])
    return envoy, admin, listen, rec, crash, tag




def following(listen):
    """Ordinary requests after a crash: a valid call, a bad token, a
    tools/list, a GET, and a valid call again."""
    out = []
    h, b, _ = valid_call()
    out.append(("valid call", request(listen, h, b)))
    out.append(("bad token", request(listen, *bad_call())))
    out.append(("tools/list", request(listen, JSON_HEADERS, TOOLS_LIST)))
    out.append(("GET", request(listen, [], method="GET")))
    h, b, _ = valid_call()
    out.append(("valid call again", request(listen, h, b)))
    return out


def fail_closed_crash(where, policy="FAIL_CLOSED"):
    envoy, admin, listen, rec, crash, tag = crash_case(where, policy)
    try:
        check("%s: the crashing request is answered 503 and not forwarded" % tag,
              crash[0] == 503 and len(rec.requests) == 1, "answer %r, upstream saw %d" % (crash, len(rec.requests)))
        after = following(listen)
        summary = ", ".join("%s %s" % (n, o[0]) for n, o in after)
        check("%s: every later request is answered 503 by Envoy (%s)" % (tag, summary),
              all(o[0] == 503 for _, o in after), repr(after))
        # FAIL_RELOAD would have reloaded the VM by now (1 s backoff):
        # FAIL_CLOSED never does.
        time.sleep(1.5)
        st, _ = request(listen, *valid_call()[:2])
        stats = envoy.stats("wasm.toolctx.")
        check("%s: still 503 later, and no VM reload (%s)" % (tag, stats),
              st == 503 and stats.get("wasm.toolctx.vm_reload_success", 0) == 0, "status %s" % st)
        check("%s: the upstream saw nothing after the crash" % tag, len(rec.requests) == 1,
              "upstream saw %d" % len(rec.requests))
        print("info - %s: Envoy's 503 body: %r" % (tag, crash[1][:80]), flush=True)
    finally:
        envoy.stop()
        rec.close()


def fail_closed_two_workers():
    """Two workers, one VM each: the crash stops the VM of the worker that
    took the request; the other one goes on verifying. Whichever worker
    takes a connection, a bad token is refused (401 or 503) and a valid call
    is either verified (200 with its mapped header) or refused (503)."""
    envoy, admin, listen, rec, crash, tag = crash_case("headers", "FAIL_CLOSED", concurrency=2)
    try:
        check("%s: the crashing request is answered 503 and not forwarded" % tag,
              crash[0] == 503 and len(rec.requests) == 1, "answer %r, upstream saw %d" % (crash, len(rec.requests)))
        bad, good_calls, forwarded_ok = [], [], True
        for _ in range(TWO_WORKER_ROUNDS):
            bad.append(request(listen, *bad_call())[0])
            h, b, c = valid_call()
            before = len(rec.requests)
            st = request(listen, h, b)[0]
            good_calls.append(st)
            if st == 200:
                got = dict((k.lower(), v) for k, v in rec.requests[-1]["headers"]) if len(rec.requests) > before else {}
                forwarded_ok &= len(rec.requests) == before + 1 and got.get("x-toolctx-task-id") == c["task_id"]
        check("%s: bad tokens are refused by the live VM (401) or by Envoy (503), never forwarded "
              "(401 x %d, 503 x %d)" % (tag, bad.count(401), bad.count(503)),
              set(bad) <= {401, 503}, repr(bad))
        check("%s: valid calls are verified and forwarded (200 x %d) or answered 503 (x %d), nothing else"
              % (tag, good_calls.count(200), good_calls.count(503)),
              set(good_calls) <= {200, 503} and forwarded_ok, repr(good_calls))
        check("%s: the upstream saw only the verified calls" % tag,
              len(rec.requests) == 1 + good_calls.count(200), "upstream saw %d" % len(rec.requests))
    finally:
        envoy.stop()
        rec.close()


def fail_reload_crash():
    """FAIL_RELOAD: Envoy answers 503 until its reload backoff (1 s by
    default) has passed, then a new VM judges requests again. Requests are
    sent until one is answered by the filter (at most RELOAD_TRIES); what is
    asserted is the answers, never how long it took."""
    envoy, admin, listen, rec, crash, tag = crash_case("headers", "FAIL_RELOAD")
    try:
        check("%s: the crashing request is answered 503 and not forwarded" % tag,
              crash[0] == 503 and len(rec.requests) == 1, "answer %r, upstream saw %d" % (crash, len(rec.requests)))
        answers = []
        for _ in range(RELOAD_TRIES):
            answers.append(request(listen, *bad_call())[0])
            if answers[-1] != 503:
                break
            time.sleep(0.25)
        check("%s: bad tokens after the crash get 503 from Envoy, then 401 from the reloaded VM (%d x 503)"
              % (tag, answers.count(503)),
              answers[-1] == 401 and set(answers) <= {503, 401} and len(rec.requests) == 1,
              "answers %s, upstream saw %d" % (answers, len(rec.requests)))
        h, b, c = valid_call()
        st, _ = request(listen, h, b)
        last = rec.requests[-1] if rec.requests else {"headers": []}
        check("%s: a valid call after the reload is verified and forwarded with its mapped header" % tag,
              st == 200 and len(rec.requests) == 2
              and dict((k.lower(), v) for k, v in last["headers"]).get("x-toolctx-task-id") == c["task_id"],
              "status %s, upstream saw %d" % (st, len(rec.requests)))
        stats = envoy.stats("wasm.toolctx.")
        check("%s: Envoy counts the reload (wasm.toolctx.vm_reload_success %s)"
              % (tag, stats.get("wasm.toolctx.vm_reload_success")),
              stats.get("wasm.toolctx.vm_reload_success", 0) >= 1, repr(stats))
    finally:
        envoy.stop()
        rec.close()


def fail_open_control():
    """Control: what FAIL_OPEN (or `fail_open: true`) would do. The same
    checks as above see requests reach the upstream unverified."""
    envoy, admin, listen, rec, crash, tag = crash_case("headers", "FAIL_OPEN")
    try:
        before = len(rec.requests)
        st, _ = request(listen, *bad_call())
        check("control, %s: a bad token after the crash reaches the upstream unverified "
              "(never configure this)" % tag,
              st == 200 and len(rec.requests) == before + 1,
              "status %s, upstream saw %d (crash answer %r)" % (st, len(rec.requests), crash[0]))
        print("info - %s: the crashing request itself was answered %r; upstream count after it %d"
              % (tag, crash[0], before), flush=True)
    finally:
        envoy.stop()
        rec.close()


def module_crash(where, concurrency=1, crashes=5):
    """The module: each crash refuses its own request (500 internal_error,
    nothing upstream); Envoy, the same process, judges every other request
    as before, between and after the crashes."""
    envoy, admin, listen, rec, crash, tag = crash_case(where, None, concurrency=concurrency)
    pid = envoy.proc.pid
    try:
        answers = [crash]
        for _ in range(crashes - 1):
            h, b, _ = valid_call([(CRASH_HEADER, where)])
            answers.append(request(listen, h, b))
        shapes = [(a[0], rpc_reason(a[1])) for a in answers]
        check("%s: each of %d crashing requests is answered 500 internal_error by the module, not forwarded"
              % (tag, crashes), all(x == (500, "internal_error") for x in shapes) and len(rec.requests) == 1,
              "answers %s, upstream saw %d" % (shapes, len(rec.requests)))
        after = following(listen)
        summary = ", ".join("%s %s" % (n, o[0]) for n, o in after)
        want = {"valid call": 200, "bad token": 401, "tools/list": 200, "GET": 200, "valid call again": 200}
        check("%s: every later request is judged as before (%s)" % (tag, summary),
              all(o[0] == want[n] for n, o in after), repr(after))
        check("%s: the upstream saw the valid calls and the passing requests only" % tag,
              len(rec.requests) == 1 + 4, "upstream saw %d" % len(rec.requests))
        counters = envoy.counters()
        check("%s: toolctx.errors counts the crashes (%s)" % (tag, counters.get("toolctx.errors")),
              counters.get("toolctx.errors") == crashes, counters)
        check("%s: Envoy is the same process and ready" % tag,
              envoy.proc.poll() is None and envoy.proc.pid == pid and envoy.get("/ready").strip() == "LIVE")
    finally:
        envoy.stop()
        rec.close()


def rpc_reason(body):
    try:
        return json.loads(body)["error"]["data"]["reason"]
    except (ValueError, KeyError, TypeError):
        return None


def main():
    global WASM, CRASH_WASM
    if len(sys.argv) > 1:
        WASM = os.path.abspath(sys.argv[1])
    if len(sys.argv) > 2:
        CRASH_WASM = os.path.abspath(sys.argv[2])
    for path in (WASM, CRASH_WASM):
        if not os.path.exists(path):
            sys.exit("%s is missing (tests/envoy/build.sh builds it)" % path)
    configuration_cases()
    missing_env_cases()
    if harness.FRONT == "module":
        module_crash("headers")
        module_crash("body")
        module_crash("headers", concurrency=2, crashes=8)
        failed = results.count(False)
        print("%d passed, %d failed" % (results.count(True), failed))
        sys.exit(1 if failed else 0)
    fail_closed_crash("headers")
    fail_closed_crash("body")
    fail_closed_two_workers()
    fail_closed_crash("headers", policy=None)  # Envoy's default: as FAIL_CLOSED
    fail_reload_crash()
    fail_open_control()
    failed = results.count(False)
    print("%d passed, %d failed" % (results.count(True), failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
