/**
 * Shared by both flavours: the AIVAX verifier (CONTRACT §7) over one flavour
 * of the conventions module's glue (`node/conventions-glue.ts` or
 * `web/conventions-glue.ts`, whose class `node/aivax.ts` and `web/aivax.ts`
 * pass to `aivaxVerifierFactory`). What crosses into WebAssembly and back is
 * `boundary/`, as for `Verifier`.
 */
import { configJson } from './boundary/config.js';
import { headArrays } from './boundary/encode.js';
import { rethrow, throughGlue } from './boundary/failures.js';
import { Held } from './boundary/tickets.js';
import { Verdicts } from './boundary/verdicts.js';
import { recordedBy, type DescribeRequest, type TelemetryOptions } from './telemetry.js';
import type {
  AivaxContext,
  AivaxVerifierOptions,
  AivaxVerifyResult,
  CallVerifier,
  HeadersResult,
  VerifyRequest,
} from './types.js';
import { telemetryOptions, WasmBacked } from './verifier.js';

/** The AIVAX class the conventions module's glue exports (crates/wasm-conventions/src/lib.rs). */
export interface WasmAivaxVerifier {
  readonly maxBodyBytes: number;
  readonly removedHeaders: string;
  checkHeaders(heads: Uint8Array, lens: Uint32Array): string;
  verify(heads: Uint8Array, lens: Uint32Array, body: Uint8Array): string;
  verifyBody(ticket: number, body: Uint8Array): string;
  describe(): string;
  free(): void;
}
export type WasmAivaxVerifierClass = new (config: Uint8Array, includeReason: unknown) => WasmAivaxVerifier;

const OPTION_NAMES: Record<string, string> = {
  hookKey: 'hook_key',
  requireNonce: 'require_nonce',
  maxBcryptCost: 'max_bcrypt_cost',
  credential: 'credential',
  maxBodyBytes: 'max_body_bytes',
  forward: 'forward',
};

/**
 * The AIVAX profile (CONTRACT §7): the same envelope checks as `Verifier`
 * (method, static credential, body size, strict JSON, batch, shape, MCP
 * headers), then the `_aiv_*` members of `_meta`, the nonce verified by
 * bcrypt against the hook key. Create one with `createAivaxVerifier` from
 * `toolctx/aivax`.
 *
 * bcrypt runs synchronously in WebAssembly on the calling thread: a nonce of
 * cost 12 blocks the event loop for a few hundred milliseconds (see the
 * README), and the cost is the sender's choice up to `maxBcryptCost`. Each
 * verifier remembers the last 1024 nonces that verified against its hook
 * key, and a repeat of one skips bcrypt; a nonce that failed is never
 * remembered.
 *
 * `verify` and `checkHeaders` called directly record each verdict as
 * `Verifier`'s do (`telemetry`, `onVerdict`); the middleware and the fetch
 * wrapper record the requests they check themselves.
 */
export class AivaxVerifier extends WasmBacked implements CallVerifier<AivaxContext> {
  readonly #wasm: WasmAivaxVerifier;
  readonly #verdicts: Verdicts;
  readonly #held: Held;
  /** The middleware puts the context at `req.aivax` and `req.auth.extra.aivax`. */
  readonly contextKey = 'aivax';

  /** @internal use `createAivaxVerifier` */
  constructor(wasm: WasmAivaxVerifier, describe: DescribeRequest, telemetry: TelemetryOptions = {}) {
    super(wasm, describe, telemetry);
    this.#wasm = wasm;
    this.#verdicts = new Verdicts(wasm.removedHeaders);
    this.#held = new Held(this.#verdicts);
  }

  /** The lower-case header names removed upstream from every request that passes or is accepted (the configuration's `forward`). */
  get removedHeaders(): readonly string[] {
    return this.#verdicts.removed;
  }

  /** Read at most this many body bytes; one more is enough to refuse `body_too_large`. */
  get maxBodyBytes(): number {
    return this.#wasm.maxBodyBytes;
  }

  /**
   * Method and static credential on the headers alone, before the body is
   * read; a `read_body` result handed on to `verify` as `checked` spares
   * running them again, as with `Verifier`.
   */
  checkHeaders(request: Pick<VerifyRequest, 'method' | 'headers'>): HeadersResult {
    const wasm = this.#wasm;
    const started = recordedBy(request) ? undefined : this.recorder.start();
    const [heads, lens] = headArrays(request);
    const result = this.#held.headersResult(request, throughGlue(() => wasm.checkHeaders(heads, lens)));
    // A pass or a refusal on the headers is this request's verdict; `read_body` is recorded by `verify`.
    if (started !== undefined && result.outcome !== 'read_body') this.recorder.record(started, result);
    return result;
  }

  /**
   * The whole decision on one request. Nothing in the profile expires, so
   * there is no clock (`options.now` is accepted and ignored, for the
   * middleware's sake).
   */
  verify(request: VerifyRequest, _options?: { now?: number }): AivaxVerifyResult {
    const wasm = this.#wasm;
    const started = recordedBy(request) ? undefined : this.recorder.start();
    const out = this.#held.verify(
      request,
      (ticket, body) => wasm.verifyBody(ticket, body),
      (body) => {
        const [heads, lens] = headArrays(request);
        return wasm.verify(heads, lens, body);
      },
    );
    const result = this.#verdicts.decode(out) as unknown as AivaxVerifyResult;
    if (started !== undefined) this.recorder.record(started, result, undefined, this.seen(request));
    return result;
  }
}

/** Builds `createAivaxVerifier` over one flavour of the wasm-bindgen glue and its module's `describeRequest`. */
export function aivaxVerifierFactory(Wasm: WasmAivaxVerifierClass, describe: DescribeRequest): (options: AivaxVerifierOptions) => AivaxVerifier {
  return function createAivaxVerifier(options: AivaxVerifierOptions): AivaxVerifier {
    // Telemetry is the front end's, not the core's configuration.
    const [telemetry, config] = telemetryOptions(options);
    const json = configJson(config, OPTION_NAMES, 'createAivaxVerifier');
    // As given: the module reads it by the core's settings table (unset or null the default, another type refused).
    const includeReason: unknown = options.includeReason;
    let wasm: WasmAivaxVerifier;
    try {
      wasm = new Wasm(json, includeReason);
    } catch (e) {
      rethrow(e);
    } finally {
      // The config text holds the hook key: do not leave it around.
      json.fill(0);
    }
    return new AivaxVerifier(wasm, describe, telemetry);
  };
}
