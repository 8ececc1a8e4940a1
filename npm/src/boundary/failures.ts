/**
 * The boundary's errors: a caller's bad input (`invalid`), an answer the
 * glue should never give (`unexpected`), and the glue's own errors, thrown
 * as `"<code>\n<message>"` strings (a configuration error's `code` is the
 * core's `ConfigError::code`), turned into `ToolctxError`s.
 */
import { ToolctxError, type ToolctxErrorCode } from '../errors.js';

export function invalid(message: string): ToolctxError {
  return new ToolctxError('invalid_argument', message);
}

export function unexpected(): ToolctxError {
  return new ToolctxError('internal', 'unexpected verdict from the WebAssembly core');
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

/** Runs `call`; the glue's errors become `ToolctxError`s. */
export function throughGlue<T>(call: () => T): T {
  try {
    return call();
  } catch (e) {
    rethrow(e);
  }
}
