"""Progress for one call (CONTRACT §5): ``notifications/progress`` with the
call's ``progressToken``. The platform relays at most one per 0.5 s per call
and drops the rest, but always relays ``progress >= total``; this helper
sends at that rate (the latest value at the end of each interval) and sends
the final one at once. Which report goes out when is the core's rule
(``toolctx_core::helpers::progress``, through ``toolctx._native``); the
clock, the timer and the send are here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from toolctx import _native
from toolctx.helpers.errors import helper_error

_Report = tuple[float, float | None, str | None]


class Progress:
    """``await report(done, total=None, message=None)``: ``done`` must
    increase (a value not above the last is ignored); ``done >= total`` is the
    final report, sent at once, after which reports are ignored. A report
    held back by the rate limit is sent at the end of its interval: by a
    task in ``task_group`` when one is given, else by a timer on the running
    asyncio loop (under another event loop, by the next report or
    ``flush()``)."""

    def __init__(
        self,
        send: Callable[[float, float | None, str | None], Awaitable[None]] | None,
        *,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        task_group: anyio.abc.TaskGroup | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._send = send
        # The core's settings table reads the interval (None or 0: its
        # default, PROGRESS_INTERVAL_MS; out of range: ConfigError).
        self._core = _native.ProgressCoalescer(None if interval_s is None else interval_s * 1000)
        self._clock = clock
        self._tg = task_group
        self._on_error = on_error or (lambda e: None)
        self._timer: anyio.CancelScope | asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def sent(self) -> int:
        """Notifications sent so far."""
        return self._core.sent

    def _now(self) -> int:
        """The clock in whole milliseconds, as the core takes it."""
        return max(0, round(self._clock() * 1000))

    async def _emit(self, report: _Report) -> None:
        self._cancel_timer()
        if self._send is None:
            return
        try:
            await self._send(*report)
        except Exception as e:  # the call ended, the stream closed
            self._on_error(e)

    async def __call__(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self._send is None:
            return
        now = self._now()
        step = self._core.report(now, float(done), None if total is None else float(total), message)
        if step[0] == "send":
            await self._emit((step[1], step[2], step[3]))
        elif step[0] == "hold" and step[2]:
            self._arm(step[1] - now)

    def _arm(self, delay_ms: int) -> None:
        """A timer that asks the core after ``delay_ms`` whether the held
        report goes out."""
        self._cancel_timer()
        if self._tg is not None:
            self._tg.start_soon(self._later, delay_ms)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio: the next report or flush() sends it
            return
        self._timer = loop.call_later(max(0, delay_ms) / 1000, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        tick = self._core.tick(self._now())
        if tick[0] == "send":
            task = loop.create_task(self._emit((tick[1], tick[2], tick[3])))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif tick[0] == "wait":
            self._timer = loop.call_later(max(0, tick[1] - self._now()) / 1000, self._fire, loop)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _later(self, delay_ms: int) -> None:
        with anyio.CancelScope() as scope:
            self._timer = scope
            while True:
                await anyio.sleep(max(0, delay_ms) / 1000)
                tick = self._core.tick(self._now())
                if tick[0] == "wait":
                    delay_ms = tick[1] - self._now()
                    continue
                self._timer = None
                if tick[0] == "send":
                    await self._emit((tick[1], tick[2], tick[3]))
                return

    async def flush(self) -> None:
        """Sends a report held back by the rate limit now."""
        report = self._core.flush(self._now())
        if report is not None:
            await self._emit(report)

    def close(self) -> None:
        """Stops: nothing more is sent (a held-back report is dropped)."""
        self._core.close()
        self._cancel_timer()


def progress(ctx: Any, **options: Any) -> Progress:
    """The reporter of the call ``ctx`` belongs to: the ``mcp`` SDK's or
    FastMCP's ``Context`` (its ``report_progress``, which sends nothing when
    the client asked for no progress). Anything without ``report_progress``
    raises ``ToolctxError`` (``invalid_argument``) rather than dropping every
    report.

    ::

        report = progress(ctx)
        for i, sheet in enumerate(sheets):
            await read(sheet)
            await report(i + 1, len(sheets), f"sheet {i + 1}")
    """
    send = getattr(ctx, "report_progress", None)
    if not callable(send):
        raise helper_error("invalid_argument", "progress needs the tool's Context (with report_progress)")

    async def relay(done: float, total: float | None, message: str | None) -> None:
        await send(done, total, message)

    return Progress(relay, **options)
