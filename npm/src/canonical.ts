/**
 * Canonical JSON (RFC 8785) written by the Rust core (its `jcs` module,
 * through WebAssembly), and the SHA-256 of it, for comparing a retry's
 * arguments with the first call's (the core's too).
 */
import { core } from './core-functions.js';

/**
 * The JSON text of a value, as `JSON.stringify` writes it (`toJSON` applied,
 * `undefined` members left out, `undefined` in arrays as `null`), except that
 * what has no JSON form throws a `TypeError` instead of vanishing: a
 * non-finite number, a bigint, a function, a symbol, or `undefined` itself.
 */
export function jsonText(value: unknown, what = 'canonicalJson'): string {
  const text = JSON.stringify(value, (_key: string, v: unknown) => {
    switch (typeof v) {
      case 'number':
        if (!Number.isFinite(v)) throw new TypeError(`${what}: ${v} has no JSON form`);
        return v;
      case 'bigint':
      case 'function':
      case 'symbol':
        throw new TypeError(`${what}: a ${typeof v} has no JSON form`);
      default:
        return v;
    }
  });
  if (text === undefined) throw new TypeError(`${what}: undefined has no JSON form`);
  return text;
}

/** Runs one of the core's JSON functions, turning its refusal into a `TypeError`. */
export function throughCore<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (typeof e === 'string') {
      // The core refuses a lone surrogate, more than 64 nested containers and
      // numbers out of the double range.
      throw new TypeError(`${what}: ${e.slice(e.indexOf('\n') + 1)}`);
    }
    throw e;
  }
}

/**
 * The RFC 8785 canonical form, written by the Rust core: no whitespace,
 * object members sorted by the UTF-16 code units of their names, strings and
 * numbers as `JSON.stringify` writes them (`1.0` is `1`, `-0` is `0`).
 * Members whose value is `undefined` are left out, as `JSON.stringify` does;
 * a non-finite number, a bigint, a function or a symbol cannot be
 * canonicalized and throws a `TypeError`, as does what the core refuses (a
 * string with a lone surrogate, more than 64 nested arrays and objects).
 */
export function canonicalJson(value: unknown): string {
  const text = jsonText(value);
  return throughCore('canonicalJson', () => core().canonicalJson(text));
}

/**
 * Lowercase hex SHA-256 of the UTF-8 bytes of `canonicalJson(value)`: the
 * core's argument hash for idempotent retries (`idemArgumentHash`), the
 * same in every language.
 */
export async function canonicalHash(value: unknown): Promise<string> {
  const text = jsonText(value, 'canonicalHash');
  return throughCore('canonicalHash', () => core().idemArgumentHash(text));
}
