/**
 * Shared by both flavours: the TypeScript side of the WebAssembly boundary,
 * the mirror of `crates/wasm-boundary` (the crate both wasm crates use).
 * The two describe one format; a change to it changes both.
 *
 * - In: the method and the headers as bytes back to back, with their
 *   lengths (method, then name and value for each header, in order,
 *   repeated headers kept repeated); the body as bytes; the configuration
 *   as the core's JSON (snake_case setting names) in a `Uint8Array`. The
 *   AgentArea verifier (`crates/wasm`) takes them in its own memory, where
 *   `WasmInput` writes them (method and headers, then the body, and the
 *   lengths), so that one call carries a request; the AIVAX verifier takes
 *   them as arrays (a `Uint8Array` and a `Uint32Array`, then the body).
 * - Out: one string whose first character is a tag: `p` pass, `b` + a
 *   ticket: read the body (headers only), `u` the ticket holds nothing
 *   (body only: verify the whole request), `a` + the context as JSON (then,
 *   when the request had an id or headers follow, a newline and the id's
 *   JSON text as the core holds it, empty without one; then a newline, the
 *   lower-case name, a newline and the value of each header the core
 *   decided to set upstream), `A` + the context as a record (the AgentArea
 *   verifier's form of `a`, `readRecord` below, `crates/wasm/src/record.rs`),
 *   `c` + a ticket, the claim's `until` and its
 *   `jti` on lines of their own (a shared replay store's claim, settled by
 *   the glue's `settle`: `verifier.ts`), `r` + the refusal as JSON
 *   (`status`, `code`, `reason`, `message`, `id`, `body`, each as the core
 *   rendered it). The AgentArea verifier leaves it in its memory as UTF-8
 *   (`WasmInput.answer`).
 * - `removedHeaders`: the header names to remove upstream on pass and
 *   accept, one per line, fixed per configuration: read once (`Verdicts`).
 *   The AgentArea verifier's `headerNames` holds the names its check reads
 *   before them (`headerNames` below): from fetch's `Headers` only those
 *   are written, each asked by name, since walking every header costs
 *   more there than the rest of the boundary.
 * - Headers, then body: `checkHeaders` answers `b<ticket>` and the glue
 *   object keeps the core's proof with the method and headers it checked;
 *   `verifyBody(ticket, body, ...)` goes on from step 2 on those (`Held`
 *   below is this side of it).
 * - Errors: the glue throws a string `"<code>\n<message>"` (a configuration
 *   error's `code` is the core's `ConfigError::code`).
 *
 * `verifier.ts` (`Verifier`) and `aivax-verifier.ts` (`AivaxVerifier`) call
 * their wasm-bindgen objects through these functions; nothing here decides.
 */
import { ToolctxError, type ToolctxErrorCode } from './errors.js';
import type { Accept, HeadersInput, HeadersResult, HeaderValue, Pass, Reject, ToolContext, Upstream, VerifyRequest, VerifyResult } from './types.js';

/** The header that carries the context token (the core's `TOKEN_HEADER`). */
const TOKEN_HEADER = 'x-agentarea-context';

const encoder = new TextEncoder();
// As wasm-bindgen's glue reads a string: a leading U+FEFF is kept.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const EMPTY = new Uint8Array(0);

/**
 * Where the method and headers are written: `bytes(n)` a view from the
 * start with room for `n` bytes that keeps what was written before,
 * `lens(n)` one with room for `n` lengths.
 */
interface Input {
  bytes(n: number): Uint8Array;
  lens(n: number): Uint32Array;
}

/**
 * Scratch space in JavaScript, reused, for the AIVAX verifier (which takes
 * arrays): every call into the WebAssembly module is synchronous, so two
 * calls never share it.
 */
class Scratch implements Input {
  #bytes = new Uint8Array(16384);
  #lens = new Uint32Array(64);

  bytes(n: number): Uint8Array {
    if (n > this.#bytes.length) {
      const bigger = new Uint8Array(n * 2);
      bigger.set(this.#bytes);
      this.#bytes = bigger;
    }
    return this.#bytes;
  }

  lens(n: number): Uint32Array {
    if (n > this.#lens.length) this.#lens = new Uint32Array(n * 2);
    return this.#lens;
  }
}

const scratch = new Scratch();

/** One char per byte when every char fits a byte (Node and fetch header strings), UTF-8 otherwise. */
function byteString(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) return encoder.encode(s);
    out[i] = c;
  }
  return out;
}

