#!/usr/bin/env python3
"""The official MCP conformance suite (@modelcontextprotocol/conformance,
pinned in package.json), unchanged, against the example servers
(examples/node-server three ways, examples/rust-server, examples/go-server
and examples/java-server two):

  unprotected  `--no-verify`: no toolctx at all;
  middleware   `--context-optional`: the toolctx npm middleware
               (`requireContext: false`), for the Rust server
               toolctx-tower's layer, for the Go server the Go package's
               middleware, for the Java server ToolctxFilter
               (`require_context: false`);
  envoy        Envoy 1.40 with the toolctx filter (`require_context: false`)
               in front of a `--no-verify` copy (Node example only: the
               filter does not depend on the upstream).

The suite sends no token (it cannot add request headers) and no agentarea/*
keys, so with `requireContext: false` toolctx must let every request through
untouched: each check's result (scenario by scenario, check by check) must be
the same in the three setups. The unprotected setup's failures (the suite's
fixture tools, resources and prompts, which the example does not have) must
be exactly those listed in baseline.json, each with its reason.

The suite runs with `--suite all` once per protocol version each server file
serves: server.mjs (MCP SDK v2) at 2025-11-25 and 2026-07-28, server-v1.mjs
(SDK 1.x, which has no 2026-07-28) at 2025-11-25, rust-server (rmcp 3.11,
the binary TOOLCTX_RUST_SERVER, default target/debug/toolctx-example-rust-server)
at both, go-server (go-sdk 1.8, the binary TOOLCTX_GO_SERVER, default
target/go/go-server) at both, java-server (java-sdk 2.2.0,
examples/java-server/run, built by build_java) at both.

    CONFORMANCE_NODE=.tools/node22/.../node ENVOY=... tests/conformance/run.py [--servers A,B] [--update-baseline]

`--servers` runs only the named ones (default: all), and checks only their
baseline entries.

Needs Node 22 for the suite (CONFORMANCE_NODE), the system Node for the
example server, Envoy (ENVOY) and the release filter (TOOLCTX_ENVOY_WASM,
default target/envoy/toolctx_envoy.wasm). Keeps the suite's results in
target/conformance/results/. Prints a table per scenario and closes with
`N passed, N failed` (one test per server file, protocol version and setup,
one for the baseline).
"""

import json
import os
import re
import secrets
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envoy"))
import harness  # noqa: E402

ROOT = harness.ROOT
EXAMPLE = os.path.join(ROOT, "examples", "node-server")
SUITE = os.path.join(HERE, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
BASELINE = os.path.join(HERE, "baseline.json")
OUT = os.path.join(ROOT, "target", "conformance")

# Server -> the protocol versions its SDK serves.
SERVERS = {"server.mjs": ["2025-11-25", "2026-07-28"], "server-v1.mjs": ["2025-11-25"],
           "rust-server": ["2025-11-25", "2026-07-28"], "go-server": ["2025-11-25", "2026-07-28"],
           "java-server": ["2025-11-25", "2026-07-28"]}
RUST = "rust-server"
# examples/java-server (java-sdk 2.2.0 on Jetty behind ToolctxFilter), built by
# build_java (scripts/lib.sh): 2025-11-25 through java-sdk's streamable
# transport, 2026-07-28 through its modern server, on one endpoint.
JAVA = "java-server"
# The example servers that are binaries: the variable naming each, and its default.
BINARIES = {RUST: ("TOOLCTX_RUST_SERVER", os.path.join("target", "debug", "toolctx-example-rust-server")),
            "go-server": ("TOOLCTX_GO_SERVER", os.path.join("target", "go", "go-server"))}
SETUPS = ["unprotected", "middleware", "envoy"]
# The setups each server runs in.
SERVER_SETUPS = {RUST: ["unprotected", "middleware"], "go-server": ["unprotected", "middleware"],
                 JAVA: ["unprotected", "middleware"]}
# The runs that are repeated against a server that requires context, to show
# that the comparison notices a toolctx that changes results.
CONTROLS = {("server.mjs", "2025-11-25"), ("rust-server", "2025-11-25"), ("go-server", "2025-11-25"),
            ("java-server", "2025-11-25"), ("java-server", "2026-07-28")}
# Results a baseline entry records: everything but a pass or a note.
NOT_PASSED = ("FAILURE", "WARNING", "SKIPPED")

INSTANCE = "conformance-" + secrets.token_hex(4)
ENV = {"TOOLCTX_INSTANCE_ID": INSTANCE, "TOOLCTX_SECRET": "conformance-secret-" + secrets.token_hex(16)}


def start_server(name, *flags):
    """The example server on a free port; returns its URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLCTX_")}
    env.update(ENV)
    if name in BINARIES:
        variable, default = BINARIES[name]
        argv = [os.environ.get(variable) or os.path.join(ROOT, default)]
    elif name == JAVA:
        argv = [os.path.join(ROOT, "examples", "java-server", "run")]
    else:
        argv = ["node", name]
    p = harness.start([*argv, "--port", "0", "--exit-with-stdin", *flags], cwd=EXAMPLE, env=env,
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"listening (http://127\.0\.0\.1:\d+/mcp)", line)
    if not m:
        raise RuntimeError("%s %s did not start: %r" % (name, " ".join(flags), line))
    return m.group(1)


def start_envoy(upstream_url):
    """Envoy with the toolctx filter, `require_context: false`, in front of
    `upstream_url`; returns the URL to call."""
    wasm = os.environ.get("TOOLCTX_ENVOY_WASM") or os.path.join(ROOT, "target", "envoy", "toolctx_envoy.wasm")
    admin, listen = harness.free_ports(2)
    up_port = int(re.search(r":(\d+)/", upstream_url).group(1))
    plugin = {"instance_id": INSTANCE, "secret_env": ["TOOLCTX_SECRET"], "require_context": False}
    listeners = [harness.listener("mcp", listen, [harness.wasm_filter(wasm, plugin, ["TOOLCTX_SECRET"])])]
    harness.Envoy(harness.bootstrap(admin, listeners, up_port), env=ENV).start(admin)
    return "http://127.0.0.1:%d/mcp" % listen


def run_suite(url, spec, out_dir):
    """Runs every server scenario the suite has for `spec`; returns
    {scenario: [(check id, status, message)]} in the suite's order."""
    node = os.path.abspath(os.environ["CONFORMANCE_NODE"]) if os.environ.get("CONFORMANCE_NODE") else "node"
    argv = [node, SUITE, "server", "--url", url, "--suite", "all", "--spec-version", spec, "-o", out_dir]
    with open(out_dir + ".txt", "w") as log:
        # Exit status 1 when any check fails, which the baseline accounts for.
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=600, cwd=HERE)
    results = {}
    for d in sorted(os.listdir(out_dir)):
        m = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$", d)
        path = os.path.join(out_dir, d, "checks.json")
        if not m or not os.path.exists(path):
            continue
        with open(path) as f:
            checks = json.load(f)
        # The port is the only thing a message may name that differs between setups.
        results[m.group(1)] = [(c["id"], c["status"], re.sub(r"127\.0\.0\.1:\d+|localhost:\d+", "HOST",
                                                             c.get("errorMessage") or "")) for c in checks]
    if not results:
        raise RuntimeError("the suite produced no results: see %s.txt" % out_dir)
    return results


