/**
 * The glue's answers: one string whose first character is a tag: `p`
 * pass, `b` + a ticket: read the body (headers only, `tickets.ts`), `u`
 * the ticket holds nothing (body only: verify the whole request), `a` +
 * the context as JSON (then, when the request had an id or headers follow,
 * a newline and the id's JSON text as the core holds it, empty without
 * one; then a newline, the lower-case name, a newline and the value of
 * each header the core decided to set upstream), `A` + the context as a
 * record (the AgentArea verifier's form of `a`: `record.ts`,
 * `crates/wasm/src/record.rs`), `c` + a ticket, the claim's `until` and
 * its `jti` on lines of their own (a shared replay store's claim, settled
 * by the glue's `settle`: `verifier.ts`), `r` + the refusal as JSON
 * (`status`, `code`, `reason`, `message`, `id`, `body`, each as the core
 * rendered it).
 */
import type { Accept, Pass, Reject, Upstream, VerifyResult } from '../types.js';
import { unexpected } from './failures.js';
import { readRecord } from './record.js';

/**
 * One verifier's verdicts as the glue renders them, with what goes upstream
 * (`upstream`, as the core decided): the names to remove, read once from
 * the glue's `removedHeaders`, and an accepted call's headers to set.
 */
export class Verdicts {
  /** Passed and accepted without headers to set: remove only. */
  readonly #none: Upstream;
  readonly #pass: Pass;

  constructor(removedHeaders: string) {
    const remove = Object.freeze(removedHeaders === '' ? [] : removedHeaders.split('\n'));
    this.#none = Object.freeze({ remove, set: Object.freeze([]) });
    this.#pass = Object.freeze({ outcome: 'pass', upstream: this.#none });
  }

  /** The lower-case names removed from every request that passes or is accepted. */
  get removed(): readonly string[] {
    return this.#none.remove;
  }

  /**
   * Reads the glue's tagged verdict: `p`, `a{context}[\n<id>[\n<name>\n<value>]...]`,
   * `A` + record or `r{refusal}`; `bytes` is its length in UTF-8 when known
   * (an ASCII record is then read without counting its chars).
   */
  decode(out: string, bytes?: number): VerifyResult {
    switch (out.charCodeAt(0)) {
      case 0x70: // p
        return this.#pass;
      case 0x61: {
        // a
        const nl = out.indexOf('\n');
        if (nl < 0) return { outcome: 'accept', context: JSON.parse(out.slice(1)), upstream: this.#none } satisfies Accept;
        // After the id line: name and value, in turn.
        const lines = out.slice(nl + 1).split('\n');
        const set: (readonly [string, string])[] = [];
        for (let i = 1; i + 1 < lines.length; i += 2) set.push(Object.freeze([lines[i] as string, lines[i + 1] as string] as const));
        const upstream = set.length === 0 ? this.#none : Object.freeze({ remove: this.#none.remove, set: Object.freeze(set) });
        return { outcome: 'accept', context: JSON.parse(out.slice(1, nl)), upstream } satisfies Accept;
      }
      case 0x41: // A
        return readRecord(out, this.#none, bytes === out.length);
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
        throw unexpected();
    }
  }
}
