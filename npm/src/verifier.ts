/**
 * Shared by both flavours: the AgentArea verifier (`createVerifier`) over
 * one flavour of the verifier's wasm-bindgen glue (`node/glue.ts` or
 * `web/glue.ts`, which pass their class to `verifierFactory`). What crosses
 * into WebAssembly and back is `boundary/`.
 */
import { configJson } from './boundary/config.js';
import { toBytes } from './boundary/encode.js';
import { invalid, rethrow, throughGlue } from './boundary/failures.js';
import { Held } from './boundary/tickets.js';
import { Verdicts } from './boundary/verdicts.js';
import { headerNames, WasmInput, type WasmInputGlue } from './boundary/wasm-input.js';
import { ToolctxError } from './errors.js';
import type { ReplayGuard, ReplayStore } from './replay.js';
import { DESCRIBE, Recorder, recordedBy, TELEMETRY_OPTIONS, type DescribeRequest, type Seen, type TelemetryOptions } from './telemetry.js';
import type {
  CallVerifier,
  ToolContext,
  HeadersResult,
  VerifierOptions,
  VerifyOptions,
  VerifyRequest,
  VerifyResult,
} from './types.js';

/**
 * The class the wasm-bindgen glue exports (crates/wasm/src/lib.rs): the
 * request goes into its memory (`WasmInput`), each call says how much of
 * it to read and returns its answer's length.
 */
export interface WasmVerifier extends WasmInputGlue {
  readonly maxBodyBytes: number;
  /** The headers the check reads, then those removed upstream (`headerNames` in boundary/wasm-input.ts). */
  readonly headerNames: string;
  checkHeaders(heads: number, lens: number): number;
  verify(heads: number, lens: number, body: number, now: number): number;
  verifyBody(ticket: number, body: number, now: number): number;
  settle(ticket: number, answer: unknown): string;
  describe(): string;
  free(): void;
}
export type WasmVerifierClass = new (config: Uint8Array, includeReason: boolean | undefined, replayCapacity: number | undefined, sharedStore: boolean) => WasmVerifier;

/** `createVerifier`'s options and their names in the core's configuration JSON. */
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
  forward: 'forward',
};

const inspect = Symbol.for('nodejs.util.inspect.custom');

/**
 * What `Verifier` and `AivaxVerifier` share over their wasm-bindgen object:
 * freeing it, the configuration it describes with secrets redacted, the
 * telemetry options, and their module's description of a request for the
 * entry points' spans and events.
 */
export abstract class WasmBacked {
  readonly #glue: { describe(): string; free(): void };
  /** @internal The module's `describeRequest`, for the middleware and the fetch wrapper. */
  readonly [DESCRIBE]: DescribeRequest;
  /** The `telemetry` and `onVerdict` it was created with, which the middleware and the fetch wrapper default to. */
  readonly [TELEMETRY_OPTIONS]: TelemetryOptions;
  /** What `verify` and `checkHeaders` called directly record. */
  protected readonly recorder: Recorder;

  constructor(glue: { describe(): string; free(): void }, describe: DescribeRequest, telemetry: TelemetryOptions) {
    this.#glue = glue;
    this[DESCRIBE] = describe;
    this[TELEMETRY_OPTIONS] = telemetry;
    this.recorder = new Recorder(telemetry, 'verify');
  }

