// A JavaScript host of the raw module (crates/wasm-abi, ABI version 1) for
// its own tests: the calling convention alone (fields in, `=`/`!` answers
// out), so that the module's answers are judged as the Go and Java front
// ends receive them. No rule lives here.
import { readFileSync } from 'node:fs';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const bytes = (v) => (typeof v === 'string' ? encoder.encode(v) : v);

export class AbiError extends Error {
  constructor(text) {
    const nl = text.indexOf('\n');
    super(nl < 0 ? text : text.slice(nl + 1));
    this.code = nl < 0 ? 'internal' : text.slice(0, nl);
  }
}

/** One instance of a raw module (`path`), called synchronously. */
export class Instance {
  constructor(path) {
    const module = new WebAssembly.Module(readFileSync(path));
    this.x = new WebAssembly.Instance(module, {}).exports;
    if (this.x.toolctx_version() !== 1) throw new Error(`ABI version ${this.x.toolctx_version()}, expected 1`);
  }

  /** `op(...args)` with `fields` as its input; the answer's bytes after `=`, or throws AbiError. */
  raw(op, fields = [], ...args) {
    const parts = fields.map(bytes);
    const total = parts.reduce((n, f) => n + 4 + f.length, 0);
    const ptr = this.x.toolctx_input(total);
    if (ptr === 0 && total > 0) throw new Error('toolctx_input: no buffer');
    const view = new DataView(this.x.memory.buffer);
    const mem = new Uint8Array(this.x.memory.buffer);
    let at = ptr;
    for (const f of parts) {
      view.setUint32(at, f.length, true);
      mem.set(f, at + 4);
      at += 4 + f.length;
    }
    const packed = BigInt.asUintN(64, this.x[op](...args));
    const p = Number(packed >> 32n);
    const len = Number(packed & 0xffffffffn);
    const out = new Uint8Array(this.x.memory.buffer, p, len).slice();
    if (out[0] === 0x3d) return out.subarray(1); // '='
    if (out[0] === 0x21) throw new AbiError(decoder.decode(out.subarray(1))); // '!'
    throw new Error(`${op}: an answer neither '=' nor '!'`);
  }

  text(op, fields, ...args) {
    return decoder.decode(this.raw(op, fields, ...args));
  }

  /** An answer that is a list of fields. */
  list(op, fields, ...args) {
    const out = this.raw(op, fields, ...args);
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    const items = [];
    for (let at = 0; at < out.length; ) {
      const len = view.getUint32(at, true);
      items.push(decoder.decode(out.subarray(at + 4, at + 4 + len)));
      at += 4 + len;
    }
    return items;
  }
}

/** `lens` and `heads` (crates/wasm-boundary's `split`) for a method and `[name, value]` pairs. */
export function heads(method, headers) {
  const parts = [method, ...headers.flat()].map(bytes);
  const lens = new Uint8Array(4 * parts.length);
  const view = new DataView(lens.buffer);
  parts.forEach((p, i) => view.setUint32(4 * i, p.length, true));
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return [lens, all];
}
