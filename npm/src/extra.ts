/**
 * A tool handler's second argument, from either MCP TypeScript SDK line,
 * typed structurally so that toolctx depends on neither: SDK v1's
 * `RequestHandlerExtra` (`@modelcontextprotocol/sdk` 1.x) and SDK v2's
 * `ServerContext` (`@modelcontextprotocol/server` 2.x) are both assignable.
 * `callOf` reads either into the one shape the helpers use.
 */
import { ToolctxError } from './errors.js';

/** `params._meta` of the call, with the client's `progressToken`. */
export interface CallMeta {
  progressToken?: string | number;
  [key: string]: unknown;
}

/** Where an auth layer (the toolctx middleware, `authInfoFrom`) puts what it verified. */
export interface AuthInfoLike {
  extra?: Record<string, unknown>;
}

/** SDK v1 (`@modelcontextprotocol/sdk` 1.x): `(args, extra) => ...`. */
export interface SdkV1Extra {
  /** Aborts on `notifications/cancelled` or when the transport closes. */
  signal?: AbortSignal;
  /** The JSON-RPC id of the `tools/call`. */
  requestId?: string | number;
  _meta?: CallMeta;
  /** Sends a notification on the call's response stream. */
  sendNotification?(notification: ProgressNotification): Promise<void>;
  /** The HTTP request the call came in (headers with lower-case names). */
  requestInfo?: { headers?: Record<string, string | string[] | undefined> };
  /** Where the toolctx middleware put the verified context (`req.auth`). */
  authInfo?: AuthInfoLike | undefined;
}

/** SDK v2 (`@modelcontextprotocol/server` 2.x): `(args, ctx) => ...`. */
export interface SdkV2Context {
  sessionId?: string;
  mcpReq: {
    /** The JSON-RPC id of the `tools/call`. */
    id?: string | number;
    /** `_meta` with the reserved `io.modelcontextprotocol/*` keys lifted out; `agentarea/*` and `progressToken` stay. */
    _meta?: CallMeta;
    /** The reserved keys lifted out of `_meta` (protocol 2026-07-28's per-request envelope). */
    envelope?: Record<string, unknown>;
    /** Aborts on cancellation or when the exchange ends. */
    signal?: AbortSignal;
    /** Sends a notification related to this call. */
    notify?(notification: ProgressNotification): Promise<void>;
  };
  http?:
    | {
        /** `req.auth` through `toNodeHandler`, or `handler.fetch(request, { authInfo })`. */
        authInfo?: AuthInfoLike | undefined;
        /** The web `Request` the call came in. */
        req?: { readonly headers: Headers } | undefined;
      }
    | undefined;
}

/**
 * A tool handler's second argument: SDK v1's `extra` or SDK v2's `ctx`, as
 * one shape with both lines' members optional, so that a handler whose
 * `extra` the compiler cannot infer still reads `extra.signal` (v1) or
 * `extra.mcpReq` (v2).
 */
export interface ToolExtra extends SdkV1Extra {
  sessionId?: string;
  mcpReq?: SdkV2Context['mcpReq'];
  http?: SdkV2Context['http'];
}

/** `notifications/progress` (MCP). */
export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; total?: number; message?: string };
}

/** A tool handler as `McpServer.registerTool` takes it, in either SDK line. */
export type ToolHandler<A, E, R> = (args: A, extra: E) => R | Promise<R>;

/** What the helpers read of one call, whichever SDK line it came from. */
export interface Call {
  signal: AbortSignal | undefined;
  requestId: string | number | undefined;
  meta: CallMeta | undefined;
  notify: ((notification: ProgressNotification) => Promise<void>) | undefined;
  authInfo: AuthInfoLike | undefined;
  /** One request header by lower-case name; `undefined` when absent or sent more than once. */
  header(name: string): string | undefined;
  /**
   * The call's protocol revision as the SDK read it: SDK v2's per-request
   * envelope (2026-07-28), else the `MCP-Protocol-Version` header, else
   * `''` (none known; the core decides what that means).
   */
  revision: string;
}

/** The per-request envelope's protocol revision key (protocol 2026-07-28). */
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

const V1_KEYS = ['signal', 'requestId', 'sendNotification', 'requestInfo', 'authInfo', '_meta'];

/** Whether `value` is SDK v2's `ctx`. */
export function isV2Context(value: unknown): value is SdkV2Context {
  return typeof value === 'object' && value !== null && typeof (value as { mcpReq?: unknown }).mcpReq === 'object' && (value as { mcpReq?: unknown }).mcpReq !== null;
}

/** Whether `value` looks like SDK v1's `extra`: an object with at least one of its members. */
export function isV1Extra(value: unknown): value is SdkV1Extra {
  return typeof value === 'object' && value !== null && V1_KEYS.some((k) => k in value);
}

/**
 * Reads a tool handler's second argument. Anything else (the arguments by
 * mistake, `undefined` from a handler declared with one parameter) is a
 * `ToolctxError` (`invalid_argument`) naming `helper`: a helper that cannot
 * see the call never guesses.
 */
export function callOf(extra: unknown, helper: string): Call {
  if (isV2Context(extra)) {
    const { mcpReq, http } = extra;
    const revision = mcpReq.envelope?.[PROTOCOL_VERSION_KEY];
    return call(mcpReq, mcpReq.notify, mcpReq.signal, mcpReq.id, mcpReq._meta, http?.authInfo, http?.req?.headers, typeof revision === 'string' ? revision : undefined);
  }
  if (isV1Extra(extra)) {
    return call(extra, extra.sendNotification, extra.signal, extra.requestId, extra._meta, extra.authInfo, extra.requestInfo?.headers);
  }
  throw new ToolctxError(
    'invalid_argument',
    `${helper}: expected the tool handler's second argument (SDK v1 \`extra\` or SDK v2 \`ctx\`), got ${describe(extra)}`,
  );
}

function call(
  owner: object,
  send: unknown,
  signal: AbortSignal | undefined,
  requestId: string | number | undefined,
  meta: CallMeta | undefined,
  authInfo: AuthInfoLike | undefined,
  headers: Headers | Record<string, string | string[] | undefined> | undefined,
  revision?: string,
): Call {
  const notify =
    typeof send === 'function' ? (n: ProgressNotification) => (send as (n: ProgressNotification) => Promise<void>).call(owner, n) : undefined;
  const header = (name: string): string | undefined => headerValue(headers, name);
  return { signal, requestId, meta, notify, authInfo, header, revision: revision ?? header('mcp-protocol-version') ?? '' };
}

/** `extra` with its abort signal replaced, in the shape it came in. */
export function withSignal<E>(extra: E, signal: AbortSignal): E {
  if (isV2Context(extra)) return { ...extra, mcpReq: { ...extra.mcpReq, signal } };
  return { ...extra, signal };
}

/**
 * One header by lower-case name from a web `Headers` or a Node headers
 * record; `undefined` when absent or repeated (a Node array, or the ", "
 * a web `Headers` joins repeats with: a token is never matched on those).
 */
export function headerValue(headers: Headers | Record<string, string | string[] | undefined> | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  if (typeof (headers as Headers).get === 'function') {
    const v = (headers as Headers).get(name);
    return v === null || v.includes(',') ? undefined : v;
  }
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return typeof v === 'string' ? v : undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  const keys = Object.keys(value).slice(0, 4);
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.map((k) => `\`${k}\``).join(', ')}`;
}

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
