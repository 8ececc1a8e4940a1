/**
 * Canonical JSON (RFC 8785, the same form the Rust core's `jcs` module
 * writes) and the SHA-256 of it, for comparing a retry's arguments with the
 * first call's. Uses only `crypto.subtle`, so it runs in Node 20+, workers
 * and browsers alike.
 */

/**
 * The RFC 8785 canonical form: no whitespace, object members sorted by the
 * UTF-16 code units of their names, strings and numbers as `JSON.stringify`
 * writes them (`1.0` is `1`, `-0` is `0`). Members whose value is
 * `undefined` are left out, as `JSON.stringify` does; a non-finite number,
 * a bigint, a function or a symbol cannot be canonicalized and throws a
 * `TypeError`.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} has no JSON form`);
      out.push(JSON.stringify(value)); // -0 prints as 0, as RFC 8785 wants
      return;
    case 'object': {
      const withJson = value as { toJSON?: () => unknown };
      if (typeof withJson.toJSON === 'function') {
        write(withJson.toJSON(), out);
        return;
      }
      if (Array.isArray(value)) {
        out.push('[');
        value.forEach((item, i) => {
          if (i > 0) out.push(',');
          // As JSON.stringify: a hole or undefined in an array is null.
          write(item === undefined ? null : item, out);
        });
        out.push(']');
        return;
      }
      const record = value as Record<string, unknown>;
      // The default sort compares UTF-16 code units, which is RFC 8785's order.
      const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
      out.push('{');
      keys.forEach((k, i) => {
        if (i > 0) out.push(',');
        out.push(JSON.stringify(k), ':');
        write(record[k], out);
      });
      out.push('}');
      return;
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} has no JSON form`);
  }
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `canonicalJson(value)`. */
export async function canonicalHash(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}
