"""Progress for one call (CONTRACT §5): ``notifications/progress`` with the
call's ``progressToken``. The platform relays at most one per 0.5 s per call
and drops the rest, but always relays ``progress >= total``; this helper
sends at that rate (the latest value at the end of each interval) and sends
the final one at once. The rules are the npm package's
(``npm/src/progress.ts``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from toolctx.helpers.errors import helper_error


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
        interval_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        task_group: anyio.abc.TaskGroup | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._send = send
        self._interval = interval_s
        self._clock = clock
        self._tg = task_group
        self._on_error = on_error or (lambda e: None)
        self._last = float("-inf")
        self._last_sent_at: float | None = None
        self._pending: tuple[float, float | None, str | None] | None = None
        self._timer: anyio.CancelScope | asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._finished = False
        self.sent = 0

    async def _emit(self, report: tuple[float, float | None, str | None]) -> None:
        self._last_sent_at = self._clock()
        self._pending = None
        self._cancel_timer()
        if self._send is None:
            return
        self.sent += 1
        try:
            await self._send(*report)
        except Exception as e:  # the call ended, the stream closed
            self._on_error(e)

    async def __call__(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self._finished or not done > self._last or self._send is None:
            return
        self._last = done
        report = (done, total, message)
        if total is not None and done >= total:
            self._finished = True
            await self._emit(report)
            return
        now = self._clock()
        if self._last_sent_at is None or now - self._last_sent_at >= self._interval:
            await self._emit(report)
            return
        self._pending = report
        if self._timer is None:
            delay = self._last_sent_at + self._interval - now
            if self._tg is not None:
                self._tg.start_soon(self._later, delay)
            else:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:  # not asyncio: the next report or flush() sends it
                    return
                self._timer = loop.call_later(delay, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        if self._pending is not None and not self._finished:
            task = loop.create_task(self._emit(self._pending))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _later(self, delay: float) -> None:
        with anyio.CancelScope() as scope:
            self._timer = scope
            await anyio.sleep(delay)
            self._timer = None
            if self._pending is not None and not self._finished:
                await self._emit(self._pending)

    async def flush(self) -> None:
        """Sends a report held back by the rate limit now."""
        if self._pending is not None and not self._finished:
            await self._emit(self._pending)

    def close(self) -> None:
        """Stops: nothing more is sent (a held-back report is dropped)."""
        self._finished = True
        self._pending = None
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
