#!/usr/bin/env bash
# Envoy benchmark (not a test), on 127.0.0.1: Envoy alone, with toolctx
# (V8, wasmtime, WAMR) and with the built-in jwt_authn on the same HS256
# token; accepted, refused and pass-through requests; HTTP/1.1 (wrk) and
# HTTP/2 (h2load). See bench/envoy_bench.py for the knobs.
#   bench/envoy.sh            the comparison
#   bench/envoy.sh profile    the bench-profile build: phase timings and
#                             host calls per request
# TOOLCTX_ENVOY_WASM: a filter build to take instead of building one.
. "$(dirname "$0")/../scripts/lib.sh"
. "$ROOT/tests/envoy/build.sh"

ensure_wasm_targets
ensure_envoy
ensure_apt wrk wrk
ensure_apt h2load nghttp2-client
step "building the filter"
[ -n "${TOOLCTX_ENVOY_WASM:-}" ] || build_envoy_filter "${1:-}"
step "benchmark"
python3 "$ROOT/bench/envoy_bench.py" "$@"
