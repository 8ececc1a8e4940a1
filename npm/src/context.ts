import type { ToolContext, ToolctxAuthInfo } from './types.js';

const byRequest = new WeakMap<object, ToolContext>();

/** @internal the fetch wrapper records the context of the Request it hands on. */
export function rememberContext(request: object, context: ToolContext): void {
  byRequest.set(request, context);
}

/** The SDK's `AuthInfo` with the context at `extra.toolctx`, keeping what an earlier auth layer set. */
export function authInfoWith(previous: ToolctxAuthInfo | undefined, context: ToolContext): ToolctxAuthInfo {
  if (previous) return { ...previous, extra: { ...previous.extra, toolctx: context } };
  return { token: '', clientId: 'toolctx', scopes: [], extra: { toolctx: context } };
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
  if (source == null || typeof source !== 'object') return undefined;
  const remembered = byRequest.get(source);
  if (remembered) return remembered;
  const s = source as { authInfo?: { extra?: Record<string, unknown> }; auth?: { extra?: Record<string, unknown> } };
  const found = s.authInfo?.extra?.['toolctx'] ?? s.auth?.extra?.['toolctx'];
  return isContext(found) ? found : undefined;
}

/** For the SDK's web-standard transport: `transport.handleRequest(req, { authInfo: authInfoFrom(req) })`. */
export function authInfoFrom(request: Request): ToolctxAuthInfo | undefined {
  const context = byRequest.get(request);
  return context ? authInfoWith(undefined, context) : undefined;
}

function isContext(v: unknown): v is ToolContext {
  return typeof v === 'object' && v !== null && typeof (v as ToolContext).task_id === 'string';
}
