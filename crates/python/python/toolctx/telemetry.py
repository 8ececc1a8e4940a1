"""What every entry point records about a verdict: one ``on_verdict``
event, one WARNING line on the logger ``toolctx`` per refusal (its fields
in ``extra``; never a token, secret or credential), and, with the extra
``toolctx[otel]`` (``opentelemetry-api``) and a provider registered, the
counter ``toolctx.verdicts``, the histogram ``toolctx.check.duration`` (in
seconds) and the span ``toolctx.verify``. The names are the core's
(``toolctx._native.TELEMETRY``, crates/core/src/telemetry.rs). The
request's JSON-RPC method and tool come from the core too
(``toolctx._native.describe_request``), asked only when the span, the log
line or the hook will use them.

The meter and tracer are the API's proxies: a provider registered after
the import, or after a verifier was created, gets every verdict from then on.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolctx._native import CORE_VERSION, TELEMETRY, describe_request

log = logging.getLogger("toolctx")

NAMES: dict[str, Any] = dict(TELEMETRY)

try:  # the optional extra toolctx[otel]
    from opentelemetry import context as _otel_context
    from opentelemetry import metrics as _otel_metrics
    from opentelemetry import trace as _otel_trace
except ImportError:  # not installed: nothing is recorded, nothing costs more
    _otel_context = _otel_metrics = _otel_trace = None  # type: ignore[assignment]

try:  # what the API answers until a provider is registered
    from opentelemetry.metrics._internal import _ProxyMeterProvider as _NO_METER_PROVIDER
except ImportError:  # another layout: always take the instruments' own no-op path
    _NO_METER_PROVIDER = None  # type: ignore[assignment,misc]

# The API's get_*_provider() look in os.environ on every call until a
# provider is set (about 1.7 us for the two, a third of a verify): read the
# globals they read instead, where this API version has them and no
# OTEL_PYTHON_*_PROVIDER variable asks it to load one on first use.
try:
    from opentelemetry.metrics import _internal as _otel_metrics_state
except ImportError:
    _otel_metrics_state = None  # type: ignore[assignment]
_FAST_PROVIDER_CHECK = (
    _otel_trace is not None
    and _otel_metrics_state is not None
    and hasattr(_otel_metrics_state, "_METER_PROVIDER")
    and hasattr(_otel_trace, "_TRACER_PROVIDER")
    and not ({"OTEL_PYTHON_METER_PROVIDER", "OTEL_PYTHON_TRACER_PROVIDER"} & os.environ.keys())
)


def _providers() -> bool:
    """True once a meter or tracer provider is registered (checked per verdict:
    one registered later gets every verdict from then on). Where
    ``_FAST_PROVIDER_CHECK`` holds, ``Recorder.start`` reads the globals
    itself (a call costs about 60 ns, 2% of a verify) and this is not called."""
    assert _otel_metrics is not None and _otel_trace is not None
    if _NO_METER_PROVIDER is None:
        return True
    return not (
        type(_otel_metrics.get_meter_provider()) is _NO_METER_PROVIDER
        and type(_otel_trace.get_tracer_provider()) is _otel_trace.ProxyTracerProvider
    )


@dataclass(frozen=True)
class VerdictEvent:
    """One request's verdict, as the entry point that checked it saw it."""

    outcome: str
    """``"accept"``, ``"pass"`` or ``"reject"``."""
    duration_s: float
    """From the start of the check to the verdict, reading the body included."""
    entry: str
    """``"middleware"`` (the ASGI middleware) or ``"verify"`` (the verifier called directly)."""
    reason: str | None = None
    """The core's reason, on refusals only."""
    status: int | None = None
    """The HTTP status of a refusal."""
    request_id: Any = None
    """The request's JSON-RPC id, where the verdict carries it."""
    tool: str | None = None
    """The tool called (``params.name`` of a ``tools/call``), where the core read the body."""
    task_id: str | None = None
    workspace_id: str | None = None
    peer: str | None = None
    """The client's address, where the entry point knows it (ASGI's ``client``)."""
    method: str | None = None
    """The request's JSON-RPC method, where the core read the body (a POST
    not refused on its credential or its size) and it names one."""


OnVerdict = Callable[[VerdictEvent], None]


class _Instruments:
    """The counter, histogram and tracer, made once from the API's proxies."""

    def __init__(self) -> None:
        assert _otel_metrics is not None and _otel_trace is not None
        meter = _otel_metrics.get_meter(NAMES["scope"], CORE_VERSION)
        self.counter = meter.create_counter(NAMES["verdicts"], description="Requests answered or handed on, by verdict.")
        self.histogram = meter.create_histogram(
            NAMES["check_duration"],
            unit=NAMES["check_duration_unit"],
            description="From the start of a check to its verdict, reading the body included.",
            explicit_bucket_boundaries_advisory=list(NAMES["duration_buckets_s"]),
        )
        self.tracer = _otel_trace.get_tracer(NAMES["scope"], CORE_VERSION)


_instruments: _Instruments | None = None


def _otel() -> _Instruments:
    global _instruments
    if _instruments is None:
        _instruments = _Instruments()
    return _instruments


#: A check under way: ``(perf_counter_ns, time_ns, parent context)``;
#: ``time_ns`` 0 when no provider was registered at its start. ``None``
#: when nothing but a refusal's log line can come of it (no hook, no
#: provider): the clocks are not read.
Started = tuple[int, int, Any] | None


