/**
 * The AgentArea verifier's input and answer, in its module's memory
 * (`crates/wasm`): the request is written there (method and headers, then
 * the body, and the lengths: `encode.ts`), so that one call carries a
 * request, and its answer is left there as UTF-8. Also the module's
 * `headerNames`, read once per verifier.
 */
import type { VerifyRequest } from '../types.js';
import { EMPTY, encodeHead, type Input } from './encode.js';
import { unexpected } from './failures.js';

// As wasm-bindgen's glue reads a string: a leading U+FEFF is kept.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The AgentArea verifier's input and answer, in its module's memory
 * (`crates/wasm`): the request is written and its answer read where the
 * verifier object says (`reserve`, then the three addresses at
 * `answerPtr`: the answer's, the input bytes', the input lengths'). The views are made again whenever the memory has grown
 * (a grown memory has a new buffer).
 */
export class WasmInput implements Input {
  readonly #glue: WasmInputGlue;
  readonly #memory: WebAssembly.Memory;
  /** The headers the check reads (`headerNames`). */
  readonly #read: readonly string[];
  #buffer: ArrayBuffer | undefined;
  #memoryBytes = EMPTY;
  #bytes = EMPTY;
  #lens = new Uint32Array(0);
  /** The answer's address, the input bytes', the input lengths'. */
  #places = new Uint32Array(3);
  #byteRoom = 0;
  #lensRoom = 0;
  /** The last answer's length in bytes. */
  answered = 0;

  constructor(glue: WasmInputGlue, memory: WebAssembly.Memory, read: readonly string[]) {
    this.#glue = glue;
    this.#memory = memory;
    this.#read = read;
  }

  bytes(n: number): Uint8Array {
    if (n > this.#byteRoom) this.#reserve(Math.max(n, this.#byteRoom * 2, 4096), this.#lensRoom);
    else if (this.#buffer !== this.#memory.buffer) this.#views();
    return this.#bytes;
  }

  lens(n: number): Uint32Array {
    if (n > this.#lensRoom) this.#reserve(this.#byteRoom, Math.max(n, this.#lensRoom * 2, 64));
    else if (this.#buffer !== this.#memory.buffer) this.#views();
    return this.#lens;
  }

  /** Writes the method and headers of `request`, then `body` after them; returns the byte count of the first, and how many lengths. */
  write(request: Pick<VerifyRequest, 'method' | 'headers'>, body: Uint8Array = EMPTY): [number, number] {
    const [n, count] = encodeHead(request.method, request.headers, this, this.#read);
    if (body.length > 0) this.bytes(n + body.length).set(body, n);
    return [n, count];
  }

  /** Writes `body` alone. */
  writeBody(body: Uint8Array): void {
    if (body.length > 0) this.bytes(body.length).set(body);
  }

  /**
   * Forgets the input, for a verifier object being freed: a later write
   * asks the freed object for room first, which throws (as the glue does
   * for any call on it) before a byte lands in memory it no longer owns.
   */
  close(): void {
    this.#byteRoom = 0;
    this.#lensRoom = 0;
    this.#bytes = EMPTY;
    this.#lens = new Uint32Array(0);
  }

  /** The answer the last call left, `length` bytes of UTF-8. */
  answer(length: number): string {
    if (this.#buffer !== this.#memory.buffer) this.#views();
    const at = this.#places[0] as number;
    this.answered = length;
    return decoder.decode(this.#memoryBytes.subarray(at, at + length));
  }

  #reserve(bytes: number, lens: number): void {
    this.#glue.reserve(bytes, lens);
    this.#byteRoom = bytes;
    this.#lensRoom = lens;
    this.#views();
  }

  #views(): void {
    const buffer = this.#memory.buffer;
    this.#buffer = buffer;
    this.#memoryBytes = new Uint8Array(buffer);
    this.#places = new Uint32Array(buffer, this.#glue.answerPtr, 3);
    const input = this.#places[1] as number;
    this.#bytes = this.#memoryBytes.subarray(input, input + this.#byteRoom);
    this.#lens = new Uint32Array(buffer, this.#places[2] as number, this.#lensRoom);
  }
}

/** What `WasmInput` asks of the verifier object (crates/wasm/src/lib.rs). */
export interface WasmInputGlue {
  reserve(bytes: number, lens: number): void;
  readonly answerPtr: number;
}

/**
 * The AgentArea verifier's `headerNames`: each name its check reads (the
 * core's `Verifier::read_headers`, the token header's last), an empty line, then each name to remove upstream, every name ending in a
 * newline. Returns the names read, and the removed ones as `Verdicts`
 * takes them.
 */
export function headerNames(text: string): [readonly string[], string] {
  const gap = text.indexOf('\n\n');
  if (gap < 0) throw unexpected();
  return [Object.freeze(text.slice(0, gap).split('\n')), text.slice(gap + 2, -1)];
}
