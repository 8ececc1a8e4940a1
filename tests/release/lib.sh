# The checks of the shipped artifacts, shared by scripts/release (which
# builds every one) and scripts/test-release (the fast ones, in
# ./scripts/test). Source it after scripts/lib.sh.

RELEASE_DIR="$ROOT/tests/release"
# The tags scripts/release builds wheels for: Rust target, platform tag.
WHEEL_TARGETS=(
  "x86_64-unknown-linux-gnu manylinux_2_17"
  "aarch64-unknown-linux-gnu manylinux_2_17"
  "x86_64-unknown-linux-musl musllinux_1_2"
)

# The project's one version (Cargo.toml's [workspace.package]).
project_version() {
  sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml"
}

# publint, @arethetypeswrong/cli and the Kubernetes schemas (tests/release/
# package.json, pinned), twine and auditwheel from PyPI, Node 22 for the
# schema packages; sets NODE22 and VENV_PY.
ensure_release_tools() {
  if [ ! -f "$RELEASE_DIR/node_modules/.package-lock.json" ] || [ "$RELEASE_DIR/package-lock.json" -nt "$RELEASE_DIR/node_modules/.package-lock.json" ]; then
    step "npm ci (tests/release/: publint, @arethetypeswrong/cli, yaml, the Kubernetes, Istio and Gateway API models)"
    (cd "$RELEASE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  ensure_node22
  ensure_pip twine "twine==7.0.0"
  ensure_pip auditwheel "auditwheel==6.8.2"
}

check_versions() {
  python3 "$RELEASE_DIR/versions.py"
}

# `npm pack` of the built npm/ into OUT; prints the tarball's path.
pack_npm() { # pack_npm OUT
  mkdir -p "$1"
  local name
  name="$(cd "$ROOT/npm" && npm pack --silent --pack-destination "$1")"
  echo "$1/$name"
}

# The tarball as its consumers' tools resolve it. publint --strict: any
# warning fails. attw with the node16 profile (node16's CommonJS and ESM
# resolution, and bundlers), with one rule ignored: cjs-resolves-to-esm,
# because the package is ESM only by choice (README, "Install") and
# npm/test/pack.mjs shows `require()` of it working under Node 20.19+ and 22.
check_tarball() { # check_tarball TARBALL
  local bin="$RELEASE_DIR/node_modules/.bin"
  "$bin/publint" run "$1" --strict --level suggestion
  "$bin/attw" "$1" --profile node16 --ignore-rules cjs-resolves-to-esm --format table-flipped
}

# twine's metadata check, and the platform tag auditwheel reads off the
# binary itself (the symbols it links against), not off the file name.
check_wheel() { # check_wheel WHEEL PLATFORM_TAG (manylinux_2_17_x86_64, ...)
  "$VENV_PY" -m twine check --strict "$1"
  local shown
  shown="$("$VENV_PY" -m auditwheel show "$1" 2>&1)" || { echo "$shown" >&2; return 1; }
  case "$(basename "$1")" in
    *-cp310-abi3-*"$2"*.whl) ;;
    *) echo "$(basename "$1"): not an abi3 cp310 wheel tagged $2" >&2; return 1 ;;
  esac
  # auditwheel: 'is consistent with the following platform tag: "manylinux_2_17_x86_64"'
  # (musllinux wheels: the same sentence with their tag).
  if ! tr -s ' \n' '  ' <<<"$shown" | grep -q "consistent with the following platform tag: \"$2\""; then
    echo "$shown" >&2
    echo "auditwheel does not confirm $2 for $(basename "$1")" >&2
    return 1
  fi
  echo "$(basename "$1"): twine check passed; auditwheel confirms $2"
}

