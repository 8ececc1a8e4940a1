#!/usr/bin/env python3
"""toolctx-tower's Redis stores (the replay guard and the idempotency
helper, the ones `toolctx serve ext-authz` and the Rust example use) on the
topologies of tests/redis/topology.py, one of each kind started once and
shared by every case, 127.0.0.1 only:

- TLS with an ACL user: served (with and without a client certificate);
  a wrong CA, a wrong password, plain RESP to the TLS port: refused at
  connect, nothing ran; durable claims no replica can meet: every call
  refused, nothing ran, the claim released;
- the 3x2 cluster: served from a seed list; a slot moved while calls run
  on it (none refused, none accepted or run twice); a primary killed while
  calls run, without durable claims (refused during the failover, then
  served; how many tokens were accepted twice and calls run twice is
  measured and printed, not asserted) and with them, on another primary
  (none twice; the promoted replica has no replica of its own, so its
  calls stay refused: durable claims fail closed);
- `toolctx serve ext-authz` behind Envoy (tests/redis/ext_authz.py, when
  ENVOY is set): two replicas sharing TLS + ACL, then the cluster; a wrong
  CA and a wrong password stop it at start;
- Sentinel: served through the primary's name; the primary killed while
  calls run with durable claims: refused during the failover, re-found,
  then served, none twice; the new primary killed without them: re-found
  again, the count measured.

The cases run tests/topology.rs of crates/tower (built here with cargo),
which asks for each action on stdout and waits for `done` on stdin.

    python3 tests/redis/rust.py     # prints ok/FAIL lines, `N passed, N failed`
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from topology import HOST, Cluster, Sentinel, TlsRedis, cli  # noqa: E402

results: list[bool] = []
measured: dict[str, dict] = {}


def check(what: str, ok: bool, detail: object = "") -> None:
    results.append(bool(ok))
    print("%s - %s%s" % ("ok" if ok else "FAIL", what, "" if ok else ": %r" % (detail,)), flush=True)


def harness() -> str:
    """Builds tests/topology.rs and gives its executable."""
    out = subprocess.run(["cargo", "test", "-q", "-p", "toolctx-tower", "--features", "rmcp,redis",
                          "--test", "topology", "--no-run", "--message-format=json"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "topology" \
                and msg.get("executable"):
            return msg["executable"]
    raise RuntimeError("cargo built no tests/topology.rs")


def case(exe: str, name: str, args: list[str], action=None, env: dict | None = None) -> dict | None:
    """Runs one case; its ok/FAIL lines count here. The RESULT, if any."""
    print("# %s" % name, flush=True)
    t0 = time.monotonic()
    # The stores' log lines (one per refused call): summed up at the end.
    log = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([exe, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                            env=dict(os.environ, **(env or {})))
    result = None
    assert proc.stdout and proc.stdin
    for line in proc.stdout:
        line = line.rstrip("\n")
        if line == "ACTION":
            what = action() if action else "none"
            print("# action: %s" % what, flush=True)
            proc.stdin.write("%s\n" % what)
            proc.stdin.flush()
        elif line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            print("# %s" % line, flush=True)
        elif line.startswith("ok - ") or line.startswith("FAIL - "):
            check("%s: %s" % (name, line.split(" - ", 1)[1]), line.startswith("ok - "))
        else:
            print(line, flush=True)
    code = proc.wait(120)
    log.seek(0)
    lines = collections.Counter(log.read().splitlines())
    for line, n in lines.most_common(4):
        print("# stderr %dx: %s" % (n, line[:200]), flush=True)
    check("%s: the case ended (exit %d) in %.1f s" % (name, code, time.monotonic() - t0), code == 0, code)
    return result


def ext_authz():
    """tests/redis/ext_authz.py when Envoy is at hand (scripts/test-redis-rust
    sets ENVOY), else None."""
    if not os.environ.get("ENVOY"):
        print("# ENVOY not set: the ext_authz cases are skipped", flush=True)
        return None
    import ext_authz as module
    return module


def example_starts(name: str, address: str, wanted: bool) -> None:
    """examples/rust-server --redis ADDRESS: listening (or refusing to
    start, without the password), when scripts/test-redis-rust built it."""
    binary = os.environ.get("TOOLCTX_RUST_SERVER")
    if not binary:
        return
    env = dict(os.environ, TOOLCTX_INSTANCE_ID="i-redis", TOOLCTX_SECRET="s" * 40)
    proc = subprocess.Popen([binary, "--redis", address], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
    finally:
        proc.kill()
        proc.wait()
    password = address.split("://", 1)[-1].rsplit("@", 1)[0].split(":", 1)[-1] if "@" in address else None
    check("%s: the Rust example with --redis %s" % (name, "listens" if wanted else "refuses to start"),
          line.startswith("listening") == wanted and (not password or password not in line), line.strip())


def tls_cases(exe: str) -> None:
    tls = TlsRedis()
    try:
        case(exe, "TLS + ACL user", ["serve", tls.address()])
        case(exe, "TLS + ACL user + client certificate", ["serve", tls.address(client_cert=True)])
        before = tls.command("DBSIZE")
        case(exe, "TLS: refusals", ["refuse", tls.address(ca=tls.wrong_ca), tls.address(password="wrong-pw"),
                                    "redis://toolctx:%s@%s:%d" % (tls.password, HOST, tls.port)],
             env={"TOOLCTX_TOPOLOGY_PASSWORD": tls.password})
        check("TLS: the refused clients wrote nothing", tls.command("DBSIZE") == before,
              (before, tls.command("DBSIZE")))
        case(exe, "TLS: durable claims no replica meets", ["short", tls.address() + "&wait_replicas=1&wait_timeout_ms=50"])
        example_starts("TLS + ACL user", tls.address(), True)
        example_starts("TLS, a wrong CA", tls.address(ca=tls.wrong_ca), False)
        ea = ext_authz()
        if ea:
            ea.replicas("TLS + ACL user", tls.address(), check)
            ea.refused("TLS, a wrong CA", tls.address(ca=tls.wrong_ca), "cannot reach Redis", check)
            ea.refused("TLS, a wrong password", tls.address(password="wrong-pw"), "cannot reach Redis", check)
    finally:
        tls.stop()


def cluster_tag(cluster: Cluster, avoid: set[int]) -> str:
    """A hash tag whose slot's primary has a live, in-sync replica and is
    not in `avoid` (each failover case takes its own primary)."""
    lines = [ln.split() for ln in cli(cluster.live()[0], "CLUSTER", "NODES").splitlines()]
    with_replica = {f[3] for f in lines if len(f) > 3 and "slave" in f[2] and "fail" not in f[2]}
    ids = {int(f[1].split("@")[0].rsplit(":", 1)[1]): f[0] for f in lines if len(f) > 1}
    for i in range(1000):
        tag = "t%d" % i
        port = cluster.owner("{%s}" % tag)
        if port not in avoid and ids.get(port) in with_replica:
            return tag
    raise LookupError("no primary with a replica")


def cluster_cases(exe: str) -> None:
    cluster = Cluster()
    try:
        address = cluster.address
        case(exe, "cluster (seed list)", ["serve", address])
        case(exe, "cluster: one seed", ["serve", "redis-cluster://%s:%d" % (HOST, cluster.ports[0])])
        example_starts("cluster", address, True)
        ea = ext_authz()
        if ea:
            ea.replicas("cluster", address, check)

        tag = cluster_tag(cluster, set())

        def move() -> str:
            src, dst = cluster.move_slot("{%s}" % tag)
            return "slot of {%s} moved %d -> %d" % (tag, src, dst)
        measured["cluster slot move"] = case(exe, "cluster: a slot moved while calls run",
                                             ["load", address, tag, "--no-failure", "--none-twice"], move) or {}

        killed: set[int] = set()
        for durable in (False, True):
            tag = cluster_tag(cluster, killed)
            owner = cluster.owner("{%s}" % tag)

            def kill(tag=tag) -> str:
                port = cluster.kill_primary("{%s}" % tag)
                killed.add(port)
                return "primary %d of {%s} killed, replica %d promoted" % (port, tag, cluster.owner("{%s}" % tag))
            name = "cluster: a primary killed while calls run, %s durable claims" % ("with" if durable else "without")
            # With durable claims, the promoted replica has no replica of
            # its own (3x2): its slots' calls are refused from then on.
            args = ["load", address + ("?wait_replicas=1" if durable else ""), tag]
            flags = ["--none-twice", "--no-replica-after"] if durable else []
            measured[name] = case(exe, name, args + flags, kill) or {}
            cluster.wait_ok()
            killed.add(owner)
    finally:
        cluster.stop()


def sentinel_cases(exe: str) -> None:
    sentinel = Sentinel()
    try:
        case(exe, "Sentinel (the primary by name)", ["serve", sentinel.address])
        example_starts("Sentinel", sentinel.address, True)

        def kill() -> str:
            old = sentinel.kill_primary()
            return "primary %d killed, %d promoted" % (old, sentinel.primary_port())
        name = "Sentinel: the primary killed while calls run, with durable claims"
        measured[name] = case(exe, name, ["load", sentinel.address.replace("#", "?wait_replicas=1#"), "s",
                                          "--none-twice"], kill) or {}
        # Again, without durable claims: the last replica is promoted.
        name = "Sentinel: the new primary killed while calls run, without durable claims"
        measured[name] = case(exe, name, ["load", sentinel.address, "s"], kill) or {}
    finally:
        sentinel.stop()


def main() -> int:
    t0 = time.monotonic()
    exe = harness()
    print("# harness built in %.1f s" % (time.monotonic() - t0), flush=True)
    for part in (tls_cases, cluster_cases, sentinel_cases):
        t = time.monotonic()
        part(exe)
        print("# %s: %.1f s" % (part.__name__, time.monotonic() - t), flush=True)
    print("# failover counts (tokens accepted twice / calls run twice, of those accepted / completed):")
    for name, r in measured.items():
        if r:
            print("#   %s: %d/%d tokens, %d/%d calls; refused up to the end of the action / after it %d/%d" % (
                name, r["accepted_twice"], r["tokens_accepted"], r["ran_twice"], r["calls_completed"],
                r["refused_before"], r["refused_after"]))
    print("%d passed, %d failed (%.1f s)" % (results.count(True), results.count(False), time.monotonic() - t0))
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