  /** What `record` needs to describe `request`, a body verdict's. */
  protected seen(request: VerifyRequest): Seen {
    return { method: request.method, body: () => toBytes(request.body), describe: this[DESCRIBE] };
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
  readonly #input: WasmInput;
  readonly #verdicts: Verdicts;
  readonly #held: Held;
  /** The middleware puts the context at `req.toolctx` and `req.auth.extra.toolctx`. */
  readonly contextKey = 'toolctx';
  /**
   * True with a shared replay store (`redisReplayStore`): the verdict then
   * needs `verifyAsync`, and `verify` throws.
   */
  readonly verifiesAsync: boolean;

  /** @internal use `createVerifier` */
  constructor(wasm: WasmVerifier, memory: WebAssembly.Memory, describe: DescribeRequest, store?: ReplayStore, telemetry: TelemetryOptions = {}) {
    super(wasm, describe, telemetry);
    this.#wasm = wasm;
    const [read, removed] = headerNames(wasm.headerNames);
    this.#input = new WasmInput(wasm, memory, read);
    this.#store = store;
    this.verifiesAsync = store !== undefined;
    this.#verdicts = new Verdicts(removed);
    this.#held = new Held(this.#verdicts);
  }

  /** The lower-case header names removed upstream from every request that passes or is accepted (the configuration's `forward`). */
  get removedHeaders(): readonly string[] {
    return this.#verdicts.removed;
  }

  /** Releases the WebAssembly memory now instead of at garbage collection; a later call throws without writing to it. */
  override free(): void {
    this.#input.close();
    super.free();
  }

  /** Read at most this many body bytes; one more is enough to refuse `body_too_large`. */
  get maxBodyBytes(): number {
    return this.#wasm.maxBodyBytes;
  }

  /**
   * Steps 0 and 1 (method, static credential) on the headers alone, so a
   * request without the credential is refused before its body is read.
   * Hand a `read_body` result on to `verify` as `checked` (with the same
   * method and headers object) and those steps do not run again.
   */
  checkHeaders(request: Pick<VerifyRequest, 'method' | 'headers'>): HeadersResult {
    const wasm = this.#wasm;
    const input = this.#input;
    const started = recordedBy(request) ? undefined : this.recorder.start();
    const [heads, lens] = input.write(request);
    const result = this.#held.headersResult(request, throughGlue(() => input.answer(wasm.checkHeaders(heads, lens))));
    // A pass or a refusal on the headers is this request's verdict; `read_body` is recorded by `verify`.
    if (started !== undefined && result.outcome !== 'read_body') this.recorder.record(started, result);
    return result;
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
    const started = recordedBy(request) ? undefined : this.recorder.start();
    const out = this.#verdict(request, clock(options));
    const result = this.#verdicts.decode(out, this.#input.answered);
    if (started !== undefined) this.recorder.record(started, result, undefined, this.seen(request));
    return result;
  }

  /**
   * The whole decision, replay guard included whatever its store: with a
   * shared store, the core says what an accepted call must claim (a token
   * without `jti` is refused `claim_invalid`), the store is asked, and the
   * core turns its answer into the verdict (`token_replayed`,
   * `replay_guard_full`, `internal_error` when the store fails). Without
   * one, `verify`'s verdict.
   */
  async verifyAsync(request: VerifyRequest, options?: VerifyOptions): Promise<VerifyResult> {
    const started = recordedBy(request) ? undefined : this.recorder.start();
    const result = await this.#verifyAsync(request, options);
    if (started !== undefined) this.recorder.record(started, result, undefined, this.seen(request));
    return result;
  }

  async #verifyAsync(request: VerifyRequest, options?: VerifyOptions): Promise<VerifyResult> {
    const now = clock(options);
    const out = this.#verdict(request, now);
    const store = this.#store;
    // `c<ticket>\n<until>\n<jti>`: the accepted call waits in the glue for the store's answer.
    if (store === undefined || out.charCodeAt(0) !== 0x63) return this.#verdicts.decode(out, this.#input.answered);
    const nl = out.indexOf('\n');
    const nl2 = out.indexOf('\n', nl + 1);
    const ticket = Number(out.slice(1, nl));
    // The store's answer goes to the core as it came (a bool, an answer's
    // name, anything else `failed`); a store that throws has failed.
    let answer: unknown;
    try {
      answer = await store.firstUse(out.slice(nl2 + 1), Number(out.slice(nl + 1, nl2)), now);
    } catch {
      answer = 'failed';
    }
    return this.#verdicts.decode(this.#wasm.settle(ticket, answer));
  }

