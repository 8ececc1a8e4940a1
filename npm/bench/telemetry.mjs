#!/usr/bin/env node
// What telemetry costs per verification (`verify` on the fixture's accepted
// call), side by side in one process:
//   off          `telemetry: false` (the path taken when @opentelemetry/api
//                is not installed: nothing is looked up or timed);
//   API, no SDK  the default with @opentelemetry/api installed and no
//                provider registered (the goal: within noise of `off`);
//   SDK          the real @opentelemetry/sdk-metrics MeterProvider and a
//                sdk-trace-base BasicTracerProvider registered, recording
//                every counter, histogram and span (spans to an exporter
//                that drops them, so memory stays flat).
// Candidates take turns in short slices, round after round; the median
// round counts. Providers are registered and unregistered (the API's
// `disable`) around each SDK slice.
//
//   node npm/bench/telemetry.mjs        (BENCH_ROUNDS=9 BENCH_SLICE_MS=250)
import { metrics, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createVerifier } from 'toolctx';

import { INSTANCE, SECRET, callBody, mintToken } from './fixture.mjs';

const now = Math.floor(Date.now() / 1000);
const request = { method: 'POST', headers: [['x-agentarea-context', mintToken(now)]], body: callBody() };
const off = createVerifier({ instanceId: INSTANCE, secrets: [SECRET], telemetry: false });
const on = createVerifier({ instanceId: INSTANCE, secrets: [SECRET] });

class Reader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const dropped = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropped)] });

function withSdk(fn) {
  return () => {
    metrics.setGlobalMeterProvider(meterProvider);
    trace.setGlobalTracerProvider(tracerProvider);
    try {
      return fn();
    } finally {
      metrics.disable();
      trace.disable();
    }
  };
}

const candidates = [
  ['off (telemetry: false)', () => off.verify(request, { now })],
  ['API installed, no SDK', () => on.verify(request, { now })],
  ['SDK recording', () => on.verify(request, { now }), true],
];

for (const [name, fn] of candidates) {
  if (fn().outcome !== 'accept') throw new Error(`${name} did not accept`);
}

/** Runs `fn` in batches of 100 for `ms` milliseconds; returns ops/s. */
function slice(fn, ms) {
  let ops = 0;
  const start = performance.now();
  const end = start + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) fn();
    ops += 100;
  }
  return (ops * 1000) / (performance.now() - start);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 250);
const run = ([, fn, sdk], ms) => (sdk ? withSdk(() => slice(fn, ms))() : slice(fn, ms));
for (const c of candidates) run(c, 300); // warm-up
const samples = candidates.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < candidates.length; i++) samples[i].push(run(candidates[i], SLICE_MS));
}
// The SDK really recorded: the counter holds every verdict of its slices.
withSdk(() => undefined)();
metrics.setGlobalMeterProvider(meterProvider);
const { resourceMetrics } = await reader.collect();
metrics.disable();
const counted = resourceMetrics.scopeMetrics
  .filter((s) => s.scope.name === 'toolctx')
  .flatMap((s) => s.metrics)
  .find((m) => m.descriptor.name === 'toolctx.verdicts')
  ?.dataPoints.reduce((a, p) => a + p.value, 0);
if (!(counted > 0)) throw new Error('the SDK recorded nothing');

console.log(`Node ${process.version}; ${ROUNDS} rounds of ${SLICE_MS} ms per candidate, median round; the SDK counted ${counted} verdicts`);
console.log('');
console.log('candidate                    ops/s     us/op   vs off');
const base = median(samples[0]);
for (const [i, [name]] of candidates.entries()) {
  const ops = median(samples[i]);
  console.log(`${name.padEnd(26)} ${Math.round(ops).toString().padStart(8)} ${(1e6 / ops).toFixed(2).padStart(9)}   ${(base / ops).toFixed(3)}x`);
}
