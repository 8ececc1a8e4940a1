#!/usr/bin/env bash
# The Java front end's runtime comparison (not a test): CPU per verified
# call of the same accepted tools/call (tests/vectors/valid.json's first
# case), in-process, warmed, median of 3 runs of BENCH_ITERATIONS (20000):
#   - the core compiled to JVM bytecode by Chicory (the shipped runtime):
#     the raw export and the public Verifier.verify, on Java 17 and on
#     Temurin 25, default flags (the Java build of the module has no method
#     past HotSpot's 8000-byte JIT limit: scripts/lib.sh build_wasm_abi);
#   - the same exact ABI input on a native build of crates/wasm-abi through
#     FFM (java.lang.foreign, Temurin 25): bench/java/FfmVerify.java;
#   - what a Java developer would write: auth0 java-jwt 4.6.2 HS256 +
#     Jackson + the `_meta` binding (java/testkit HandWritten.java);
#   - over HTTP (bench/java_http.py): the server's CPU per accepted call,
#     the example's java-sdk server plain, behind ToolctxFilter and behind
#     the hand-written filter, and the added CPU of each (BENCH_CALLS, 4000,
#     after BENCH_WARMUP, 16000: the JIT compiles the module for longer, and
#     its CPU counts).
# JDK25 (default /usr/lib/jvm/temurin-25-jdk-amd64).
. "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
N="${BENCH_ITERATIONS:-20000}"
JDK25="${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}"

step "build: the Java modules (no tests), the native library (release)"
JAVA_SKIP_TESTS=1 build_java
cargo build -q -p toolctx-wasm-abi --release
CP="java/testkit/target/classes:$(cat java/testkit/target/classpath.txt)"
input="$(mktemp)"

for jvm in java "$JDK25/bin/java"; do
  step "Chicory on $("$jvm" -version 2>&1 | head -1)"
  "$jvm" -cp "$CP" dev.toolctx.testkit.VerifyBench tests/vectors/valid.json "$input" "$N" 2>&1 | grep -v '^SLF4J'
done

step "FFM on the native build ($("$JDK25/bin/java" -version 2>&1 | head -1))"
"$JDK25/bin/java" --enable-native-access=ALL-UNNAMED bench/java/FfmVerify.java \
  target/release/libtoolctx_wasm_abi.so "$input" "$N"
rm -f "$input"

for jvm in java "$JDK25/bin/java"; do
  step "over HTTP on $("$jvm" -version 2>&1 | head -1): added CPU per call over the plain server"
  python3 bench/java_http.py "$CP" --java "$jvm" --calls "${BENCH_CALLS:-4000}" --warmup "${BENCH_WARMUP:-16000}"
done
