# Builds both filter variants into target/envoy/; source it after scripts/lib.sh.
#   toolctx_envoy.wasm             release (what ships)
#   toolctx_envoy_test_clock.wasm  test-only: `now` from a request header
# The size tuning (opt-level z, symbols stripped) is applied here on top of
# the workspace's `wasm` profile, which other front ends share.
build_envoy_filter() {
  local out="$ROOT/target/envoy" built="$ROOT/target/wasm32-wasip1/wasm/toolctx_envoy.wasm"
  mkdir -p "$out"
  export CARGO_PROFILE_WASM_OPT_LEVEL=z CARGO_PROFILE_WASM_STRIP=symbols
  (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm --features test-clock)
  cp "$built" "$out/toolctx_envoy_test_clock.wasm"
  (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm)
  cp "$built" "$out/toolctx_envoy.wasm"
  unset CARGO_PROFILE_WASM_OPT_LEVEL CARGO_PROFILE_WASM_STRIP
}
