#!/usr/bin/env bash
# Envoy benchmark (not a test): requests/s and p50/p99 with wrk on 127.0.0.1
# for the upstream alone, Envoy alone, Envoy + toolctx, and Envoy + the
# built-in jwt_authn on the same HS256 token (without and with its cache).
# BENCH_DURATION (default 5s per round), BENCH_ROUNDS (2), BENCH_WARMUP (2s),
# BENCH_CONNECTIONS (16).
. "$(dirname "$0")/../scripts/lib.sh"
. "$ROOT/tests/envoy/build.sh"

ensure_wasm_targets
ensure_envoy
ensure_apt wrk wrk
step "building the release filter"
build_envoy_filter
step "benchmark"
python3 "$ROOT/bench/envoy_bench.py"
