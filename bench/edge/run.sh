#!/usr/bin/env bash
# The edge benchmark (bench/edge/bench.mjs): toolctx vs jose inside workerd,
# a hand-written WebCrypto floor, and the bundle sizes. About 10 s. Not part of
# scripts/test-edge.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
[ -f npm/dist/web/index.js ] || { echo "npm/dist is missing: run scripts/test-npm (or cd npm && npm ci && npm run build) first" >&2; exit 1; }
[ -d tests/edge/node_modules/workerd ] || (cd tests/edge && npm ci --no-audit --no-fund --loglevel=error)
exec node bench/edge/bench.mjs