def by_check(checks):
    """check id -> its results in order (an id can occur more than once)."""
    out = {}
    for cid, status, message in checks:
        out.setdefault(cid, []).append((status, message))
    return out


def differences(base, other):
    """Checks whose status (or failure message) differs: [(scenario, check, base, other)]."""
    diffs = []
    for scenario in sorted(set(base) | set(other)):
        a, b = by_check(base.get(scenario, [])), by_check(other.get(scenario, []))
        for cid in sorted(set(a) | set(b)):
            ra, rb = a.get(cid, []), b.get(cid, [])
            for i in range(max(len(ra), len(rb))):
                x = ra[i] if i < len(ra) else ("ABSENT", "")
                y = rb[i] if i < len(rb) else ("ABSENT", "")
                if x != y:
                    diffs.append((scenario, cid, x, y))
    return diffs


def counts(checks):
    passed = sum(1 for _, s, _ in checks if s == "SUCCESS")
    failed = sum(1 for _, s, _ in checks if s == "FAILURE")
    return passed, failed, len(checks) - passed - failed


def baseline_of(results):
    """The unprotected setup's results that are not passes, as baseline keys."""
    out = {}
    for scenario, checks in results.items():
        for cid, status, _ in checks:
            if status in NOT_PASSED:
                out.setdefault("%s:%s" % (scenario, cid), set()).add(status)
    return {k: "/".join(sorted(v)) for k, v in out.items()}


