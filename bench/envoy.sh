#!/usr/bin/env bash
# Envoy benchmark (not a test), on 127.0.0.1: Envoy alone, with toolctx
# (V8, wasmtime, WAMR), with the toolctx dynamic module, and with the
# built-in jwt_authn on the same HS256 token; accepted, refused and
# pass-through requests; HTTP/1.1 (wrk) and HTTP/2 (h2load). See
# bench/envoy_bench.py for the knobs.
#   bench/envoy.sh            the comparison
#   bench/envoy.sh profile    the bench-profile builds: the filter's phase
#                             timings and host calls per request, the
#                             floors under the filter and the module
#   bench/envoy.sh perf       perf record of one Envoy worker running the
#                             module (where its time goes)
# TOOLCTX_ENVOY_WASM: a filter build to take instead of building one.
. "$(dirname "$0")/../scripts/lib.sh"
. "$ROOT/tests/envoy/build.sh"

ensure_wasm_targets
ensure_envoy
ensure_apt wrk wrk
ensure_apt h2load nghttp2-client
[ "${1:-}" = perf ] && ensure_apt perf linux-perf
step "building the filter and the dynamic module"
[ "${1:-}" = perf ] || [ -n "${TOOLCTX_ENVOY_WASM:-}" ] || build_envoy_filter "${1:-}"
build_envoy_module "${1:-}"
step "benchmark"
python3 "$ROOT/bench/envoy_bench.py" "$@"
