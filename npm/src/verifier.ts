import { ToolctxError, type ToolctxErrorCode } from './errors.js';
import type { ReplayGuard, ReplayStore } from './replay.js';
import type {
  Accept,
  CallVerifier,
  ToolContext,
  HeadersInput,
  HeadersResult,
  HeaderValue,
  Pass,
  RefusalReason,
  Reject,
  VerifierOptions,
  VerifyOptions,
  VerifyRequest,
  VerifyResult,
} from './types.js';

/** The class the wasm-bindgen glue exports (crates/wasm/src/lib.rs). */
export interface WasmVerifier {
  readonly maxBodyBytes: number;
  readonly clockSkewSeconds: number;
  checkHeaders(heads: Uint8Array, lens: Uint32Array): string;
  verify(heads: Uint8Array, lens: Uint32Array, body: Uint8Array, now: number): string;
  refuse(reason: string, idJson: string | undefined): string;
  describe(): string;
  free(): void;
}
export type WasmVerifierClass = new (config: Uint8Array, includeReason: boolean, replayCapacity: number) => WasmVerifier;

/** The header that carries the context token (the core's `TOKEN_HEADER`). */
const TOKEN_HEADER = 'x-agentarea-context';

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);
const PASS: Pass = Object.freeze({ outcome: 'pass' });
const READ_BODY: HeadersResult = Object.freeze({ outcome: 'read_body' });

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