def main():
    update = "--update-baseline" in sys.argv[1:]
    chosen = list(SERVERS)
    if "--servers" in sys.argv[1:]:
        chosen = sys.argv[sys.argv.index("--servers") + 1].split(",")
        unknown = set(chosen) - set(SERVERS)
        if unknown:
            raise SystemExit("--servers: unknown %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(SERVERS)))
    with open(BASELINE) as f:
        baseline = json.load(f)
    reasons = baseline["reasons"]
    os.makedirs(os.path.join(OUT, "results"), exist_ok=True)
    version = json.load(open(os.path.join(os.path.dirname(os.path.dirname(SUITE)), "package.json")))["version"]
    print("@modelcontextprotocol/conformance %s, --suite all; checks passed/failed/other (warnings, skips, notes)"
          % version)

    passed = failed = 0
    total_diffs = 0
    new_baseline = {}
    all_results = {}
    for server in chosen:
        specs = SERVERS[server]
        setups = SERVER_SETUPS.get(server, SETUPS)
        urls = {"unprotected": start_server(server, "--no-verify"),
                "middleware": start_server(server, "--context-optional")}
        if "envoy" in setups:
            urls["envoy"] = start_envoy(start_server(server, "--no-verify"))
        for spec in specs:
            results = {}
            for setup in setups:
                out_dir = os.path.join(OUT, "results", "%s-%s-%s" % (server.replace(".mjs", ""), spec, setup))
                subprocess.run(["rm", "-rf", out_dir], check=True)
                t0 = time.time()
                results[setup] = run_suite(urls[setup], spec, out_dir)
                results[setup + "_s"] = time.time() - t0
            all_results["%s %s" % (server, spec)] = {s: results[s] for s in setups}
            diffs = {s: differences(results["unprotected"], results[s]) for s in setups[1:]}
            print("\n%s at %s (%s)" % (server, spec, ", ".join("%s %.1f s" % (s, results[s + "_s"]) for s in setups)))
            row = "  %-46s" + " %12s" * len(setups) + " %8s"
            print(row % ("scenario", *setups, "differ"))
            scenarios = sorted(set().union(*(results[s] for s in setups)))
            for scenario in scenarios:
                cols = ["%d/%d/%d" % counts(results[s].get(scenario, [])) for s in setups]
                n = sum(1 for s in setups[1:] for d in diffs[s] if d[0] == scenario)
                print(row % (scenario, *cols, n))
            sums = ["%d/%d/%d" % tuple(map(sum, zip(*(counts(c) for c in results[s].values())))) for s in setups]
            n_diffs = sum(len(d) for d in diffs.values())
            print(row % ("all %d scenarios" % len(scenarios), *sums, n_diffs))
            total_diffs += n_diffs
            for s in setups[1:]:
                for scenario, cid, x, y in diffs[s]:
                    print("  DIFF %s %s:%s unprotected %s %r, %s %s %r" % (s, scenario, cid, x[0], x[1][:120],
                                                                          s, y[0], y[1][:120]))
                ok = not diffs[s]
                passed, failed = passed + ok, failed + (not ok)
                print("%s - %s at %s: %s results as without toolctx" % (
                    "ok" if ok else "FAIL", s, spec, "the same" if ok else "%d checks differ from the" % len(diffs[s])))
            key = "%s %s" % (server, spec)
            new_baseline[key] = baseline_of(results["unprotected"])
            if (server, spec) in CONTROLS:
                # The control: a verifier that requires context refuses the
                # suite's token-less tools/call, and the comparison must see it.
                out_dir = os.path.join(OUT, "results", "%s-%s-control" % (server.replace(".mjs", ""), spec))
                subprocess.run(["rm", "-rf", out_dir], check=True)
                control = differences(results["unprotected"], run_suite(start_server(server), spec, out_dir))
                ok = len(control) > 0
                passed, failed = passed + ok, failed + (not ok)
                print("%s - control: with requireContext true (token-less tools/call refused) %d checks differ" % (
                    "ok" if ok else "FAIL", len(control)))

    # The baseline: the unprotected setup's results that are not passes,
    # exactly, each with a reason.
    problems = []
    for key, found in new_baseline.items():
        listed = baseline["expected"].get(key, {})
        for k in sorted(set(found) | set(listed)):
            want = listed.get(k, {}).get("status")
            why = listed.get(k, {}).get("reason")
            if k not in listed:
                problems.append("%s %s: %s without toolctx, not in the baseline" % (key, k, found[k]))
            elif k not in found:
                problems.append("%s %s: in the baseline (%s) but passes now: remove it" % (key, k, want))
            elif want != found[k]:
                problems.append("%s %s: %s in the baseline, %s now" % (key, k, want, found[k]))
            elif why not in reasons:
                problems.append("%s %s: reason %r is not explained in the baseline's reasons" % (key, k, why))
    ran = {"%s %s" % (server, spec) for server in chosen for spec in SERVERS[server]}
    for key in {k for k in baseline["expected"] if k.split(" ")[0] in chosen} - ran:
        problems.append("baseline entry %r: no such run" % key)
    for p in problems:
        print("BASELINE %s" % p)
    ok = not problems
    passed, failed = passed + ok, failed + (not ok)
    print("%s - the results without toolctx are the baseline's (%d entries, %d reasons)" % (
        "ok" if ok else "FAIL", sum(len(baseline["expected"].get(k, {})) for k in ran), len(reasons)))

    if update:
        for key, found in new_baseline.items():
            old = baseline["expected"].get(key, {})
            baseline["expected"][key] = {k: {"status": found[k], "reason": old.get(k, {}).get("reason", "TODO")}
                                         for k in sorted(found)}
        with open(BASELINE, "w") as f:
            json.dump(baseline, f, indent=1)
            f.write("\n")
        print("baseline.json rewritten from this run: give every TODO a reason")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(all_results, f, indent=1)
    print("\nchecks that differ from the unprotected setup: %d" % total_diffs)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
