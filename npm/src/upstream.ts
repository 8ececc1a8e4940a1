/**
 * Applies what the core decided goes upstream (`Upstream`, CONTRACT §7) to
 * the request a front end hands on: every copy of each `remove` name is
 * removed, in any letter case, then each `set` pair added, its value as the
 * core encoded it. Nothing here picks or encodes a value. Only types are
 * imported from `node:http`.
 */
import type { IncomingMessage } from 'node:http';

import type { Upstream } from './types.js';

/** A copy of `headers` as handed on upstream: without `upstream.remove`, then with `upstream.set`. */
export function upstreamHeaders(headers: HeadersInit, upstream: Upstream): Headers {
  const out = new Headers(headers);
  // `delete` removes every copy, whatever its case.
  for (const name of upstream.remove) out.delete(name);
  for (const [name, value] of upstream.set) out.append(name, value);
  return out;
}

/**
 * The same on a Node request, in `rawHeaders`, `headers` and
 * `headersDistinct` alike (the MCP SDK's transport reads `rawHeaders`,
 * handlers usually `headers`).
 */
export function applyUpstream(req: IncomingMessage, upstream: Upstream | undefined): void {
  if (upstream === undefined || upstream.remove.length === 0) return;
  const { remove, set } = upstream;
  // Node builds `headers` and `headersDistinct` lazily from `rawHeaders` and
  // its original length: build both before `rawHeaders` changes.
  const headers = req.headers as Record<string, unknown>;
  const distinct = req.headersDistinct as Record<string, unknown> | undefined;
  const raw = req.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (!remove.includes(name.toLowerCase())) kept.push(name, raw[i + 1] as string);
  }
  for (const [name, value] of set) kept.push(name, value);
  req.rawHeaders = kept;
  for (const name of remove) {
    delete headers[name];
    if (distinct) delete distinct[name];
  }
  for (const [name, value] of set) {
    headers[name] = value;
    if (distinct) distinct[name] = [value];
  }
}

/** What the core decided for each parsed body the middleware handed on (`req.body`), for `tuixHeaders`. */
const decided = new WeakMap<object, Upstream>();

export function rememberUpstream(message: unknown, upstream: Upstream): void {
  if (typeof message === 'object' && message !== null) decided.set(message, upstream);
}

export function rememberedUpstream(message: unknown): Upstream | undefined {
  return typeof message === 'object' && message !== null ? decided.get(message) : undefined;
}
