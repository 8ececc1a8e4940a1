import type { ReplayGuard } from './replay.js';
import type { TelemetryOptions } from './telemetry.js';

/**
 * What goes upstream with a request the verifier let through (CONTRACT §7),
 * as the core decided it: remove every copy of each `remove` name (in any
 * letter case: a caller cannot spoof them), then add each `set` pair. The
 * Node middleware and the fetch wrapper do this themselves; a front end of
 * your own does exactly this and nothing else.
 */
export interface Upstream {
  /** Lower-case header names to remove first, every copy in any letter case; the same for every request of one verifier. */
  readonly remove: readonly string[];
  /**
   * `[lower-case name, value]` to add after that (an accepted call only).
   * The core has encoded each value already (bytes outside `!`..`~`, and
   * `%`, as `%XX`; `decodeURIComponent` gives back the exact value): send
   * it as it is, never encode it again.
   */
  readonly set: ReadonlyArray<readonly [string, string]>;
}

/** The verified context fields a `forward` configuration can map to headers (the core's `FORWARD_FIELDS`; npm/test/codes.test.mjs checks them). */
export type ForwardField =
  | 'task_id'
  | 'tool_call_id'
  | 'workspace_id'
  | 'idempotency_key'
  | 'protocol'
  | 'agent_id'
  | 'end_user_id'
  | 'metadata'
  | 'tool'
  | 'jti'
  | 'iat'
  | 'exp'
  | 'secret_index'
  | 'context';

/** The AIVAX context fields a `forward` configuration can map to headers (the core's `AIVAX_FIELDS`). */
export type AivaxForwardField =
  | 'nonce_verified'
  | 'external_user_id'
  | 'call_source'
  | 'conversation_token'
  | 'moment'
  | 'moment_unix'
  | 'moment_offset_minutes'
  | 'metadata'
  | 'context';

/**
 * What a verifier forwards upstream with a call it accepted (CONTRACT §7),
 * the configuration's `forward`: each mapped header is removed from every
 * request that passes or is accepted, and set on an accepted call from the
 * verified value. Values are the core's: a string as it is, any other JSON
 * as its canonical text (RFC 8785), `null` or missing forwards nothing, and
 * every byte outside `!`..`~` (and `%`) is written `%XX`.
 */
export interface ForwardOptions<F extends string = ForwardField> {
  /** Context field -> header name, e.g. `{ task_id: 'x-toolctx-task-id' }` (objects such as `metadata` go as canonical JSON). */
  headers?: Readonly<Partial<Record<F, string>>>;
  /** The Tuix headers: `_meta.sessionId` as `x-session-id`, `_meta.idempotencyKey` as `x-idempotency-key`. */
  tuix?: boolean;
  /** Any other `_meta` member -> header name, e.g. `{ traceId: 'x-trace-id' }`. */
  meta?: Readonly<Record<string, string>>;
}

/** The verified context of a `tools/call`, field names as in the contract. */
export interface ToolContext {
  task_id: string;
  tool_call_id: string;
  workspace_id: string;
  /** Always `task_id + ":" + tool_call_id`. */
  idempotency_key: string;
  /** `"<major>"` or `"<major>.<minor>"`. */
  protocol: string;
  agent_id?: string;
  end_user_id?: string;
  metadata?: Record<string, unknown>;
  /** The tool the token was minted for, when it names one. */
  tool?: string;
  jti?: string;
  iat: number;
  exp: number;
  /** Index of the configured secret that signed the token (never the secret). */
  secret_index: number;
  /**
   * The request's JSON-RPC `id` (a string or a number, as sent); absent when
   * the request had none or one of another type. Not vouched for by the
   * token: for answering and logging.
   */
  request_id?: string | number;
}

/**
 * Stable machine codes of refusals (`error.data.reason`): the core's
 * `Reason::as_str` for every `Reason::ALL` (crates/core/src/reason.rs);
 * npm/test/codes.test.mjs fails when the two differ.
 */
export type RefusalReason =
  | 'credential_missing'
  | 'credential_invalid'
  | 'body_too_large'
  | 'parse_error'
  | 'duplicate_member'
  | 'too_deep'
  | 'batch_with_tools_call'
  | 'invalid_params'
  | 'header_mismatch'
  | 'token_missing'
  | 'token_duplicated'
  | 'token_too_large'
  | 'token_malformed'
  | 'alg_not_allowed'
  | 'crit_not_supported'
  | 'signature_invalid'
  | 'issuer_invalid'
  | 'audience_invalid'
  | 'claim_invalid'
  | 'token_expired'
  | 'token_issued_in_future'
  | 'token_too_old'
  | 'token_not_yet_valid'
  | 'context_malformed'
  | 'tool_mismatch'
  | 'protocol_unsupported'
  | 'meta_mismatch'
  | 'meta_missing'
  | 'claim_missing'
  | 'policy_denied'
  | 'token_replayed'
  | 'replay_guard_full'
  | 'nonce_missing'
  | 'nonce_invalid'
  | 'internal_error';

