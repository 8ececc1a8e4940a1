#!/usr/bin/env bash
# What TLS, a Redis Cluster and durable claims add to a guarded call
# through toolctx-tower, against a single plain node (not a test): the
# topologies of tests/redis/topology.py on 127.0.0.1, each store in turn
# per round, medians and ratios (bench/redis_rust_bench.py). BENCH_ROUNDS
# (default 5), BENCH_CALLS (300). Debug build of the harness, as the tests
# build it: the ratios, not the absolute times, are the point.
. "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
ensure_apt redis-server redis-server
ensure_apt openssl openssl
step "building tests/topology.rs of toolctx-tower"
exe="$(cargo test -q -p toolctx-tower --features rmcp,redis --test topology --no-run --message-format=json \
  | python3 -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("executable") and m["target"]["name"] == "topology":
        print(m["executable"])')"
step "benchmark"
python3 bench/redis_rust_bench.py "$exe"
