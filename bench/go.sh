#!/usr/bin/env bash
# The Go front end's cost (not a test): CPU per call of one go-sdk server
# (stateless, JSON answers, a get_order tool) plain, behind toolctx's
# middleware (gosdk.Middleware), and behind the middleware a Go developer
# would write by hand (golang-jwt v5 HS256 with issuer, audience, exp
# leeway, encoding/json and the _meta binding: go/internal/bench). In
# process (httptest), one goroutine; the median of 3 runs of each; the
# added CPU of each middleware over the plain server, their ratio, and the
# allocations per call. `bench/go.sh profile` also writes a CPU profile of
# toolctx's middleware alone (a no-op handler behind it) and prints where
# its time goes.
#
#   bench/go.sh [profile]     BENCH_CALLS (default 5000) calls per run
. "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
go_env
build_go_wasm
mkdir -p target/bench-go
out=target/bench-go/bench.txt
# Three runs of all five, one after the other (not each three times in a
# row), so that the machine's load falls on all of them alike.
: >"$out"
for _ in 1 2 3; do
  (cd go && go test -run '^$' -bench . -benchmem -count 1 -benchtime "${BENCH_CALLS:-5000}x" ./internal/bench) | tee -a "$out"
done
python3 - "$out" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\w+)-\d+\s+\d+\s+([\d.]+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op", line)
    if m:
        runs.setdefault(m.group(1), []).append((float(m.group(2)), int(m.group(4))))
med = {k: (statistics.median(x for x, _ in v), statistics.median(a for _, a in v)) for k, v in runs.items()}
plain = med["Plain"]
print("\nmedian of 3, per call     ns       added ns   allocs   added allocs")
for k in ("Plain", "Toolctx", "Handwritten", "ToolctxAlone", "HandwrittenAlone"):
    ns, allocs = med[k]
    alone = k.endswith("Alone")
    print("%-22s %9.0f %12s %8d %13s" % (k, ns, "" if alone else "%.0f" % (ns - plain[0]), allocs,
                                         "" if alone else allocs - plain[1]))
added_t, added_h = med["Toolctx"][0] - plain[0], med["Handwritten"][0] - plain[0]
if added_t > 0 and added_h > 0:
    print("toolctx's added CPU / the hand-written one's: %.2fx (goal: at most 1.0x)" % (added_t / added_h))
else:
    print("added CPU over the server not measurable in this run (the load's noise is larger than a middleware)")
print("the middlewares alone (a no-op handler behind): toolctx / hand-written %.2fx"
      % (med["ToolctxAlone"][0] / med["HandwrittenAlone"][0]))
PY
if [ "${1:-}" = profile ]; then
  (cd go && go test -run '^$' -bench ToolctxAlone -benchtime "${BENCH_CALLS:-5000}x" -cpuprofile "$ROOT/target/bench-go/toolctx.pprof" \
    -o "$ROOT/target/bench-go/bench.test" ./internal/bench >/dev/null)
  go tool pprof -top -cum -nodecount 40 target/bench-go/bench.test target/bench-go/toolctx.pprof 2>/dev/null | grep -v "^ *0 *0%" | sed -n 1,48p
fi