/** Not this contract's business (not a POST, not a `tools/call`, ...): go on, only the forwarded headers removed. */
export interface Pass {
  outcome: 'pass';
  /** The forwarded header names to remove (`set` is empty). */
  upstream: Upstream;
}

/** A verified `tools/call`. */
export interface Accept {
  outcome: 'accept';
  context: ToolContext;
  /** The headers to remove and to set upstream, as the core decided. */
  upstream: Upstream;
}

/** A refused request, every field as the core rendered it. */
export interface Reject {
  outcome: 'reject';
  /** HTTP status: 400, 401, 403, 413, 500 (`internal_error`: the replay guard's store failed) or 503 (`replay_guard_full`: retry later). */
  status: number;
  /** JSON-RPC error code. */
  code: number;
  reason: RefusalReason;
  message: string;
  /** The request's JSON-RPC id, or `null` (steps 1-4, or no usable id). */
  id: string | number | null;
  /** The JSON-RPC error response to send, with content-type application/json. */
  body: string;
}

export type VerifyResult = Pass | Accept | Reject;

export type { ClaimAnswer, ReplayGuard, ReplayStore, MemoryReplayStore, MemoryReplayStoreOptions } from './replay.js';

/** The verdict on the method and headers alone, before the body is read. */
export type HeadersResult = Pass | { outcome: 'read_body' } | Reject;

/** A header value: a string (one char per byte, as Node and fetch give them) or raw bytes. */
export type HeaderValue = string | Uint8Array;

/**
 * Request headers in any of the usual shapes. Repeated headers stay repeated:
 * - a fetch `Headers` object;
 * - a Node `IncomingHttpHeaders`-like record (arrays for repeated headers);
 * - a list of `[name, value]` pairs;
 * - Node's flat `req.rawHeaders` list `[name, value, name, value, ...]`.
 */
export type HeadersInput =
  | Headers
  | Readonly<Record<string, string | readonly string[] | number | undefined>>
  | ReadonlyArray<readonly [string, HeaderValue]>
  | readonly string[];

/** What the verifier needs from a request. */
export interface VerifyRequest {
  method: string;
  headers?: HeadersInput | null;
  /** The exact body: bytes, or a string sent as its UTF-8 bytes. */
  body?: Uint8Array | ArrayBuffer | string | null;
  /**
   * The `read_body` result of this verifier's `checkHeaders` on this
   * request (the same `method` and the same `headers` object): the core
   * kept its proof that steps 0 and 1 passed, with the headers it checked,
   * and goes on from step 2. Used once; anything else here (another
   * verifier's result, one used already, other headers) and the whole
   * request is checked.
   */
  checked?: HeadersResult;
}

export interface VerifyOptions {
  /** Unix seconds; defaults to `Math.floor(Date.now() / 1000)`. */
  now?: number;
}

/**
 * Configuration of `createVerifier`; the rules and defaults of CONTRACT §1.
 * `telemetry` and `onVerdict` (`TelemetryOptions`) cover `verify`,
 * `verifyAsync` and `checkHeaders` called directly; the middleware and the
 * fetch wrapper record the requests they check themselves, with their own.
 */
export interface VerifierOptions extends TelemetryOptions {
  /** The server instance id the token's `aud` must name. */
  instanceId: string;
  /** HMAC secrets, 32 to 512 bytes of UTF-8 each; several at once for rotation. */
  secrets: readonly string[];
  /** An optional static credential checked before the body is read. */
  credential?: { header: string; values: readonly string[] } | null;
  /** When false, a `tools/call` with no token and no `agentarea/*` keys passes. Default true. */
  requireContext?: boolean;
  /** Default 30. */
  clockSkewSeconds?: number;
  /** Default 600. */
  maxTokenAgeSeconds?: number;
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** Default 8 KiB. */
  maxTokenBytes?: number;
  /** Default `[1]`. */
  protocolMajors?: readonly number[];
  /** Put `error.data.reason` in refusal bodies. Default true; status, code and message never change. */
  includeReason?: boolean;
  /** What is forwarded upstream with an accepted call (`upstream` on the verdict). Default: nothing. */
  forward?: ForwardOptions | null;
  /**
   * Refuse a token whose `jti` was already used (`token_replayed`), and a
   * token without `jti` (`claim_invalid`): `memoryReplayStore({ capacity })`
   * for one process (a full one refuses fresh tokens `replay_guard_full`,
   * 503), `redisReplayStore(client)` for several replicas (then the verdict
   * needs `verifyAsync`). Default: off.
   */
  replayGuard?: ReplayGuard | null;
}

