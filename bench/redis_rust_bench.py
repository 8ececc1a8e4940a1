#!/usr/bin/env python3
"""What the Redis topologies add to a guarded call through toolctx-tower
(not a test): one call through the layer's replay guard (a claim) and one
through the idempotency helper (a claim and a stored result), one after
the other, on a single plain node, TLS with an ACL user, a 3x2 cluster,
and the plain node with durable claims (`wait_replicas=1`: the Sentinel
set's primary, which has 2 replicas; its plain address is the baseline).
Side by side in one run: each round runs every store in turn; the medians
of the rounds, and each as a ratio of the plain node's.

    BENCH_ROUNDS (default 5), BENCH_CALLS (300 per round and store)
    python3 bench/redis_rust_bench.py EXECUTABLE   # tests/topology.rs, built
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "redis"))
from topology import HOST, Cluster, Sentinel, TlsRedis  # noqa: E402


def one(exe: str, address: str, calls: int) -> dict:
    out = subprocess.run([exe, "bench", address, str(calls)], capture_output=True, text=True, timeout=300)
    for line in out.stdout.splitlines():
        if line.startswith("BENCH "):
            r = json.loads(line[len("BENCH "):])
            if r["failed"] == 0:
                return r
    raise RuntimeError("bench on %s failed: %s %s" % (address.split("://")[0], out.stdout[-300:], out.stderr[-300:]))


def main() -> int:
    exe = sys.argv[1]
    rounds, calls = int(os.environ.get("BENCH_ROUNDS", "5")), int(os.environ.get("BENCH_CALLS", "300"))
    tls, cluster, sentinel = TlsRedis(), Cluster(), Sentinel()
    try:
        primary = "redis://%s:%d" % (HOST, sentinel.primary_port())
        stores = {"plain node": primary, "TLS + ACL": tls.address(), "cluster 3x2": cluster.address,
                  "durable (wait_replicas=1)": primary + "?wait_replicas=1"}
        seen: dict[str, dict[str, list[float]]] = {k: {"replay_us": [], "idempotent_us": []} for k in stores}
        for _ in range(rounds):
            for name, address in stores.items():
                r = one(exe, address, calls)
                for k in seen[name]:
                    seen[name][k].append(r[k])
    finally:
        tls.stop()
        cluster.stop()
        sentinel.stop()
    base = {k: statistics.median(v) for k, v in seen["plain node"].items()}
    print("median microseconds per guarded call (%d rounds of %d calls), and the ratio to the plain node:"
          % (rounds, calls))
    print("  %-26s %22s %26s" % ("store", "replay guard (1 claim)", "idempotent (claim+result)"))
    for name, v in seen.items():
        m = {k: statistics.median(x) for k, x in v.items()}
        print("  %-26s %12.0f us (%4.2fx) %16.0f us (%4.2fx)" % (
            name, m["replay_us"], m["replay_us"] / base["replay_us"],
            m["idempotent_us"], m["idempotent_us"] / base["idempotent_us"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
