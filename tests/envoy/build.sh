# Builds both filter variants into target/envoy/; source it after scripts/lib.sh.
#   toolctx_envoy.wasm             release (what ships)
#   toolctx_envoy_test_clock.wasm  test-only: `now` from a request header
# Tuning on top of the workspace's `wasm` profile (shared with other front
# ends, so applied here for this build only): opt-level z and no symbol names
# for size, except the core, kept at opt-level 3 because its checks are the
# hot path (about 1.5x faster in V8 than at z, and no larger here).
build_envoy_filter() {
  local out="$ROOT/target/envoy" built="$ROOT/target/wasm32-wasip1/wasm/toolctx_envoy.wasm"
  local tuning=(--config 'profile.wasm.package.toolctx-core.opt-level=3')
  mkdir -p "$out"
  export CARGO_PROFILE_WASM_OPT_LEVEL=z CARGO_PROFILE_WASM_STRIP=symbols
  (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm "${tuning[@]}" --features test-clock)
  cp "$built" "$out/toolctx_envoy_test_clock.wasm"
  (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm "${tuning[@]}")
  cp "$built" "$out/toolctx_envoy.wasm"
  unset CARGO_PROFILE_WASM_OPT_LEVEL CARGO_PROFILE_WASM_STRIP
}