/**
 * Shaped like the MCP SDK's `AuthInfo`, which the SDK hands to tool handlers
 * as `extra.authInfo`. toolctx puts the context at `extra.toolctx`.
 */
export interface ToolctxAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  resource?: URL;
  extra?: Record<string, unknown>;
}

/**
 * What an AIVAX `tools/call` carries (the `_aiv_*` members of `_meta`),
 * parsed and typed by the core. Absent members are left out.
 */
export interface AivaxContext {
  /** `_aiv_nonce` was present and verified against the hook key (false only with `requireNonce: false` and no nonce). */
  nonce_verified: boolean;
  external_user_id?: string;
  /** Kept as sent: unknown values are tolerated. */
  call_source?: string;
  conversation_token?: string;
  /** `_aiv_moment` as sent (ISO 8601 with its offset). */
  moment?: string;
  /** The same instant in Unix seconds (fraction dropped). */
  moment_unix?: number;
  /** The sender's offset from UTC, in minutes. */
  moment_offset_minutes?: number;
  /** Every other string member of `_meta` (not `_aiv*`), in document order. */
  metadata: Record<string, string>;
  /**
   * The request's JSON-RPC `id` (a string or a number, as sent); absent when
   * the request had none or one of another type. Not vouched for by the
   * nonce: for answering and logging.
   */
  request_id?: string | number;
}

/** An accepted AIVAX call. */
export interface AivaxAccept {
  outcome: 'accept';
  context: AivaxContext;
  /** The headers to remove and to set upstream, as the core decided. */
  upstream: Upstream;
}

export type AivaxVerifyResult = Pass | AivaxAccept | Reject;

/**
 * Configuration of `createAivaxVerifier` (CONTRACT §7). `telemetry` and
 * `onVerdict` (`TelemetryOptions`) cover `verify` and `checkHeaders`
 * called directly, as `VerifierOptions`' do.
 */
export interface AivaxVerifierOptions extends TelemetryOptions {
  /** The account hook key in plain text: 1 to 72 bytes of UTF-8, no NUL. A secret. */
  hookKey: string;
  /** Refuse a call whose `_aiv_nonce` is missing or null (`nonce_missing`). Default true. */
  requireNonce?: boolean;
  /** Highest bcrypt cost worked on (4 to 31); a nonce with a higher cost is `nonce_invalid` before any hashing. Default 12. */
  maxBcryptCost?: number;
  /** An optional static credential checked before the body is read. */
  credential?: { header: string; values: readonly string[] } | null;
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** Put `error.data.reason` in refusal bodies. Default true. */
  includeReason?: boolean;
  /** What is forwarded upstream with an accepted call (`upstream` on the verdict). Default: nothing. */
  forward?: ForwardOptions<AivaxForwardField> | null;
}

/**
 * What the Node middleware and the fetch wrapper need from a verifier: both
 * `Verifier` and `AivaxVerifier` are one.
 */
export interface CallVerifier<C = unknown> {
  /** Read at most this many body bytes; one more is enough to refuse. */
  readonly maxBodyBytes: number;
  /**
   * Where the middleware puts an accepted call's context: `req[contextKey]`
   * and `req.auth.extra[contextKey]`. Default `"toolctx"`.
   */
  readonly contextKey?: string;
  /** The lower-case header names removed upstream from every request that passes or is accepted (`Upstream.remove`). */
  readonly removedHeaders?: readonly string[];
  checkHeaders(request: Pick<VerifyRequest, 'method' | 'headers'>): HeadersResult;
  verify(request: VerifyRequest, options?: VerifyOptions): Pass | { outcome: 'accept'; context: C; upstream: Upstream } | Reject;
  /**
   * True when the verdict needs an asynchronous step (a replay guard with
   * a shared store): the middleware and the fetch wrapper then call
   * `verifyAsync` instead of `verify`.
   */
  readonly verifiesAsync?: boolean;
  verifyAsync?(request: VerifyRequest, options?: VerifyOptions): Promise<Pass | { outcome: 'accept'; context: C; upstream: Upstream } | Reject>;
}
