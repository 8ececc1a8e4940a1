import { callOf, type AuthInfoLike, type ToolExtra } from './extra.js';
import type { AivaxContext, ToolContext, ToolctxAuthInfo } from './types.js';

/** The contexts of a Request by key (`toolctx`, `aivax`). */
const byRequest = new WeakMap<object, Record<string, unknown>>();

/** @internal the fetch wrapper records the context of the Request it hands on. */
export function rememberContext(request: object, context: unknown, key = 'toolctx'): void {
  byRequest.set(request, { ...byRequest.get(request), [key]: context });
}

/** The SDK's `AuthInfo` with the context at `extra[key]`, keeping what an earlier auth layer set. */
export function authInfoWith(previous: ToolctxAuthInfo | undefined, context: unknown, key = 'toolctx'): ToolctxAuthInfo {
  if (previous) return { ...previous, extra: { ...previous.extra, [key]: context } };
  return { token: '', clientId: 'toolctx', scopes: [], extra: { [key]: context } };
}

/** Anything that can carry the verified context. */
export type ContextSource =
  /**
   * A tool handler's second argument: SDK v1's `extra` (the SDK puts
   * `req.auth` there as `authInfo`) or SDK v2's `ctx` (`ctx.http.authInfo`).
   */
  | ToolExtra
  /** A Node request after the middleware. */
  | { auth?: AuthInfoLike | undefined; method?: string; headers?: unknown; rawHeaders?: unknown }
  /** The Request the fetch wrapper handed to its inner handler. */
  | Request;

/**
 * The verified context, or `undefined` when the call carried none (a call
 * that `requireContext: false` let pass, or a request toolctx never saw).
 * `source` is a tool handler's second argument (SDK v1 `extra`, SDK v2
 * `ctx`), a Node request after the middleware, or the Request the fetch
 * wrapper handed on; anything else (`undefined`, the tool's arguments) throws
 * a `ToolctxError` (`invalid_argument`) rather than reading as "no context".
 *
 * ```ts
 * // SDK v2 (@modelcontextprotocol/server)
 * server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }, ctx) => {
 *   const context = contextFrom(ctx); // context?.task_id, context?.idempotency_key, ...
 * });
 * // SDK v1 (@modelcontextprotocol/sdk)
 * server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
 *   const context = contextFrom(extra);
 * });
 * ```
 */
export function contextFrom(source: ContextSource): ToolContext | undefined {
  const found = find(source, 'toolctx', 'contextFrom');
  return isContext(found) ? found : undefined;
}

/**
 * The AIVAX context of a call accepted by an `AivaxVerifier` (the
 * middleware puts it at `req.auth.extra.aivax`), from the same sources as
 * `contextFrom`; `undefined` when there is none.
 */
export function aivaxContextFrom(source: ContextSource): AivaxContext | undefined {
  const found = find(source, 'aivax', 'aivaxContextFrom');
  return isAivaxContext(found) ? found : undefined;
}

function find(source: unknown, key: string, helper: string): unknown {
  if (typeof Request !== 'undefined' && source instanceof Request) return byRequest.get(source)?.[key];
  // A Node request (IncomingMessage, Express): a method and its headers.
  const node = source as { auth?: AuthInfoLike; method?: unknown } | null;
  if (node !== null && typeof node === 'object' && typeof node.method === 'string' && ('headers' in node || 'rawHeaders' in node)) {
    return node.auth?.extra?.[key];
  }
  // Only what an auth layer handed the SDK: SDK v2's legacy-era fallback
  // hands the tool a copy of the Request, so `ctx.http.req` would find the
  // context for one protocol era and not the other.
  return callOf(source, helper).authInfo?.extra?.[key];
}

/** For the SDK's web-standard transport: `transport.handleRequest(req, { authInfo: authInfoFrom(req) })`. */
export function authInfoFrom(request: Request): ToolctxAuthInfo | undefined {
  const contexts = byRequest.get(request);
  return contexts ? { token: '', clientId: 'toolctx', scopes: [], extra: { ...contexts } } : undefined;
}

function isContext(v: unknown): v is ToolContext {
  return typeof v === 'object' && v !== null && typeof (v as ToolContext).task_id === 'string';
}

function isAivaxContext(v: unknown): v is AivaxContext {
  return typeof v === 'object' && v !== null && typeof (v as AivaxContext).nonce_verified === 'boolean';
}
