# Builds the filter variants into target/envoy/; source it after scripts/lib.sh.
#   toolctx_envoy.wasm             release (what ships)
#   toolctx_envoy_test_clock.wasm  test-only: `now` from a request header
#   toolctx_envoy_test_crash.wasm  test-only: panics on request (header
#                                  x-toolctx-test-crash), for fail_closed.py
#   toolctx_envoy_profile.wasm     bench-only, with `build_envoy_filter profile`:
#                                  phase timings and host-call counts
#                                  (feature bench-profile)
# Tuning on top of the workspace's `wasm` profile (shared with other front
# ends, so applied here for this build only): opt-level z for size, except
# the core, kept at opt-level 3 because its checks are the hot path (about
# 1.5x faster in V8 than at z, and no larger here); then binaryen's
# `wasm-opt -O3`, which takes about 35 KB off rustc's output (the default
# build, with AIVAX's bcrypt, would not fit its budget without it).
# Before wasm-opt, trim_exports.py drops the SDK's exported callbacks the
# filter does not use: Envoy then skips them (four VM entries fewer per
# request), and wasm-opt drops the code behind them (about 11 KB).

BINARYEN_VERSION=132.0.0

# binaryen's wasm-opt from npm into .tools/binaryen (Debian's binaryen is
# too old); sets WASM_OPT.
ensure_wasm_opt() {
  WASM_OPT="$TOOLS/binaryen/node_modules/.bin/wasm-opt"
  if ! "$WASM_OPT" --version 2>/dev/null | grep -q "version ${BINARYEN_VERSION%%.*}"; then
    step "installing binaryen $BINARYEN_VERSION from npm (wasm-opt)"
    npm install --prefix "$TOOLS/binaryen" "binaryen@$BINARYEN_VERSION" --no-audit --no-fund --loglevel=error
  fi
}

# rustc's module -> trimmed exports -> wasm-opt -> $1
finish_envoy_filter() {
  local built="$ROOT/target/wasm32-wasip1/wasm/toolctx_envoy.wasm"
  python3 "$ROOT/tests/envoy/trim_exports.py" "$built" "$built.trimmed"
  # Renamed into place: an Envoy of the other lane loading it meanwhile
  # reads the old file or the new one, never half of one.
  "$WASM_OPT" -O3 --strip-debug --strip-producers "$built.trimmed" -o "$1.tmp"
  mv -f "$1.tmp" "$1"
}

# `build_envoy_filter release` builds the release module alone (what
# scripts/release ships and scripts/test-release loads).
# Each variant goes through the one file rustc writes: under a lock, so that
# a part in scripts/test's other lane building at the same time cannot swap
# it between cargo and wasm-opt.
build_envoy_filter() { with_lock envoy-filter _build_envoy_filter "$@"; }
_build_envoy_filter() { # build_envoy_filter [profile|release]
  local out="$ROOT/target/envoy"
  local tuning=(--config 'profile.wasm.package.toolctx-core.opt-level=3')
  ensure_wasm_opt
  mkdir -p "$out"
  # Panic locations name source files: shorten the paths of this build
  # host (about 2 KB, and no /root/... in the module).
  local remap=("--remap-path-prefix=$ROOT/=") dir
  for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
    remap+=("--remap-path-prefix=$dir=")
  done
  # Symbols stay for wasm-opt to read the target_features section; it
  # strips the names afterwards.
  export CARGO_PROFILE_WASM_OPT_LEVEL=z CARGO_PROFILE_WASM_STRIP=debuginfo
  # WebAssembly SIMD: Envoy's V8 (the runtime every config here names) runs
  # it, and sha2 then hashes with its SIMD backend, smaller and faster in V8
  # than its scalar code.
  export CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="${remap[*]} -C target-feature=+simd128"
  if [ "${1:-}" = profile ]; then
    (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm "${tuning[@]}" --features bench-profile)
    finish_envoy_filter "$out/toolctx_envoy_profile.wasm"
  fi
  if [ "${1:-}" != release ]; then
    (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm "${tuning[@]}" --features test-clock)
    finish_envoy_filter "$out/toolctx_envoy_test_clock.wasm"
    (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm "${tuning[@]}" --features test-crash)
    finish_envoy_filter "$out/toolctx_envoy_test_crash.wasm"
  fi
  (cd "$ROOT" && cargo build -q -p toolctx-envoy --target wasm32-wasip1 --profile wasm "${tuning[@]}")
  finish_envoy_filter "$out/toolctx_envoy.wasm"
  unset CARGO_PROFILE_WASM_OPT_LEVEL CARGO_PROFILE_WASM_STRIP CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS
}

# The native dynamic module (crates/envoy-module) into target/envoy/, beside
# the filter; Envoy finds lib<name>.so in ENVOY_DYNAMIC_MODULES_SEARCH_PATH:
#   libtoolctx_envoy_module.so             release (what ships)
#   libtoolctx_envoy_module_test_clock.so  test-only: `now` from a request header
#   libtoolctx_envoy_module_test_crash.so  test-only: panics on request
#   libtoolctx_envoy_module_profile.so     bench-only, with `build_envoy_module
#                                          profile`: the floors (feature bench-profile)
# Built for the host triple named explicitly, so its flags (source paths
# remapped, as for the filter) never touch the workspace's host builds; the
# release profile (LTO, unwinding panics: a hook's panic must be caught).
# Symbols the module does not export are stripped.
build_envoy_module() { with_lock envoy-module _build_envoy_module "$@"; }
_build_envoy_module() { # build_envoy_module [profile]
  local out="$ROOT/target/envoy" host built
  host="$(rustc -vV | sed -n 's/^host: //p')"
  built="$ROOT/target/$host/release/libtoolctx_envoy_module.so"
  mkdir -p "$out"
  local remap=("--remap-path-prefix=$ROOT/=") dir
  for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
    remap+=("--remap-path-prefix=$dir=")
  done
  local flags_var="CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$host")_RUSTFLAGS"
  export "$flags_var=${remap[*]}"
  local variant features
  local variants=(test_clock test_crash release)
  [ "${1:-}" = profile ] && variants=(profile "${variants[@]}")
  for variant in "${variants[@]}"; do
    features=()
    case "$variant" in
      release) ;;
      profile) features=(--features bench-profile) ;;
      *) features=(--features "${variant//_/-}") ;;
    esac
    (cd "$ROOT" && cargo build -q -p toolctx-envoy-module --release --target "$host" "${features[@]}")
    local name="libtoolctx_envoy_module.so"
    [ "$variant" = release ] || name="libtoolctx_envoy_module_$variant.so"
    strip --strip-unneeded -o "$out/$name.tmp" "$built"
    mv -f "$out/$name.tmp" "$out/$name"
  done
  unset "$flags_var"
}
