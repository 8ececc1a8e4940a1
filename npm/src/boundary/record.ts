/**
 * The AgentArea verifier's accepted call, `A` + its record
 * (`crates/wasm/src/record.rs`), read without `JSON.parse` of the context.
 */
import type { Accept, ToolContext, Upstream } from '../types.js';
import { unexpected } from './failures.js';

/**
 * Reads the AgentArea verifier's accepted call, `A` + its record
 * (`crates/wasm/src/record.rs`): each field `<length>:<text>` (the length
 * in UTF-8 bytes, which are UTF-16 code units too when `ascii`) or `~` for
 * none, in the order of the core's JSON of the context, then the headers to
 * set upstream, name and value in turn. The context comes out as
 * `JSON.parse` made it of that JSON: the same members in the same order,
 * numbers and `metadata` and `request_id` parsed from the core's text.
 */
export function readRecord(out: string, none: Upstream, ascii: boolean): Accept {
  record = out;
  recordAt = 1;
  recordAscii = ascii;
  try {
    const context = {
      protocol: text(),
      task_id: text(),
      tool_call_id: text(),
      workspace_id: text(),
      idempotency_key: text(),
    } as ToolContext;
    const agentId = next();
    if (agentId !== undefined) context.agent_id = agentId;
    const endUserId = next();
    if (endUserId !== undefined) context.end_user_id = endUserId;
    const metadata = next();
    if (metadata !== undefined) context.metadata = JSON.parse(metadata) as ToolContext['metadata'];
    const tool = next();
    if (tool !== undefined) context.tool = tool;
    const jti = next();
    if (jti !== undefined) context.jti = jti;
    context.iat = Number(text());
    context.exp = Number(text());
    context.secret_index = Number(text());
    const id = next();
    // A number's text reads the same through Number as through JSON.parse.
    if (id !== undefined) context.request_id = id.charCodeAt(0) === 0x22 ? (JSON.parse(id) as string) : Number(id);
    if (recordAt >= out.length) return { outcome: 'accept', context, upstream: none };
    const set: (readonly [string, string])[] = [];
    while (recordAt < out.length) set.push(Object.freeze([text(), text()] as const));
    return { outcome: 'accept', context, upstream: Object.freeze({ remove: none.remove, set: Object.freeze(set) }) };
  } finally {
    record = '';
  }
}

// `readRecord`'s cursor, at module level rather than in closures (measured
// cheaper per verdict); a read is synchronous, so two never share it.
let record = '';
let recordAt = 0;
let recordAscii = true;

/** The record's next field's text, or undefined for `~`. */
function next(): string | undefined {
  if (record.charCodeAt(recordAt) === 0x7e) {
    recordAt++;
    return undefined;
  }
  let length = 0;
  for (let c = record.charCodeAt(recordAt++); c !== 0x3a; c = record.charCodeAt(recordAt++)) {
    if (!(c >= 0x30 && c <= 0x39)) throw unexpected();
    length = length * 10 + (c - 0x30);
  }
  if (!recordAscii) length = utf16Units(record, recordAt, length);
  const field = record.slice(recordAt, recordAt + length);
  recordAt += length;
  return field;
}

/** The record's next field, which must be there. */
function text(): string {
  const field = next();
  if (field === undefined) throw unexpected();
  return field;
}

/** How many UTF-16 code units of `s` from `at` hold `bytes` bytes of UTF-8. */
function utf16Units(s: string, at: number, bytes: number): number {
  let units = 0;
  for (let n = 0; n < bytes; ) {
    const c = s.charCodeAt(at + units);
    // A surrogate pair: one char of four bytes.
    const pair = c >= 0xd800 && c <= 0xdbff;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    units += pair ? 2 : 1;
  }
  return units;
}

