/**
 * Cancellation and timeouts (CONTRACT §5): the platform waits
 * `tool_timeout_seconds` (300 s by default) and then sends
 * `notifications/cancelled`.
 *
 * The SDK aborts `extra.signal` when the call's transport closes, and on a
 * `notifications/cancelled` that reaches the same server instance. A
 * stateless Streamable HTTP server builds a new server and transport per
 * request, so:
 * - it must close them on `res.on('close')`, or `extra.signal` never fires
 *   when the client disconnects;
 * - the `notifications/cancelled` arrives in another POST, at another server
 *   instance, and the SDK ignores it. `noticeCancelled(req.body, req.headers)`
 *   in the request handler hands it to the calls that `cancellable` tracks.
 *
 * A cancellation is matched to its call by the JSON-RPC id and the exact
 * `X-AgentArea-Context` token the call was verified with, so only a holder
 * of that token can cancel the call: the key and the header are the core's
 * (`toolctx_core::helpers::cancel`).
 */
import { core } from './core-functions.js';
import { callOf, headerValue, withSignal, type ToolExtra, type ToolHandler } from './extra.js';

/** The calls in flight that a `notifications/cancelled` can reach. */
export interface CancelRegistry {
  /** Calls tracked now. */
  readonly size: number;
  /** @internal */
  readonly calls: Map<string, AbortController>;
}

export function createCancelRegistry(): CancelRegistry {
  const calls = new Map<string, AbortController>();
  return {
    calls,
    get size() {
      return calls.size;
    },
  };
}

/** The registry `cancellable` and `noticeCancelled` use unless given another. */
export const defaultCancelRegistry: CancelRegistry = createCancelRegistry();

export interface CancellableOptions {
  /** Default `defaultCancelRegistry`. */
  registry?: CancelRegistry;
  /** Also abort after this long (reason: a `TimeoutError` DOMException). Default: no timeout. */
  timeoutMs?: number;
}

/**
 * Wraps a tool handler so that the signal it sees (`extra.signal` in SDK v1,
 * `ctx.mcpReq.signal` in SDK v2) aborts on any of:
 * the SDK's own signal (transport closed, cancellation at this instance), a
 * `notifications/cancelled` handed to `noticeCancelled` from any request to
 * this process, or `timeoutMs`. Abort reasons are kept (`signal.reason`).
 */
export function cancellable<A, E extends ToolExtra, R>(
  handler: ToolHandler<A, E, R>,
  options: CancellableOptions = {},
): (args: A, extra: E) => Promise<R> {
  const registry = options.registry ?? defaultCancelRegistry;
  return async function cancellableTool(args: A, extra: E): Promise<R> {
    const call = callOf(extra, 'cancellable');
    const own = new AbortController();
    const signals = [own.signal];
    if (call.signal) signals.push(call.signal);
    if (options.timeoutMs !== undefined) signals.push(AbortSignal.timeout(options.timeoutMs));
    const key = callKey(call.requestId, call.header(core().cancelHeader()));
    if (key !== undefined) registry.calls.set(key, own);
    try {
      return await handler(args, withSignal(extra, AbortSignal.any(signals)));
    } finally {
      if (key !== undefined && registry.calls.get(key) === own) registry.calls.delete(key);
    }
  };
}

/**
 * When `body` is a `notifications/cancelled` (alone or in a batch), aborts
 * the tracked call it names, sent with the same token header; returns
 * whether it aborted one. Call it with every request body before the SDK
 * handles it (Node: `req.body` after the toolctx middleware); anything else
 * is ignored.
 */
export function noticeCancelled(
  body: unknown,
  headers: Headers | Record<string, string | string[] | undefined> | undefined,
  registry: CancelRegistry = defaultCancelRegistry,
): boolean {
  if (registry.calls.size === 0) return false;
  const token = headerValue(headers, core().cancelHeader());
  let found = false;
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; params?: { requestId?: unknown; reason?: unknown } } | null;
    if (m === null || typeof m !== 'object' || m.method !== 'notifications/cancelled') continue;
    const id = m.params?.requestId;
    const key = callKey(id, token);
    const call = key === undefined ? undefined : registry.calls.get(key);
    if (call === undefined || key === undefined) continue;
    registry.calls.delete(key);
    const reason = m.params?.reason;
    call.abort(new CancelledError(typeof reason === 'string' ? reason : 'cancelled by the client'));
    found = true;
  }
  return found;
}

/** The abort reason of a call cancelled with `notifications/cancelled`. */
export class CancelledError extends Error {
  override readonly name = 'CancelledError';
}

/** The core's key for the call `id` sent with `token`; undefined when it cannot be cancelled. */
function callKey(id: unknown, token: string | undefined): string | undefined {
  let json: string | undefined;
  try {
    json = JSON.stringify(id);
  } catch {
    // A BigInt or a cycle: no JSON id, so no key.
    return undefined;
  }
  return core().cancelKey(json ?? '', token);
}
