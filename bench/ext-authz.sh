#!/usr/bin/env bash
# What the ext_authz hop costs (not a test): requests/s, p50/p99 and CPU per
# request with wrk on 127.0.0.1 for Envoy alone, Envoy + toolctx's wasm
# filter, Envoy + ext_authz + `toolctx serve ext-authz` (release build),
# and Envoy + the built-in jwt_authn, on the same HS256 token and body.
# BENCH_DURATION (default 5s per round), BENCH_ROUNDS (3), BENCH_WARMUP (2s),
# BENCH_CONNECTIONS (16). TOOLCTX_BIN, TOOLCTX_ENVOY_WASM: builds to take
# instead of building the release ones (scripts/test-bench's smoke run takes
# the debug toolctx and the filter scripts/test-envoy built).
. "$(dirname "$0")/../scripts/lib.sh"
. "$ROOT/tests/envoy/build.sh"

ensure_wasm_targets
ensure_envoy
ensure_apt wrk wrk
step "building the release filter and the release toolctx"
[ -n "${TOOLCTX_ENVOY_WASM:-}" ] || build_envoy_filter
[ -n "${TOOLCTX_BIN:-}" ] || (cd "$ROOT" && cargo build -q --release -p toolctx-cli)
step "benchmark"
python3 "$ROOT/bench/ext_authz_bench.py"