/**
 * Collects the method and the headers into `parts` as
 * `[method, name, value, name, value, ...]`, keeping repeated headers
 * repeated; from a fetch `Headers`, only the names in `read` when given
 * (the core's list of the headers its check reads).
 */
function collect(method: string, headers: HeadersInput | null | undefined, read?: readonly string[]): HeaderValue[] {
  const parts: HeaderValue[] = [method];
  if (headers == null) return parts;
  if (Array.isArray(headers)) {
    if (headers.length > 0 && typeof headers[0] === 'string') {
      // Node's flat rawHeaders.
      const raw = headers as readonly string[];
      if (raw.length % 2 !== 0) throw invalid('a flat header list needs an even length');
      for (let i = 0; i < raw.length; i++) parts.push(raw[i] as string);
      return parts;
    }
    for (const pair of headers as ReadonlyArray<readonly [string, HeaderValue]>) {
      if (!Array.isArray(pair) || pair.length !== 2) throw invalid('headers must be [name, value] pairs');
      const [name, value] = pair as readonly [unknown, unknown];
      if (typeof name !== 'string' || !(typeof value === 'string' || value instanceof Uint8Array)) {
        throw invalid('a header pair is [string, string | Uint8Array]');
      }
      parts.push(name, value);
    }
    return parts;
  }
  if (isHeaders(headers)) {
    // fetch joins repeated fields with ", ": split the token header back
    // into its field lines (a compact JWS never contains a comma). Only a
    // real `Headers` is asked by name: its `get` is case-insensitive, which
    // a look-alike's (a `Map`) need not be.
    if (read !== undefined && typeof Headers !== 'undefined' && headers instanceof Headers) {
      for (const name of read) {
        const value = headers.get(name);
        if (value !== null) pushJoined(parts, name, value);
      }
      return parts;
    }
    headers.forEach((value, name) => pushJoined(parts, name, value));
    return parts;
  }
  if (typeof headers !== 'object') throw invalid('headers must be Headers, a record, or a list');
  for (const name of Object.keys(headers)) {
    const value = (headers as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value === 'string') pushJoined(parts, name, value);
    else if (typeof value === 'number') parts.push(name, String(value));
    else if (Array.isArray(value)) {
      for (const v of value) {
        if (typeof v !== 'string') throw invalid(`header ${name} has a non-string value`);
        parts.push(name, v);
      }
    } else throw invalid(`header ${name} has a value of type ${typeof value}`);
  }
  return parts;
}

/** Node's `IncomingHttpHeaders` joins repeated unknown headers with ", " too. */
function pushJoined(parts: HeaderValue[], name: string, value: string): void {
  if (value.includes(',') && name.toLowerCase() === TOKEN_HEADER) {
    for (const v of value.split(',')) parts.push(name, v.replace(/^[ \t]+|[ \t]+$/g, ''));
  } else {
    parts.push(name, value);
  }
}

function isHeaders(h: unknown): h is Headers {
  if (typeof Headers !== 'undefined' && h instanceof Headers) return true;
  const o = h as { forEach?: unknown; get?: unknown; has?: unknown };
  return typeof o.forEach === 'function' && typeof o.get === 'function' && typeof o.has === 'function';
}

/**
 * The fast path, on every request: `first` and then `rest` from index
 * `from`, all ASCII strings, written back to back into `input` with their
 * lengths; the byte count, or -1 when one is not a string or not ASCII
 * (then `encodeParts` writes them byte by byte).
 */
function encodeAscii(first: string, rest: readonly HeaderValue[], from: number, input: Input): number {
  let text = first;
  for (let i = from; i < rest.length; i++) {
    const p = rest[i];
    if (typeof p !== 'string') return -1;
    text += p;
  }
  // Equal counts of chars read and bytes written: every char was ASCII.
  const { read, written } = encoder.encodeInto(text, input.bytes(text.length));
  if (read !== text.length || written !== text.length) return -1;
  const lens = input.lens(1 + rest.length - from);
  lens[0] = first.length;
  for (let i = from; i < rest.length; i++) lens[1 + i - from] = (rest[i] as string).length;
  return written;
}