/** Writes `parts` into `scratch` and their byte lengths into `lens`; returns the byte count. */
function encodeParts(parts: HeaderValue[]): number {
  if (parts.length > lens.length) lens = new Uint32Array(parts.length * 2);
  let text = '';
  let strings = true;
  for (const p of parts) {
    if (typeof p !== 'string') {
      strings = false;
      break;
    }
    text += p;
  }
  if (strings) {
    if (text.length * 3 > scratch.length) scratch = new Uint8Array(text.length * 3);
    // Fast path: all ASCII, so every part's byte length is its string length.
    const { written } = encoder.encodeInto(text, scratch);
    if (written === text.length) {
      for (let i = 0; i < parts.length; i++) lens[i] = (parts[i] as string).length;
      return written;
    }
  }
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
export function encodeHead(method: string, headers: HeadersInput | null | undefined): [Uint8Array, Uint32Array] {
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

/** Reads the glue's tagged verdict: `p`, `b`, `a{context}` or `r{refusal}`. */
export function decode(out: string): VerifyResult | HeadersResult {
  switch (out.charCodeAt(0)) {
    case 0x70: // p
      return PASS;
    case 0x62: // b
      return READ_BODY;
    case 0x61: // a
      return { outcome: 'accept', context: JSON.parse(out.slice(1)) } satisfies Accept;
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

/** Errors thrown by the glue are `"<code>\n<message>"` strings. */
export function rethrow(e: unknown): never {
  if (typeof e === 'string') {
    const nl = e.indexOf('\n');
    const code = (nl < 0 ? 'internal' : e.slice(0, nl)) as ToolctxErrorCode;
    throw new ToolctxError(code, nl < 0 ? e : e.slice(nl + 1));
  }
  throw e;
}

const OPTION_NAMES: Record<string, string> = {
  instanceId: 'instance_id',
  secrets: 'secrets',
  credential: 'credential',
  requireContext: 'require_context',
  clockSkewSeconds: 'clock_skew_s',
  maxTokenAgeSeconds: 'max_token_age_s',
  maxBodyBytes: 'max_body_bytes',
  maxTokenBytes: 'max_token_bytes',
  protocolMajors: 'protocol_majors',
};

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

export const inspect = Symbol.for('nodejs.util.inspect.custom');

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
): string {
  const body = toBytes(request.body);
  const [heads, sizes] = encodeHead(request.method, request.headers);
  try {
    return call(heads, sizes, body);
  } catch (e) {
    rethrow(e);
  }
}

/**
 * What `Verifier` and `AivaxVerifier` share over their wasm-bindgen object:
 * freeing it, and the configuration it describes with secrets redacted.
 */
export abstract class WasmBacked {
  readonly #glue: { describe(): string; free(): void };

  constructor(glue: { describe(): string; free(): void }) {
    this.#glue = glue;
  }

  /** Releases the WebAssembly memory now instead of at garbage collection. */
  free(): void {
    this.#glue.free();
  }

  /** The configuration with secrets (keys, the hook key) and credential values redacted. */
  toString(): string {
    return this.#glue.describe();
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect](): string {
    return this.toString();
  }
}

/**
 * A validated configuration with the HMAC keys precomputed. Create one per
 * configuration with `createVerifier` and reuse it for every request.
 */
export class Verifier extends WasmBacked implements CallVerifier<ToolContext> {
  readonly #wasm: WasmVerifier;
  readonly #store: ReplayStore | undefined;
  /** The middleware puts the context at `req.toolctx` and `req.auth.extra.toolctx`. */
  readonly contextKey = 'toolctx';
  /**
   * True with a shared replay store (`redisReplayStore`): the verdict then
   * needs `verifyAsync`, and `verify` throws.
   */
  readonly verifiesAsync: boolean;

  /** @internal use `createVerifier` */
  constructor(wasm: WasmVerifier, store?: ReplayStore) {
    super(wasm);
    this.#wasm = wasm;
    this.#store = store;
    this.verifiesAsync = store !== undefined;
  }

  /** Read at most this many body bytes; one more is enough to refuse `body_too_large`. */
  get maxBodyBytes(): number {
    return this.#wasm.maxBodyBytes;
  }

  /**
   * Steps 0 and 1 (method, static credential) on the headers alone, so a
   * request without the credential is refused before its body is read.
   */
  checkHeaders(request: Pick<VerifyRequest, 'method' | 'headers'>): HeadersResult {
    const wasm = this.#wasm;
    return decode(callOnHead(request, (heads, sizes) => wasm.checkHeaders(heads, sizes))) as HeadersResult;
  }

  /**
   * The whole decision on one request (CONTRACT §2, steps 0 to 14, and the
   * replay guard when it is in memory). With a shared replay store it
   * throws `replay_guard_async`: use `verifyAsync`.
   */
  verify(request: VerifyRequest, options?: VerifyOptions): VerifyResult {
    if (this.#store !== undefined) {
      throw new ToolctxError('replay_guard_async', 'the replay guard has a shared store: use verifyAsync');
    }
    return this.#decide(request, clock(options))[0];
  }

  /**
   * The whole decision, replay guard included whatever its store: with a
   * shared store, an accepted call's `jti` is claimed there and a token
   * already used is refused `token_replayed` (a token without `jti`:
   * `claim_invalid`; the store failing: `internal_error`), each refusal
   * rendered by the core. Without one, `verify`'s verdict.
   */
  async verifyAsync(request: VerifyRequest, options?: VerifyOptions): Promise<VerifyResult> {
    const now = clock(options);
    const [result, out] = this.#decide(request, now);
    const store = this.#store;
    if (store === undefined || result.outcome !== 'accept') return result;
    const { jti, exp } = result.context;
    // The request's id as the core wrote it: the accepted context's last member.
    const at = out.lastIndexOf(',"request_id":');
    const id = at < 0 ? undefined : out.slice(at + 14, -1);
    if (jti === undefined) return this.#refuse('claim_invalid', id);
    let fresh: unknown;
    try {
      fresh = await store.firstUse(jti, exp + this.#wasm.clockSkewSeconds, now);
    } catch {
      return this.#refuse('internal_error', id);
    }
    return fresh === true ? result : this.#refuse('token_replayed', id);
  }

  #decide(request: VerifyRequest, now: number): [VerifyResult, string] {
    const wasm = this.#wasm;
    const out = callOnRequest(request, (heads, sizes, body) => wasm.verify(heads, sizes, body, now));
    return [decode(out) as VerifyResult, out];
  }

  #refuse(reason: RefusalReason, id: string | undefined): Reject {
    let out: string;
    try {
      out = this.#wasm.refuse(reason, id);
    } catch (e) {
      rethrow(e);
    }
    return decode(out) as Reject;
  }
}

function clock(options: VerifyOptions | undefined): number {
  const now = options?.now ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(now) || now < 0) throw invalid('now must be a non-negative integer (Unix seconds)');
  return now;
}

/** The in-memory capacity (0: none) or the shared store of `replayGuard`. */
function replayGuard(guard: ReplayGuard | null | undefined): [number, ReplayStore | undefined] {
  if (guard == null) return [0, undefined];
  if (typeof guard !== 'object') throw new ToolctxError('config_type', 'setting `replayGuard` has the wrong type');
  if ('kind' in guard && guard.kind === 'memory') {
    const { capacity } = guard;
    if (!Number.isSafeInteger(capacity) || capacity < 1 || capacity > 0xffff_ffff) {
      throw new ToolctxError('limit_out_of_range', 'replayGuard capacity must be an integer from 1 to 4294967295');
    }
    return [capacity, undefined];
  }
  if (typeof (guard as Partial<ReplayStore>).firstUse !== 'function') {
    throw new ToolctxError('config_type', 'setting `replayGuard` needs memoryReplayStore(), redisReplayStore() or a store with firstUse');
  }
  return [0, guard as ReplayStore];
}

/** Builds `createVerifier` over one flavour of the wasm-bindgen glue. */
export function verifierFactory(Wasm: WasmVerifierClass): (options: VerifierOptions) => Verifier {
  return function createVerifier(options: VerifierOptions): Verifier {
    // The replay guard is the front end's, not the core's configuration.
    let guard: ReplayGuard | null | undefined;
    let config: object = options;
    if (options !== null && typeof options === 'object') ({ replayGuard: guard, ...config } = options);
    const json = configJson(config, OPTION_NAMES, 'createVerifier');
    const includeReason = options.includeReason ?? true;
    if (typeof includeReason !== 'boolean') throw new ToolctxError('config_type', 'setting `includeReason` has the wrong type');
    let capacity: number;
    let store: ReplayStore | undefined;
    let wasm: WasmVerifier;
    try {
      [capacity, store] = replayGuard(guard);
      wasm = new Wasm(json, includeReason, capacity);
    } catch (e) {
      rethrow(e);
    } finally {
      // The config text holds the secrets: do not leave it around.
      json.fill(0);
    }
    return new Verifier(wasm, store);
  };
}
