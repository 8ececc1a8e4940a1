/**
 * Shared by both flavours: the TypeScript side of the WebAssembly boundary,
 * the mirror of `crates/wasm-boundary` (the crate both wasm crates use).
 * The two describe one format; a change to it changes both.
 *
 * - In: the method and the headers as one `Uint8Array` holding their bytes
 *   back to back, with a `Uint32Array` of their lengths (method, then name
 *   and value for each header, in order, repeated headers kept repeated);
 *   the body as its own `Uint8Array`; the configuration as the core's JSON
 *   (snake_case setting names) in a `Uint8Array`.
 * - Out: one string whose first character is a tag: `p` pass, `b` + a
 *   ticket: read the body (headers only), `u` the ticket holds nothing
 *   (body only: verify the whole request), `a` + the context as JSON (then,
 *   when the request had an id or headers follow, a newline and the id's
 *   JSON text as the core holds it, empty without one; then a newline, the
 *   lower-case name, a newline and the value of each header the core
 *   decided to set upstream), `c` + a ticket, the claim's `until` and its
 *   `jti` on lines of their own (a shared replay store's claim, settled by
 *   the glue's `settle`: `verifier.ts`), `r` + the refusal as JSON
 *   (`status`, `code`, `reason`, `message`, `id`, `body`, each as the core
 *   rendered it).
 * - `removedHeaders`: the header names to remove upstream on pass and
 *   accept, one per line, fixed per configuration: read once (`Verdicts`).
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
import type { Accept, HeadersInput, HeadersResult, HeaderValue, Pass, Reject, Upstream, VerifyRequest, VerifyResult } from './types.js';

/** The header that carries the context token (the core's `TOKEN_HEADER`). */
const TOKEN_HEADER = 'x-agentarea-context';

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

// Scratch space for the method and headers, reused: every call into the
// WebAssembly module is synchronous, so two calls never share it.
let scratch = new Uint8Array(16384);
let lens = new Uint32Array(64);

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
 * `[method, name, value, name, value, ...]`, keeping repeated headers repeated.
 */
function collect(method: string, headers: HeadersInput | null | undefined): HeaderValue[] {
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
    // into its field lines (a compact JWS never contains a comma).
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
 * `from`, all ASCII strings, written back to back into `scratch` with their
 * lengths in `lens`; the byte count, or -1 when one is not a string or not
 * ASCII (then `encodeParts` writes them byte by byte).
 */
function encodeAscii(first: string, rest: readonly HeaderValue[], from: number): number {
  const count = 1 + rest.length - from;
  if (count > lens.length) lens = new Uint32Array(count * 2);
  let text = first;
  for (let i = from; i < rest.length; i++) {
    const p = rest[i];
    if (typeof p !== 'string') return -1;
    text += p;
  }
  if (text.length > scratch.length) scratch = new Uint8Array(text.length * 2);
  // Equal counts of chars read and bytes written: every char was ASCII.
  const { read, written } = encoder.encodeInto(text, scratch);
  if (read !== text.length || written !== text.length) return -1;
  lens[0] = first.length;
  for (let i = from; i < rest.length; i++) lens[1 + i - from] = (rest[i] as string).length;
  return written;
}

/** Writes `parts` into `scratch` and their byte lengths into `lens`; returns the byte count. */
function encodeParts(parts: HeaderValue[]): number {
  const ascii = encodeAscii(parts[0] as string, parts, 1);
  if (ascii >= 0) return ascii;
  if (parts.length > lens.length) lens = new Uint32Array(parts.length * 2);
  let offset = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as HeaderValue;
    const bytes = typeof p === 'string' ? byteString(p) : p;
    if (offset + bytes.length > scratch.length) {
      const bigger = new Uint8Array((offset + bytes.length) * 2);
      bigger.set(scratch.subarray(0, offset));
      scratch = bigger;
    }
    scratch.set(bytes, offset);
    lens[i] = bytes.length;
    offset += bytes.length;
  }
  return offset;
}

/**
 * The method and headers as the glue takes them: the bytes back to back and
 * their lengths. Both are views of shared scratch space, valid until the
 * next call into the glue.
 */
function encodeHead(method: string, headers: HeadersInput | null | undefined): [Uint8Array, Uint32Array] {
  // Node's flat rawHeaders, without the list `collect` would build.
  if (Array.isArray(headers) && typeof headers[0] === 'string' && headers.length % 2 === 0) {
    const n = encodeAscii(method, headers as readonly string[], 0);
    if (n >= 0) return [scratch.subarray(0, n), lens.subarray(0, headers.length + 1)];
  }
  const parts = collect(method, headers);
  const n = encodeParts(parts);
  return [scratch.subarray(0, n), lens.subarray(0, parts.length)];
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

  /** Reads the glue's tagged verdict: `p`, `a{context}[\n<id>[\n<name>\n<value>]...]` or `r{refusal}`. */
  decode(out: string): VerifyResult {
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
        throw new ToolctxError('internal', 'unexpected verdict from the WebAssembly core');
    }
  }
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

/** Runs one call into the glue on the request's method and headers; the glue's errors become `ToolctxError`s. */
export function callOnHead(request: Pick<VerifyRequest, 'method' | 'headers'>, call: (heads: Uint8Array, lens: Uint32Array) => string): string {
  const [heads, sizes] = encodeHead(request.method, request.headers);
  try {
    return call(heads, sizes);
  } catch (e) {
    rethrow(e);
  }
}

/** Runs one call into the glue on the whole request; the glue's errors become `ToolctxError`s. */
export function callOnRequest(
  request: VerifyRequest,
  call: (heads: Uint8Array, lens: Uint32Array, body: Uint8Array) => string,
  body: Uint8Array = toBytes(request.body),
): string {
  const [heads, sizes] = encodeHead(request.method, request.headers);
  try {
    return call(heads, sizes, body);
  } catch (e) {
    rethrow(e);
  }
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
  verify(
    request: VerifyRequest,
    onBody: (ticket: number, body: Uint8Array) => string,
    onRequest: (heads: Uint8Array, lens: Uint32Array, body: Uint8Array) => string,
  ): string {
    const body = toBytes(request.body);
    const checked = request.checked;
    const held = typeof checked === 'object' && checked !== null ? this.#tickets.get(checked) : undefined;
    if (held !== undefined && held.method === request.method && held.headers === request.headers) {
      this.#tickets.delete(checked as object);
      let out: string;
      try {
        out = onBody(held.ticket, body);
      } catch (e) {
        rethrow(e);
      }
      if (out !== 'u') return out;
    }
    return callOnRequest(request, onRequest, body);
  }
}
