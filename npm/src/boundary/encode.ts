/**
 * Requests into the glue: the method and the headers as bytes back to
 * back, with their lengths (method, then name and value for each header,
 * in order, repeated headers kept repeated), and the body as bytes. The
 * AgentArea verifier takes them in its own memory (`wasm-input.ts`); the
 * AIVAX verifier takes them as arrays (`headArrays`: a `Uint8Array` and a
 * `Uint32Array`, then the body).
 */
import type { HeadersInput, HeaderValue, VerifyRequest } from '../types.js';
import { invalid } from './failures.js';

const encoder = new TextEncoder();
export const EMPTY = new Uint8Array(0);

/**
 * Where the method and headers are written: `bytes(n)` a view from the
 * start with room for `n` bytes that keeps what was written before,
 * `lens(n)` one with room for `n` lengths.
 */
export interface Input {
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
 * (the core's list of the headers its check reads, the token's last).
 */
function collect(method: string, headers: HeadersInput | null | undefined, read?: readonly string[]): HeaderValue[] {
  const parts: HeaderValue[] = [method];
  const token = read === undefined ? undefined : read[read.length - 1];
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
        if (value !== null) pushJoined(parts, name, value, token);
      }
      return parts;
    }
    headers.forEach((value, name) => pushJoined(parts, name, value, token));
    return parts;
  }
  if (typeof headers !== 'object') throw invalid('headers must be Headers, a record, or a list');
  for (const name of Object.keys(headers)) {
    const value = (headers as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value === 'string') pushJoined(parts, name, value, token);
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

/**
 * Node's `IncomingHttpHeaders` joins repeated unknown headers with ", "
 * too. `token` is the token header's name as the core reads it (the
 * AgentArea verifier's; the AIVAX verifier reads no token header).
 */
function pushJoined(parts: HeaderValue[], name: string, value: string, token: string | undefined): void {
  if (token !== undefined && value.includes(',') && name.toLowerCase() === token) {
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
export function encodeHead(method: string, headers: HeadersInput | null | undefined, input: Input, read?: readonly string[]): [number, number] {
  // Node's flat rawHeaders, without the list `collect` would build.
  if (Array.isArray(headers) && typeof headers[0] === 'string' && headers.length % 2 === 0) {
    const n = encodeAscii(method, headers as readonly string[], 0, input);
    if (n >= 0) return [n, headers.length + 1];
  }
  const parts = collect(method, headers, read);
  return [encodeParts(parts, input), parts.length];
}

export function toBytes(body: VerifyRequest['body']): Uint8Array {
  if (body == null) return EMPTY;
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw invalid('body must be a Uint8Array, an ArrayBuffer or a string');
}

/** The request's method and headers as arrays (the AIVAX verifier's input), valid until the next call into the glue. */
export function headArrays(request: Pick<VerifyRequest, 'method' | 'headers'>): [Uint8Array, Uint32Array] {
  const [n, count] = encodeHead(request.method, request.headers, scratch);
  return [scratch.bytes(n).subarray(0, n), scratch.lens(count).subarray(0, count)];
}
