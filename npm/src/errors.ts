/**
 * Why `createVerifier` (or a call with a bad argument) failed. The codes of
 * configuration errors are the core's own (`ConfigError::CODES`,
 * crates/core/src/config.rs; npm/test/codes.test.mjs fails when they
 * differ); messages name the setting, never a secret's value.
 */
export type ToolctxErrorCode =
  | 'config_not_json'
  | 'config_type'
  | 'config_unknown_setting'
  | 'config_missing'
  | 'instance_id_empty'
  | 'no_secrets'
  | 'secret_length'
  | 'credential_header'
  | 'credential_no_values'
  | 'limit_out_of_range'
  | 'no_protocol_majors'
  /** A setting is outside what it may be (`hookKey`: empty, over 72 bytes, or with NUL). */
  | 'config_invalid'
  /** A text setting (an instance id, a secret, a hook key, an address) holds an unresolved `${NAME}` placeholder. */
  | 'config_placeholder'
  /** A call got an argument of the wrong type (`now`, `headers`, `body`). */
  | 'invalid_argument'
  /** `verify` on a verifier whose replay guard has a shared store: use `verifyAsync`. */
  | 'replay_guard_async'
  /** The middleware found `req.body` already parsed by a body parser. */
  | 'body_already_parsed'
  /** `idempotent`: the store failed before the tool ran, so the tool did not run (`cause` holds the error of the store). */
  | 'idempotency_store_failed'
  /** `idempotent`: the store holds something under the key that is not an idempotency entry (the tool did not run). */
  | 'idempotency_entry_invalid'
  /** A bug in toolctx itself: the WebAssembly boundary was misused. */
  | 'internal';

export class ToolctxError extends Error {
  override readonly name = 'ToolctxError';
  readonly code: ToolctxErrorCode;

  constructor(code: ToolctxErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
