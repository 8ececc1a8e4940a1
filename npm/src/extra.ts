/**
 * The parts of the MCP SDK's `RequestHandlerExtra` (a tool handler's second
 * argument) the server helpers use, typed structurally so that toolctx needs
 * no dependency on the SDK: the SDK's own `extra` is assignable to it.
 */
export interface ToolExtra {
  /** Aborts on `notifications/cancelled` or when the transport closes. */
  signal?: AbortSignal;
  /** The JSON-RPC id of the `tools/call`. */
  requestId?: string | number;
  /** `params._meta` of the call, with the client's `progressToken`. */
  _meta?: { progressToken?: string | number; [key: string]: unknown };
  /** Sends a notification on the call's response stream. */
  sendNotification?(notification: ProgressNotification): Promise<void>;
  /** The HTTP request the call came in (headers with lower-case names). */
  requestInfo?: { headers?: Record<string, string | string[] | undefined> };
  /** Where the toolctx middleware put the verified context. */
  authInfo?: { extra?: Record<string, unknown> } | undefined;
}

/** `notifications/progress` (MCP). */
export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; total?: number; message?: string };
}

/** A tool handler as `McpServer.registerTool` takes it. */
export type ToolHandler<A, E, R> = (args: A, extra: E) => R | Promise<R>;

/** A clock and timers, injectable for tests; defaults to the global ones. */
export interface Clock {
  /** Milliseconds, monotonic enough for intervals. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms) as unknown as { unref?: () => void };
    // Never keep a Node process alive for a helper's timer.
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