class Recorder:
    """What one entry point records, from its ``on_verdict`` and ``telemetry`` settings."""

    def __init__(self, on_verdict: OnVerdict | None, telemetry: bool, entry: str) -> None:
        if on_verdict is not None and not callable(on_verdict):
            raise TypeError("on_verdict must be callable")
        if not isinstance(telemetry, bool):
            raise TypeError("telemetry must be a bool")
        self.on_verdict = on_verdict
        self.telemetry = telemetry
        self.otel = telemetry and _otel_metrics is not None
        self.entry = entry

    def start(self) -> Started:
        if self.otel and (
            (_otel_metrics_state._METER_PROVIDER is not None or _otel_trace._TRACER_PROVIDER is not None)
            if _FAST_PROVIDER_CHECK
            else _providers()
        ):
            # The span's parent: the span current where the check began.
            return (time.perf_counter_ns(), time.time_ns(), _otel_context.get_current())
        if self.on_verdict is not None:
            return (time.perf_counter_ns(), 0, None)
        return None

    def record(self, started: Started, verdict: Any, peer: str | None = None, method: str | None = None, body: Any = None) -> None:
        """Records ``verdict`` (``Pass``, ``Accept``, ``Reject``) on the
        request whose HTTP ``method`` and ``body`` the core was handed (none
        for a verdict on the headers alone); never raises."""
        if started is None and verdict.outcome != "reject":  # the common case: nothing to do
            return
        took_ns = 0 if started is None else time.perf_counter_ns() - started[0]
        try:
            outcome = verdict.outcome
            reason = verdict.reason if outcome == "reject" else None
            logged = reason is not None and log.isEnabledFor(logging.WARNING)
            traced = started is not None and started[1] != 0
            if not (logged or traced or self.on_verdict is not None):
                return
            seen = _Seen(verdict, reason, method, body)
            if logged:
                _log_refusal(verdict, peer, seen.tool())
            if traced and started is not None:
                _record_otel(outcome, reason, verdict, started, took_ns, seen)
            if self.on_verdict is not None:
                self.on_verdict(_event(verdict, took_ns / 1e9, self.entry, peer, seen))
        except Exception:  # a misbehaving SDK or hook never changes a verdict
            log.debug("toolctx: recording a verdict failed", exc_info=True)


class _Seen:
    """The request's JSON-RPC method and tool, asked of the core once, when first wanted."""

    __slots__ = ("_verdict", "_reason", "_method", "_body", "_names")

    def __init__(self, verdict: Any, reason: str | None, method: str | None, body: Any) -> None:
        self._verdict, self._reason, self._method, self._body = verdict, reason, method, body
        self._names: tuple[str | None, str | None] | None = None

    def names(self) -> tuple[str | None, str | None]:
        """``(method, tool)``, each ``None`` where the core did not read it."""
        if self._names is None:
            tool = getattr(self._verdict.context, "tool", None) if self._verdict.outcome == "accept" else None
            if tool is not None:  # the tool the token names is params.name: no second read
                self._names = ("tools/call", tool)
            elif self._method is None or self._body is None:
                self._names = (None, None)
            else:
                self._names = describe_request(self._method, self._body, self._reason)
        return self._names

    def tool(self) -> str | None:
        return self.names()[1]


def _log_refusal(reject: Any, peer: str | None, tool: str | None) -> None:
    log.warning(
        "toolctx: refused %s status=%s request_id=%s tool=%s peer=%s",
        reject.reason,
        reject.status,
        reject.id_json,
        # As JSON, like the id: a tool name is the caller's text, and a line break in it must not start a log line.
        json.dumps(tool, ensure_ascii=False),
        peer or "-",
        extra={"reason": reject.reason, "status": reject.status, "request_id": reject.id, "tool": tool, "peer": peer},
    )


def _event(verdict: Any, seconds: float, entry: str, peer: str | None, seen: _Seen) -> VerdictEvent:
    outcome = verdict.outcome
    method, tool = seen.names()
    if outcome == "reject":
        return VerdictEvent(
            outcome, seconds, entry, reason=verdict.reason, status=verdict.status, request_id=verdict.id, tool=tool, peer=peer, method=method
        )
    if outcome == "accept":
        ctx = verdict.context
        return VerdictEvent(
            outcome,
            seconds,
            entry,
            request_id=ctx.request_id,
            tool=tool,
            task_id=getattr(ctx, "task_id", None),
            workspace_id=getattr(ctx, "workspace_id", None),
            peer=peer,
            method=method,
        )
    return VerdictEvent(outcome, seconds, entry, tool=tool, peer=peer, method=method)


def _record_otel(outcome: str, reason: str | None, verdict: Any, started: tuple[int, int, Any], took_ns: int, seen: _Seen) -> None:
    n = NAMES
    # toolctx.reason on refusals only: absent, never empty, otherwise.
    attributes = {n["outcome"]: outcome} if reason is None else {n["outcome"]: outcome, n["reason"]: reason}
    o = _otel()
    o.counter.add(1, attributes)
    o.histogram.record(took_ns / 1e9, {n["outcome"]: outcome})
    span = o.tracer.start_span(n["span"], context=started[2], start_time=started[1], attributes=attributes)
    if not span.is_recording():  # no provider: nothing more to gather
        return
    method, tool = seen.names()
    if method is not None:
        span.set_attribute(n["mcp_method"], method)
    if tool is not None:
        span.set_attribute(n["tool"], tool)
    if outcome == "accept":
        ctx = verdict.context
        for key in ("task_id", "workspace_id"):
            value = getattr(ctx, key, None)
            if value is not None:
                span.set_attribute(n[key], value)
    elif reason is not None and _otel_trace is not None:
        span.set_status(_otel_trace.Status(_otel_trace.StatusCode.ERROR, reason))
    span.end(end_time=started[1] + took_ns)