/** Writes `parts` into `input` with their byte lengths; returns the byte count. */
function encodeParts(parts: HeaderValue[], input: Input): number {
  const ascii = encodeAscii(parts[0] as string, parts, 1, input);
  if (ascii >= 0) return ascii;
  const sizes: number[] = [];
  let offset = 0;
  for (const p of parts) {
    const bytes = typeof p === 'string' ? byteString(p) : p;
    input.bytes(offset + bytes.length).set(bytes, offset);
    sizes.push(bytes.length);
    offset += bytes.length;
  }
  input.lens(sizes.length).set(sizes);
  return offset;
}

/**
 * Writes the method and headers into `input` as the module takes them:
 * the bytes back to back and their lengths; returns how many of each.
 */
function encodeHead(method: string, headers: HeadersInput | null | undefined, input: Input, read?: readonly string[]): [number, number] {
  // Node's flat rawHeaders, without the list `collect` would build.
  if (Array.isArray(headers) && typeof headers[0] === 'string' && headers.length % 2 === 0) {
    const n = encodeAscii(method, headers as readonly string[], 0, input);
    if (n >= 0) return [n, headers.length + 1];
  }
  const parts = collect(method, headers, read);
  return [encodeParts(parts, input), parts.length];
}

/**
 * The AgentArea verifier's input and answer, in its module's memory
 * (`crates/wasm`): the request is written and its answer read where the
 * verifier object says (`reserve`, then the three addresses at
 * `answerPtr`: the answer's, the input bytes', the input lengths'). The views are made again whenever the memory has grown
 * (a grown memory has a new buffer).
 */
export class WasmInput implements Input {
  readonly #glue: WasmInputGlue;
  readonly #memory: WebAssembly.Memory;
  /** The headers the check reads (`headerNames`). */
  readonly #read: readonly string[];
  #buffer: ArrayBuffer | undefined;
  #memoryBytes = EMPTY;
  #bytes = EMPTY;
  #lens = new Uint32Array(0);
  /** The answer's address, the input bytes', the input lengths'. */
  #places = new Uint32Array(3);
  #byteRoom = 0;
  #lensRoom = 0;
  /** The last answer's length in bytes. */
  answered = 0;

  constructor(glue: WasmInputGlue, memory: WebAssembly.Memory, read: readonly string[]) {
    this.#glue = glue;
    this.#memory = memory;
    this.#read = read;
  }

