/**
 * Progress for one call (CONTRACT §5): `notifications/progress` with the
 * call's `progressToken`. The platform relays at most one per 0.5 s per call
 * and drops the rest, but always relays `progress >= total`; this helper
 * sends at that rate (the latest value at the end of each interval) and
 * always sends the final one at once. Which report goes out when is the
 * core's rule (`toolctx_core::helpers::progress`, through the conventions
 * module); the clock, the timer and the send are here.
 *
 * With the SDK's Streamable HTTP transport, progress needs the SSE response:
 * `enableJsonResponse: true` drops every notification.
 */
import { core, settingNumber } from './core-functions.js';
import { ToolctxError } from './errors.js';
import { callOf, systemClock, type Clock, type ToolExtra } from './extra.js';

export interface ProgressOptions {
  /**
   * The least time between two sends, in ms, read by the core's settings
   * table (`progress_interval_ms`): unset or 0 is its default, the
   * platform's rate; outside 1 to 60,000 throws `limit_out_of_range`.
   */
  intervalMs?: number;
  /** Injectable clock and timers, for tests. */
  clock?: Clock;
  /** Told when a send fails (the call ended, the stream closed). Default: ignored. */
  onError?: (error: unknown) => void;
}

/**
 * Reports progress: `done` must increase (a value not above the last one is
 * ignored, as MCP requires progress to increase); `done >= total` is the
 * final report, sent at once, after which further reports are ignored. The
 * promise settles when this report's notification (if it was sent now) is
 * written; it never rejects.
 */
export interface Progress {
  (done: number, total?: number, message?: string): Promise<void>;
  /** Sends a report held back by the rate limit now (say, before a long step). */
  flush(): Promise<void>;
  /** Notifications sent so far. */
  readonly sent: number;
}

interface Report {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * The progress reporter of the call `extra` (SDK v1) or `ctx` (SDK v2)
 * belongs to. Without a `progressToken` (the client asked for none) every
 * report is a no-op. Anything that is not a tool handler's second argument,
 * or a call with a `progressToken` but no way to send a notification, throws
 * a `ToolctxError` (`invalid_argument`) here, rather than dropping every
 * report.
 *
 * ```ts
 * const report = progress(ctx); // or progress(extra) with SDK v1
 * for (const [i, sheet] of sheets.entries()) { await read(sheet); void report(i + 1, sheets.length, `sheet ${i + 1}`); }
 * ```
 */
export function progress(extra: ToolExtra, options: ProgressOptions = {}): Progress {
  const call = callOf(extra, 'progress');
  const token = call.meta?.progressToken;
  const notify = call.notify;
  if (token !== undefined && notify === undefined) {
    throw new ToolctxError('invalid_argument', 'progress: the call has a progressToken but its extra/ctx has no sendNotification/mcpReq.notify');
  }
  const coalescer = new (core().ProgressCoalescer)(settingNumber('progress_interval_ms', options.intervalMs));
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? (() => undefined);
  let timer: unknown;

  const cancelTimer = (): void => {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
  };
  call.signal?.addEventListener('abort', () => {
    coalescer.close();
    cancelTimer();
  }, { once: true });

  // `s` + the report to send as JSON; anything else sends nothing.
  const send = (answer: string): Promise<void> => {
    if (!answer.startsWith('s')) return Promise.resolve();
    cancelTimer();
    if (token === undefined || notify === undefined) return Promise.resolve();
    const r = JSON.parse(answer.slice(1)) as Report;
    const params: Report & { progressToken: string | number } = { progressToken: token, ...r };
    return notify({ method: 'notifications/progress', params }).catch(onError);
  };

  // A timer asks the core at the flush time; too early, it waits again.
  const arm = (at: number): void => {
    cancelTimer();
    timer = clock.setTimeout(() => {
      timer = undefined;
      const answer = coalescer.tick(clock.now());
      if (answer.startsWith('w')) arm(Number(answer.slice(1)));
      else void send(answer);
    }, Math.max(0, at - clock.now()));
  };

  const report = (done: number, total?: number, message?: string): Promise<void> => {
    if (token === undefined) return Promise.resolve();
    const answer = coalescer.report(clock.now(), done, total, message);
    if (answer.startsWith('a')) arm(Number(answer.slice(1)));
    return send(answer);
  };

  return Object.defineProperties(report, {
    flush: { value: () => send(coalescer.flush(clock.now())) },
    sent: { get: () => coalescer.sent },
  }) as Progress;
}
