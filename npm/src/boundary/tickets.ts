/**
 * Headers, then body: `checkHeaders` answers `b<ticket>` and the glue
 * object keeps the core's proof with the method and headers it checked;
 * `verifyBody(ticket, body, ...)` goes on from step 2 on those. `Held` is
 * this side of it.
 */
import type { HeadersResult, VerifyRequest } from '../types.js';
import { toBytes } from './encode.js';
import { throughGlue } from './failures.js';
import type { Verdicts } from './verdicts.js';

/** What `Held` remembers of a `read_body` result: the glue's ticket and the request it was issued for. */
interface Ticket {
  readonly ticket: number;
  readonly method: string;
  readonly headers: VerifyRequest['headers'];
}

/**
 * One verifier's `read_body` results, each with the glue's ticket and the
 * method and headers object it was issued for. A `verify` given one of
 * them as `checked`, for that method and headers object, hands the glue
 * the ticket and the body alone (`verifyBody`): the glue checks them on
 * the headers it kept, from step 2. Anything else (no `checked`, another
 * verifier's, one used already, other headers, a ticket the glue no longer
 * holds) is verified whole, steps 0 and 1 included: the shortcut can only
 * skip checks that passed on these headers.
 */
export class Held {
  readonly #tickets = new WeakMap<object, Ticket>();
  readonly #verdicts: Verdicts;

  constructor(verdicts: Verdicts) {
    this.#verdicts = verdicts;
  }

  /** Reads `checkHeaders`' answer on `request`: `p`, `r{refusal}`, or `b<ticket>`, remembered. */
  headersResult(request: Pick<VerifyRequest, 'method' | 'headers'>, out: string): HeadersResult {
    if (out.charCodeAt(0) !== 0x62) return this.#verdicts.decode(out) as HeadersResult;
    const result: HeadersResult = Object.freeze({ outcome: 'read_body' });
    this.#tickets.set(result, { ticket: Number(out.slice(1)), method: request.method, headers: request.headers });
    return result;
  }

  /**
   * The glue's verdict on `request`: `onBody(ticket, body)` when
   * `request.checked` is one of this verifier's unused `read_body` results
   * for its method and headers, `onRequest` (the whole check) otherwise or
   * when the glue answers `u`.
   */
  verify(request: VerifyRequest, onBody: (ticket: number, body: Uint8Array) => string, onRequest: (body: Uint8Array) => string): string {
    const body = toBytes(request.body);
    const checked = request.checked;
    const held = typeof checked === 'object' && checked !== null ? this.#tickets.get(checked) : undefined;
    if (held !== undefined && held.method === request.method && held.headers === request.headers) {
      this.#tickets.delete(checked as object);
      const out = throughGlue(() => onBody(held.ticket, body));
      if (out !== 'u') return out;
    }
    return throughGlue(() => onRequest(body));
  }
}
