/**
 * Runs in Node: `toolctx/helpers` (export condition `node`). The same
 * helpers as `../web/helpers.ts`, with canonical JSON from the core through
 * the Node flavour of the conventions module (loaded synchronously, shared
 * with `toolctx/conventions`), hashing arguments with `node:crypto` (a few
 * microseconds) instead of Web Crypto's asynchronous digest (tens of
 * microseconds in Node 20).
 */
import { createHash } from 'node:crypto';

import { canonicalJson } from '../canonical.js';
import type { ToolExtra, ToolHandler } from '../extra.js';
import { idempotent as idempotentWith, type IdempotencyOptions } from '../idempotency.js';
import './conventions-glue.js';

export * from '../helpers-common.js';

/** Lowercase hex SHA-256 of the UTF-8 bytes of `canonicalJson(value)`. */
export async function canonicalHash(value: unknown): Promise<string> {
  return nodeHash(value);
}

/** As `toolctx/helpers`' `idempotent`, with `node:crypto` as the default hash. */
export function idempotent<A, E extends ToolExtra, R>(
  handler: ToolHandler<A, E, R>,
  options: IdempotencyOptions = {},
): (args: A, extra: E) => Promise<R> {
  return idempotentWith(handler, { hash: nodeHash, ...options });
}

function nodeHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
