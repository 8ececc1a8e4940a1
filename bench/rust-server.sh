#!/usr/bin/env bash
# What toolctx-tower adds to an rmcp server (not a test): CPU per request and
# requests/s of one rmcp 3.11 server plain, behind ToolctxLayer, and behind
# the hand-written jsonwebtoken + serde_json axum middleware, with wrk on
# 127.0.0.1; `bench/rust-server.sh instructions [N]` counts instructions per
# call with callgrind instead. See bench/rust_server_bench.py for the knobs.
# TOOLCTX_BENCH_SERVER: a build to take instead of the release one
# (scripts/test-bench's smoke run takes the debug build).
. "$(dirname "$0")/../scripts/lib.sh"

ensure_apt wrk wrk
[ "${1:-}" = instructions ] && ensure_apt valgrind valgrind
if [ -z "${TOOLCTX_BENCH_SERVER:-}" ]; then
  step "building the release benchmark server (bench/rust-server)"
  (cd "$ROOT" && cargo build -q --release -p toolctx-bench-rust-server)
fi
step "benchmark"
python3 "$ROOT/bench/rust_server_bench.py" "$@"
