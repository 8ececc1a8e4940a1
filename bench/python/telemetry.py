#!/usr/bin/env python3
"""What telemetry costs per `Verifier.verify` in Python (not a test).

    .tools/venv/bin/python bench/python/telemetry.py [--rounds 21] [--calls 5000]

One accepted `tools/call` (minted with the package's `Claims`), verified by
three verifiers taking turns round after round; each figure is the median
of its rounds, in microseconds per call, and each ratio the median of the
rounds' own ratios (the two sides of a round run back to back, in turn
first, so a burst of load on this shared machine hits both alike):

- off: `Verifier(..., telemetry=False)` (as without opentelemetry-api);
- API, no SDK: the default with opentelemetry-api installed and no provider;
- SDK: the real opentelemetry-sdk MeterProvider (an in-memory reader) and
  TracerProvider (spans to an exporter that drops them) registered.

The API's global providers can be set once per process, so the rounds run
twice: off against API-no-SDK, then (providers registered) off against SDK;
`off` is the baseline of each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import toolctx
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

INSTANCE = "0b6f2c4e-6a7d-4d8e-9f10-1a2b3c4d5e6f"
SECRET = "bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz"


class Dropped(SpanExporter):
    def export(self, spans):  # type: ignore[no-untyped-def]
        return SpanExportResult.SUCCESS


def per_call_us(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) * 1e6 / calls


def phase(sides: dict, rounds: int, calls: int) -> tuple[dict[str, float], float]:
    """Each side's median round, and the median over rounds of the second
    side's time over the first's."""
    samples: dict[str, list[float]] = {name: [] for name in sides}
    ratios: list[float] = []
    for fn in sides.values():
        per_call_us(fn, calls // 10)  # warm-up
    (a, fa), (b, fb) = sides.items()
    for i in range(rounds):
        if i % 2 == 0:
            ta, tb = per_call_us(fa, calls), per_call_us(fb, calls)
        else:
            tb, ta = per_call_us(fb, calls), per_call_us(fa, calls)
        samples[a].append(ta)
        samples[b].append(tb)
        ratios.append(tb / ta)
    return {name: statistics.median(xs) for name, xs in samples.items()}, statistics.median(ratios)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--calls", type=int, default=5000)
    args = ap.parse_args()
    c = toolctx.Claims(instance_id=INSTANCE, task_id="t-1", tool_call_id="c-1", workspace_id="w-1", tool="get_order")
    now = int(time.time())
    headers = [("x-agentarea-context", c.mint(SECRET))]
    body = json.dumps({"jsonrpc": "2.0", "id": 17, "method": "tools/call", "params": {"name": "get_order", "arguments": {}, "_meta": c.meta()}}).encode()
    off = toolctx.Verifier(INSTANCE, [SECRET], telemetry=False)
    on = toolctx.Verifier(INSTANCE, [SECRET])
    for v in (off, on):
        assert v.verify("POST", headers, body, now=now).outcome == "accept"
    first, first_ratio = phase({"off": lambda: off.verify("POST", headers, body, now=now), "API, no SDK": lambda: on.verify("POST", headers, body, now=now)}, args.rounds, args.calls)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(Dropped()))
    trace.set_tracer_provider(tracing)
    second, second_ratio = phase({"off": lambda: off.verify("POST", headers, body, now=now), "SDK": lambda: on.verify("POST", headers, body, now=now)}, args.rounds, args.calls)
    data = reader.get_metrics_data()
    counted = sum(p.value for rm in data.resource_metrics for sm in rm.scope_metrics if sm.scope.name == "toolctx" for m in sm.metrics if m.name == "toolctx.verdicts" for p in m.data.data_points)
    assert counted > 0, "the SDK recorded nothing"
    print(f"{args.rounds} rounds of {args.calls} calls per side, median round (ratios: median of the rounds' ratios); the SDK counted {counted} verdicts")
    print(f"off          {first['off']:7.2f} us   (phase 1)")
    print(f"API, no SDK  {first['API, no SDK']:7.2f} us   {first_ratio:.3f}x off")
    print(f"off          {second['off']:7.2f} us   (phase 2)")
    print(f"SDK          {second['SDK']:7.2f} us   {second_ratio:.3f}x off")


if __name__ == "__main__":
    main()