  #verdict(request: VerifyRequest, now: number): string {
    const wasm = this.#wasm;
    const input = this.#input;
    return this.#held.verify(
      request,
      (ticket, body) => {
        input.writeBody(body);
        return input.answer(wasm.verifyBody(ticket, body.length, now));
      },
      (body) => {
        const [heads, lens] = input.write(request, body);
        return input.answer(wasm.verify(heads, lens, body.length, now));
      },
    );
  }
}

function clock(options: VerifyOptions | undefined): number {
  const now = options?.now ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(now) || now < 0) throw invalid('now must be a non-negative integer (Unix seconds)');
  return now;
}

/**
 * The in-memory capacity as given (the core reads it; `undefined`: no
 * in-memory guard) or the shared store of `replayGuard`.
 */
function replayGuard(guard: ReplayGuard | null | undefined): [number | undefined, ReplayStore | undefined] {
  if (guard == null) return [undefined, undefined];
  if (typeof guard !== 'object') throw new ToolctxError('config_type', 'setting `replayGuard` has the wrong type');
  if ('kind' in guard && guard.kind === 'memory') {
    const { capacity } = guard;
    if (typeof capacity !== 'number') throw new ToolctxError('config_type', 'setting `capacity` has the wrong type');
    return [capacity, undefined];
  }
  if (typeof (guard as Partial<ReplayStore>).firstUse !== 'function') {
    throw new ToolctxError('config_type', 'setting `replayGuard` needs memoryReplayStore(), redisReplayStore() or a store with firstUse');
  }
  return [undefined, guard as ReplayStore];
}

/**
 * `telemetry` and `onVerdict` out of a factory's options (the front end's,
 * not the core's configuration), checked, and the rest.
 */
export function telemetryOptions(options: object): [TelemetryOptions, object] {
  let telemetry: TelemetryOptions = {};
  let config = options;
  if (options !== null && typeof options === 'object') {
    const { telemetry: t, onVerdict, ...rest } = options as TelemetryOptions;
    telemetry = { telemetry: t, onVerdict };
    config = rest;
  }
  try {
    new Recorder(telemetry, 'verify');
  } catch (e) {
    throw new ToolctxError('config_type', (e as Error).message);
  }
  return [telemetry, config];
}

/** Builds `createVerifier` over one flavour of the wasm-bindgen glue, its module's memory and `describeRequest`. */
export function verifierFactory(Wasm: WasmVerifierClass, memory: WebAssembly.Memory, describe: DescribeRequest): (options: VerifierOptions) => Verifier {
  return function createVerifier(options: VerifierOptions): Verifier {
    // The replay guard and telemetry are the front end's, not the core's configuration.
    let guard: ReplayGuard | null | undefined;
    const [telemetry, rest] = telemetryOptions(options);
    let config = rest;
    if (rest !== null && typeof rest === 'object') ({ replayGuard: guard, ...config } = rest as { replayGuard?: ReplayGuard | null });
    const json = configJson(config, OPTION_NAMES, 'createVerifier');
    // Unset (or null): the core's default, read by the module.
    const includeReason = options.includeReason ?? undefined;
    if (includeReason !== undefined && typeof includeReason !== 'boolean') throw new ToolctxError('config_type', 'setting `includeReason` has the wrong type');
    let capacity: number | undefined;
    let store: ReplayStore | undefined;
    let wasm: WasmVerifier;
    try {
      [capacity, store] = replayGuard(guard);
      wasm = new Wasm(json, includeReason, capacity, store !== undefined);
    } catch (e) {
      rethrow(e);
    } finally {
      // The config text holds the secrets: do not leave it around.
      json.fill(0);
    }
    return new Verifier(wasm, memory, describe, store, telemetry);
  };
}
