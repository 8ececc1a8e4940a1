#!/usr/bin/env bash
# The Java front end's runtimes side by side (not a test): CPU per verified
# call of the same accepted tools/call (tests/vectors/valid.json's first
# case), in-process, warmed, median of 3 runs of BENCH_ITERATIONS (20000),
# each JVM with default flags, one after the other in this one run:
#   - the core native through FFM (Java 25: the runtime a Java 22+ JVM on
#     linux-x86_64 gets from the jar);
#   - the core's wasm module compiled to JVM bytecode by Chicory, on Java 17
#     (the runtime there) and on Java 25 (-Dtoolctx.runtime=chicory);
#   - what a Java developer would write: auth0 java-jwt 4.6.2 HS256 +
#     Jackson + the `_meta` binding (java/testkit HandWritten.java), on
#     each JVM;
# then a table of the three paths with their ratio to the hand-written
# check on the same JVM (the issue's goal: at most 1.5x).
# BENCH_HTTP=1 also runs bench/java_http.py (the server's added CPU per
# accepted call over the plain server: BENCH_CALLS, 4000, after
# BENCH_WARMUP, 16000) for each of the three.
# JDK25 (default /usr/lib/jvm/temurin-25-jdk-amd64), JDK17 (java).
. "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
N="${BENCH_ITERATIONS:-20000}"
JDK25="${JDK25:-$JAVA25_HOME}/bin/java"
JDK17="${JDK17:-java}"

step "build: the Java modules (no tests), with the native library"
JAVA_SKIP_TESTS=1 build_java
CP="java/testkit/target/classes:$(cat java/testkit/target/classpath.txt)"
out="$(mktemp)" one="$(mktemp)"

# name, JVM, its flags
runs=(
  "native FFM, JDK 25|$JDK25|--enable-native-access=ALL-UNNAMED"
  "Chicory, JDK 17|$JDK17|"
  "Chicory, JDK 25|$JDK25|-Dtoolctx.runtime=chicory"
)
for run in "${runs[@]}"; do
  IFS='|' read -r name jvm flags <<<"$run"
  step "$name ($("$jvm" -version 2>&1 | head -1))"
  # shellcheck disable=SC2086
  "$jvm" $flags -cp "$CP" dev.toolctx.testkit.VerifyBench tests/vectors/valid.json "$N" 2>&1 | grep -v '^SLF4J' >"$one"
  cat "$one"
  sed "s/^/$name|/" "$one" >>"$out"
done

step "side by side: ns per call (median of 3 x $N), and the ratio to the hand-written check on the same JVM"
awk -F'|' '
  { split($2, kv, ": "); ns = kv[2] + 0 }
  $2 ~ /Verifier.verify:/ { core[$1] = ns; order[++n] = $1 }
  $2 ~ /^hand-written/ { hand[$1] = ns }
  END {
    printf "%-20s %18s %22s %8s\n", "path", "Verifier.verify", "hand-written, same JVM", "ratio"
    for (i = 1; i <= n; i++) { k = order[i]; printf "%-20s %15d ns %19d ns %7.2fx\n", k, core[k], hand[k], core[k] / hand[k] }
  }' "$out"
rm -f "$out" "$one"

if [ "${BENCH_HTTP:-0}" = 1 ]; then
  for run in "${runs[@]}"; do
    IFS='|' read -r name jvm flags <<<"$run"
    step "over HTTP, $name: added CPU per call over the plain server"
    python3 bench/java_http.py "$CP" --java "$jvm" --flags="$flags" --calls "${BENCH_CALLS:-4000}" --warmup "${BENCH_WARMUP:-16000}"
  done
fi
