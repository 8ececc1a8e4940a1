/**
 * Progress for one call (CONTRACT §5): `notifications/progress` with the
 * call's `progressToken`. The platform relays at most one per 0.5 s per call
 * and drops the rest, but always relays `progress >= total`; this helper
 * sends at that rate (the latest value at the end of each interval) and
 * always sends the final one at once.
 *
 * With the SDK's Streamable HTTP transport, progress needs the SSE response:
 * `enableJsonResponse: true` drops every notification.
 */
import { ToolctxError } from './errors.js';
import { callOf, systemClock, type Clock, type ToolExtra } from './extra.js';

export interface ProgressOptions {
  /** The least time between two sends. Default 500 ms (the platform's rate). */
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
  const interval = options.intervalMs ?? 500;
  const clock = options.clock ?? systemClock;
  const onError = options.onError ?? (() => undefined);
  let last = -Infinity; // the last value accepted
  let lastSentAt: number | undefined;
  let pending: Report | undefined;
  let timer: unknown;
  let finished = false;
  let sent = 0;

  const cancelTimer = (): void => {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
  };
  call.signal?.addEventListener('abort', () => {
    finished = true;
    pending = undefined;
    cancelTimer();
  }, { once: true });

  const send = (r: Report): Promise<void> => {
    lastSentAt = clock.now();
    pending = undefined;
    cancelTimer();
    if (token === undefined || notify === undefined) return Promise.resolve();
    sent += 1;
    const params: Report & { progressToken: string | number } = { progressToken: token, progress: r.progress };
    if (r.total !== undefined) params.total = r.total;
    if (r.message !== undefined) params.message = r.message;
    return notify({ method: 'notifications/progress', params }).catch(onError);
  };

  const report = (done: number, total?: number, message?: string): Promise<void> => {
    if (finished || !(done > last) || token === undefined) return Promise.resolve();
    last = done;
    const r: Report = { progress: done };
    if (total !== undefined) r.total = total;
    if (message !== undefined) r.message = message;
    if (total !== undefined && done >= total) {
      finished = true;
      return send(r);
    }
    const now = clock.now();
    if (lastSentAt === undefined || now - lastSentAt >= interval) return send(r);
    pending = r;
    if (timer === undefined) {
      timer = clock.setTimeout(() => {
        timer = undefined;
        if (pending !== undefined && !finished) void send(pending);
      }, lastSentAt + interval - now);
    }
    return Promise.resolve();
  };

  return Object.defineProperties(report, {
    flush: { value: () => (pending !== undefined && !finished ? send(pending) : Promise.resolve()) },
    sent: { get: () => sent },
  }) as Progress;
}
