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
  /** A tool handler's `extra` (the SDK puts `req.auth` there as `authInfo`). */
  | { authInfo?: { extra?: Record<string, unknown> } | undefined }
  /** A Node request after the middleware. */
  | { auth?: { extra?: Record<string, unknown> } | undefined }
  /** The Request the fetch wrapper handed to its inner handler. */
  | Request
  | null
  | undefined;

/**
 * The verified context, or `undefined` when the call carried none (a call
 * that `requireContext: false` let pass, or a request toolctx never saw).
 *
 * ```ts
 * server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
 *   const ctx = contextFrom(extra); // ctx?.task_id, ctx?.idempotency_key, ...
 * });
 * ```
 */
export function contextFrom(source: ContextSource): ToolContext | undefined {
  const found = find(source, 'toolctx');
  return isContext(found) ? found : undefined;
}

/**
 * The AIVAX context of a call accepted by an `AivaxVerifier` (the
 * middleware puts it at `req.auth.extra.aivax`), from the same sources as
 * `contextFrom`; `undefined` when there is none.
 */
export function aivaxContextFrom(source: ContextSource): AivaxContext | undefined {
  const found = find(source, 'aivax');
  return isAivaxContext(found) ? found : undefined;
}

function find(source: ContextSource, key: string): unknown {
  if (source == null || typeof source !== 'object') return undefined;
  const remembered = byRequest.get(source)?.[key];
  if (remembered !== undefined) return remembered;
  const s = source as { authInfo?: { extra?: Record<string, unknown> }; auth?: { extra?: Record<string, unknown> } };
  return s.authInfo?.extra?.[key] ?? s.auth?.extra?.[key];
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