  bytes(n: number): Uint8Array {
    if (n > this.#byteRoom) this.#reserve(Math.max(n, this.#byteRoom * 2, 4096), this.#lensRoom);
    else if (this.#buffer !== this.#memory.buffer) this.#views();
    return this.#bytes;
  }

  lens(n: number): Uint32Array {
    if (n > this.#lensRoom) this.#reserve(this.#byteRoom, Math.max(n, this.#lensRoom * 2, 64));
    else if (this.#buffer !== this.#memory.buffer) this.#views();
    return this.#lens;
  }

  /** Writes the method and headers of `request`, then `body` after them; returns the byte count of the first, and how many lengths. */
  write(request: Pick<VerifyRequest, 'method' | 'headers'>, body: Uint8Array = EMPTY): [number, number] {
    const [n, count] = encodeHead(request.method, request.headers, this, this.#read);
    if (body.length > 0) this.bytes(n + body.length).set(body, n);
    return [n, count];
  }

  /** Writes `body` alone. */
  writeBody(body: Uint8Array): void {
    if (body.length > 0) this.bytes(body.length).set(body);
  }

  /**
   * Forgets the input, for a verifier object being freed: a later write
   * asks the freed object for room first, which throws (as the glue does
   * for any call on it) before a byte lands in memory it no longer owns.
   */
  close(): void {
    this.#byteRoom = 0;
    this.#lensRoom = 0;
    this.#bytes = EMPTY;
    this.#lens = new Uint32Array(0);
  }

  /** The answer the last call left, `length` bytes of UTF-8. */
  answer(length: number): string {
    if (this.#buffer !== this.#memory.buffer) this.#views();
    const at = this.#places[0] as number;
    this.answered = length;
    return decoder.decode(this.#memoryBytes.subarray(at, at + length));
  }

  #reserve(bytes: number, lens: number): void {
    this.#glue.reserve(bytes, lens);
    this.#byteRoom = bytes;
    this.#lensRoom = lens;
    this.#views();
  }

  #views(): void {
    const buffer = this.#memory.buffer;
    this.#buffer = buffer;
    this.#memoryBytes = new Uint8Array(buffer);
    this.#places = new Uint32Array(buffer, this.#glue.answerPtr, 3);
    const input = this.#places[1] as number;
    this.#bytes = this.#memoryBytes.subarray(input, input + this.#byteRoom);
    this.#lens = new Uint32Array(buffer, this.#places[2] as number, this.#lensRoom);
  }
}

/** What `WasmInput` asks of the verifier object (crates/wasm/src/lib.rs). */
export interface WasmInputGlue {
  reserve(bytes: number, lens: number): void;
  readonly answerPtr: number;
}

/**
 * The AgentArea verifier's `headerNames`: each name its check reads, an
 * empty line, then each name to remove upstream, every name ending in a
 * newline. Returns the names read, and the removed ones as `Verdicts`
 * takes them.
 */
export function headerNames(text: string): [readonly string[], string] {
  const gap = text.indexOf('\n\n');
  if (gap < 0) throw unexpected();
  return [Object.freeze(text.slice(0, gap).split('\n')), text.slice(gap + 2, -1)];
}

export function toBytes(body: VerifyRequest['body']): Uint8Array {
  if (body == null) return EMPTY;
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw invalid('body must be a Uint8Array, an ArrayBuffer or a string');
}

export function invalid(message: string): ToolctxError {
  return new ToolctxError('invalid_argument', message);
}

/**
 * One verifier's verdicts as the glue renders them, with what goes upstream
 * (`upstream`, as the core decided): the names to remove, read once from
 * the glue's `removedHeaders`, and an accepted call's headers to set.
 */
export class Verdicts {
  /** Passed and accepted without headers to set: remove only. */
  readonly #none: Upstream;
  readonly #pass: Pass;

  constructor(removedHeaders: string) {
    const remove = Object.freeze(removedHeaders === '' ? [] : removedHeaders.split('\n'));
    this.#none = Object.freeze({ remove, set: Object.freeze([]) });
    this.#pass = Object.freeze({ outcome: 'pass', upstream: this.#none });
  }

  /** The lower-case names removed from every request that passes or is accepted. */
  get removed(): readonly string[] {
    return this.#none.remove;
  }

  /**
   * Reads the glue's tagged verdict: `p`, `a{context}[\n<id>[\n<name>\n<value>]...]`,
   * `A` + record or `r{refusal}`; `bytes` is its length in UTF-8 when known
   * (an ASCII record is then read without counting its chars).
   */
  decode(out: string, bytes?: number): VerifyResult {
    switch (out.charCodeAt(0)) {
      case 0x70: // p
        return this.#pass;
      case 0x61: {
        // a
        const nl = out.indexOf('\n');
        if (nl < 0) return { outcome: 'accept', context: JSON.parse(out.slice(1)), upstream: this.#none } satisfies Accept;
        // After the id line: name and value, in turn.
        const lines = out.slice(nl + 1).split('\n');
        const set: (readonly [string, string])[] = [];
        for (let i = 1; i + 1 < lines.length; i += 2) set.push(Object.freeze([lines[i] as string, lines[i + 1] as string] as const));
        const upstream = set.length === 0 ? this.#none : Object.freeze({ remove: this.#none.remove, set: Object.freeze(set) });
        return { outcome: 'accept', context: JSON.parse(out.slice(1, nl)), upstream } satisfies Accept;
      }
      case 0x41: // A
        return readRecord(out, this.#none, bytes === out.length);
      case 0x72: {
        // r
        const r = JSON.parse(out.slice(1)) as Omit<Reject, 'outcome'>;
        return {
          outcome: 'reject',
          status: r.status,
          code: r.code,
          reason: r.reason,
          message: r.message,
          id: r.id,
          body: r.body,
        } satisfies Reject;
      }
      default:
        throw unexpected();
    }
  }
}

/**
 * Reads the AgentArea verifier's accepted call, `A` + its record
 * (`crates/wasm/src/record.rs`): each field `<length>:<text>` (the length
 * in UTF-8 bytes, which are UTF-16 code units too when `ascii`) or `~` for
 * none, in the order of the core's JSON of the context, then the headers to
 * set upstream, name and value in turn. The context comes out as
 * `JSON.parse` made it of that JSON: the same members in the same order,
 * numbers and `metadata` and `request_id` parsed from the core's text.
 */
function readRecord(out: string, none: Upstream, ascii: boolean): Accept {
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

function unexpected(): ToolctxError {
  return new ToolctxError('internal', 'unexpected verdict from the WebAssembly core');
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

/** Errors thrown by the glue are `"<code>\n<message>"` strings. */
export function rethrow(e: unknown): never {
  if (typeof e === 'string') {
    const nl = e.indexOf('\n');
    const code = (nl < 0 ? 'internal' : e.slice(0, nl)) as ToolctxErrorCode;
    throw new ToolctxError(code, nl < 0 ? e : e.slice(nl + 1));
  }
  throw e;
}

/** The options in the core's JSON form (snake_case); the core validates them. */
export function configJson(options: object, names: Record<string, string>, what: string): Uint8Array {
  if (options === null || typeof options !== 'object') throw invalid(`${what} needs an options object`);
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'includeReason' || value === undefined) continue;
    const name = Object.hasOwn(names, key) ? names[key] : undefined;
    if (name === undefined) throw new ToolctxError('config_unknown_setting', `unknown setting \`${key}\``);
    config[name] = value;
  }
  return encoder.encode(JSON.stringify(config));
}

/** Runs `call`; the glue's errors become `ToolctxError`s. */
export function throughGlue<T>(call: () => T): T {
  try {
    return call();
  } catch (e) {
    rethrow(e);
  }
}

/** The request's method and headers as arrays (the AIVAX verifier's input), valid until the next call into the glue. */
export function headArrays(request: Pick<VerifyRequest, 'method' | 'headers'>): [Uint8Array, Uint32Array] {
  const [n, count] = encodeHead(request.method, request.headers, scratch);
  return [scratch.bytes(n).subarray(0, n), scratch.lens(count).subarray(0, count)];
}

/** What `Held` remembers of a `read_body` result: the glue's ticket and the request it was issued for. */
interface Ticket {
  readonly ticket: number;
  readonly method: string;
  readonly headers: VerifyRequest['headers'];
}

/**
 * One verifier's `read_body` results, each with the glue's ticket and the
 * method and headers object it was issued for. A `verify` given one of
 * them as `checked`, for that method and headers object, hands the glue
 * the ticket and the body alone (`verifyBody`): the glue checks them on
 * the headers it kept, from step 2. Anything else (no `checked`, another
 * verifier's, one used already, other headers, a ticket the glue no longer
 * holds) is verified whole, steps 0 and 1 included: the shortcut can only
 * skip checks that passed on these headers.
 */
export class Held {
  readonly #tickets = new WeakMap<object, Ticket>();
  readonly #verdicts: Verdicts;

  constructor(verdicts: Verdicts) {
    this.#verdicts = verdicts;
  }

  /** Reads `checkHeaders`' answer on `request`: `p`, `r{refusal}`, or `b<ticket>`, remembered. */
  headersResult(request: Pick<VerifyRequest, 'method' | 'headers'>, out: string): HeadersResult {
    if (out.charCodeAt(0) !== 0x62) return this.#verdicts.decode(out) as HeadersResult;
    const result: HeadersResult = Object.freeze({ outcome: 'read_body' });
    this.#tickets.set(result, { ticket: Number(out.slice(1)), method: request.method, headers: request.headers });
    return result;
  }

  /**
   * The glue's verdict on `request`: `onBody(ticket, body)` when
   * `request.checked` is one of this verifier's unused `read_body` results
   * for its method and headers, `onRequest` (the whole check) otherwise or
   * when the glue answers `u`.
   */
  verify(request: VerifyRequest, onBody: (ticket: number, body: Uint8Array) => string, onRequest: (body: Uint8Array) => string): string {
    const body = toBytes(request.body);
    const checked = request.checked;
    const held = typeof checked === 'object' && checked !== null ? this.#tickets.get(checked) : undefined;
    if (held !== undefined && held.method === request.method && held.headers === request.headers) {
      this.#tickets.delete(checked as object);
      const out = throughGlue(() => onBody(held.ticket, body));
      if (out !== 'u') return out;
    }
    return throughGlue(() => onRequest(body));
  }
}