# The examples as users paste them: every Envoy configuration through
# `envoy --mode validate` with the real filter loaded in place of
# /etc/envoy/toolctx_envoy.wasm (and the dynamic module from MODULE_DIR), and every Kubernetes document against its
# schema (tests/release/examples.mjs).
check_examples() { # check_examples FILTER.wasm [MODULE_DIR]
  ensure_envoy
  local module_dir="${2:-}"
  local config scratch validated=0
  scratch="$(mktemp -d)"
  for config in "$ROOT"/examples/*/envoy.yaml; do
    sed "s#/etc/envoy/toolctx_envoy.wasm#$1#g" "$config" >"$scratch/envoy.yaml"
    local search=""
    if grep -q dynamic_modules "$config"; then
      # The dynamic module: Envoy loads libtoolctx_envoy_module.so from
      # ENVOY_DYNAMIC_MODULES_SEARCH_PATH (MODULE_DIR, else the release build).
      if [ -z "$module_dir" ]; then
        [ -f "$ROOT/target/envoy/libtoolctx_envoy_module.so" ] || build_envoy_module
        module_dir="$ROOT/target/envoy"
      fi
      search="$module_dir"
    elif grep -q toolctx_envoy "$config"; then
      grep -q "$1" "$scratch/envoy.yaml" || { echo "${config#"$ROOT"/}: the filter's path was not swapped in" >&2; return 1; }
    fi
    # The filter refuses a configuration whose secret variables are unset.
    if ! ENVOY_DYNAMIC_MODULES_SEARCH_PATH="$search" TOOLCTX_SECRET=0123456789abcdef0123456789abcdef TOOLCTX_CREDENTIAL='Bearer example' \
      "$ENVOY" --mode validate -c "$scratch/envoy.yaml" -l error --base-id "$$" >"$scratch/out" 2>&1; then
      cat "$scratch/out" >&2
      echo "${config#"$ROOT"/}: envoy --mode validate failed" >&2
      return 1
    fi
    echo "${config#"$ROOT"/}: envoy --mode validate: OK"
    validated=$((validated + 1))
  done
  [ "$validated" -gt 0 ] || { echo "no Envoy configuration found under examples/" >&2; return 1; }
  # The control: validate mode creates the VM and configures the filter, so
  # a file that is no module must fail it (else the runs above proved less).
  echo "not wasm" >"$scratch/bogus.wasm"
  sed "s#/etc/envoy/toolctx_envoy.wasm#$scratch/bogus.wasm#g" "$ROOT/examples/envoy/envoy.yaml" >"$scratch/envoy.yaml"
  if TOOLCTX_SECRET=0123456789abcdef0123456789abcdef TOOLCTX_CREDENTIAL='Bearer example' \
    "$ENVOY" --mode validate -c "$scratch/envoy.yaml" -l critical --base-id "$$" >/dev/null 2>&1; then
    echo "envoy --mode validate accepted a file that is no wasm module: it does not load the filter" >&2
    return 1
  fi
  echo "control: envoy --mode validate refuses a configuration whose module is not wasm"
  rm -rf "$scratch"
  (cd "$ROOT" && "$NODE22" "$RELEASE_DIR/examples.mjs" examples/istio/*.yaml examples/istio-ext-authz/*.yaml examples/envoy-gateway/*.yaml)
}

# The crates for crates.io are those without `publish = false`, read from
# `cargo metadata` (a crate added later is picked up by its own setting);
# each must name a README, a description and a licence. Sets
# PUBLISHED_CRATES and UNPUBLISHED_CRATES.
publishable_crates() {
  local listed
  listed="$(cd "$ROOT" && cargo metadata --no-deps --format-version 1 --offline | python3 -c '
import json, sys
meta = json.load(sys.stdin)
bad = []
for p in sorted(meta["packages"], key=lambda p: p["name"]):
    published = p["publish"] != []
    if published:
        name = p["name"]
        bad += [f"{name}: no {k}" for k in ("readme", "description", "license", "repository") if not p.get(k)]
    print(("pub " if published else "off ") + p["name"])
if bad:
    sys.exit("\n".join(bad))
')"
  mapfile -t PUBLISHED_CRATES < <(sed -n 's/^pub //p' <<<"$listed")
  mapfile -t UNPUBLISHED_CRATES < <(sed -n 's/^off //p' <<<"$listed")
  [ "${#PUBLISHED_CRATES[@]}" -gt 0 ] || { echo "no crate is meant for crates.io" >&2; return 1; }
}
