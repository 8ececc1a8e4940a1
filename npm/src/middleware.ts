/**
 * Runs in Node: the middleware `toolctx(verifier)` for `node:http` and
 * Express. Exported by both entries (`node/index.ts`, `web/index.ts`,
 * through `api.ts`), but it reads a Node `IncomingMessage` and writes a
 * `ServerResponse`; fetch-style handlers use `fetch.ts` (`withToolctx`).
 * Only types are imported from `node:http`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { ToolctxError } from './errors.js';
import { authInfoWith } from './context.js';
import { describerOf, entryOptions, RECORDED, Recorder, type TelemetryOptions } from './telemetry.js';
import { requireTuix } from './tuix.js';
import type { AivaxContext, CallVerifier, Pass, Reject, ToolContext, ToolctxAuthInfo, Upstream } from './types.js';
import { applyUpstream, rememberUpstream } from './upstream.js';

/** What the middleware adds to the request. */
export interface ToolctxIncomingMessage extends IncomingMessage {
  /** The parsed JSON body, for `transport.handleRequest(req, res, req.body)`. */
  body?: unknown;
  /** The MCP SDK reads this and hands it to tool handlers as `extra.authInfo`. */
  auth?: ToolctxAuthInfo;
  /** The verified context, for handlers outside the MCP SDK. */
  toolctx?: ToolContext;
  /** The AIVAX context, with an `AivaxVerifier`. */
  aivax?: AivaxContext;
}

export type NextFunction = (err?: unknown) => void;

export interface MiddlewareOptions extends TelemetryOptions {
  /** The clock, in Unix seconds; defaults to `Math.floor(Date.now() / 1000)`. */
  now?: () => number;
  /**
   * @deprecated Create the verifier with `forward: { tuix: true }`: the
   * middleware applies what the verifier forwards (its `forward`) to every
   * request. `true` only checks that the verifier forwards the Tuix headers
   * and throws `config_invalid` when it does not.
   */
  tuixHeaders?: boolean;
}

/**
 * Middleware for `node:http` and Express: `(req, res, next)`.
 *
 * - Not a POST: `next()` at once, body untouched.
 * - The static credential is checked before the body is read.
 * - The body is read up to `maxBodyBytes`; at one byte more reading stops and
 *   the request is refused (`body_too_large`) without buffering the rest.
 * - A refusal is written exactly as the core rendered it (status,
 *   `content-type: application/json`, body) and `next` is not called.
 * - Otherwise `req.body` is the parsed JSON body and, for a verified
 *   `tools/call`, `req.auth.extra.toolctx` and `req.toolctx` hold the context;
 *   `transport.handleRequest(req, res, req.body)` works unchanged.
 * - What the verifier forwards (its `forward`: the verdict's `upstream`) is
 *   applied to `req.rawHeaders`, `req.headers` and `req.headersDistinct`
 *   before `next()`: every copy of a forwarded header the request arrived
 *   with is removed, in any letter case, then an accepted call's headers
 *   are set with the values the core encoded.
 *
 * Mount it before any body parser (`express.json()`), or give it the raw
 * bytes (`express.raw({ type: '*\/*' })`): a body already parsed into an
 * object cannot be verified byte for byte.
 */
export function toolctx<C>(
  verifier: CallVerifier<C>,
  options: MiddlewareOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: NextFunction) => void {
  const clock = options.now;
  const key = verifier.contextKey ?? 'toolctx';
  if (options.tuixHeaders === true) requireTuix(verifier);
  // Unset here: the verifier's `telemetry` and `onVerdict`.
  const recorder = new Recorder(entryOptions(options, verifier), 'middleware');
  const describe = describerOf(verifier);
  return function toolctxMiddleware(incoming, res, next) {
    const started = recorder.start();
    const req = incoming as ToolctxIncomingMessage;
    const method = req.method ?? '';
    const headers = req.rawHeaders;
    // `body`: the verdict is on the body read here (the core describes the request from it).
    const record = (result: Pass | { outcome: 'accept'; context: unknown } | Reject, body?: Uint8Array): void => {
      if (started === undefined) return;
      recorder.record(started, result, req.socket?.remoteAddress, body === undefined ? undefined : { method, body, describe });
    };
    let head;
    try {
      head = verifier.checkHeaders({ method, headers, [RECORDED]: true } as { method: string; headers: string[] });
    } catch (e) {
      next(e);
      return;
    }
    if (head.outcome === 'pass') {
      record(head);
      applyUpstream(req, head.upstream);
      next();
      return;
    }
    if (head.outcome === 'reject') {
      record(head);
      refuse(res, head, false);
      return;
    }
    const settle = (result: Pass | { outcome: 'accept'; context: C; upstream: Upstream } | Reject, body: Uint8Array, overLimit: boolean): void => {
      record(result, body);
      let parsed: unknown;
      try {
        if (result.outcome === 'reject') {
          refuse(res, result, overLimit);
          return;
        }
        // The core has read the body as strict JSON, so this parse cannot fail on a verified body.
        parsed = body.length === 0 ? undefined : JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
      } catch (e) {
        next(e);
        return;
      }
      req.body = parsed;
      if (result.outcome === 'accept') {
        req.auth = authInfoWith(req.auth, result.context, key);
        (req as unknown as Record<string, unknown>)[key] = result.context;
        rememberUpstream(parsed, result.upstream);
      }
      applyUpstream(req, result.upstream);
      next();
    };
    const decide = (body: Uint8Array, overLimit: boolean): void => {
      // `checked`: the core goes on from step 2 on the headers it checked.
      const request = { method, headers, body, checked: head, [RECORDED]: true };
      const when = clock ? { now: clock() } : undefined;
      let result;
      try {
        // A replay guard with a shared store: the verdict is awaited.
        result = verifier.verifiesAsync === true && verifier.verifyAsync ? verifier.verifyAsync(request, when) : verifier.verify(request, when);
      } catch (e) {
        next(e);
        return;
      }
      if (result instanceof Promise) result.then((r) => settle(r, body, overLimit), next);
      else settle(result, body, overLimit);
    };
    const given = req.body;
    if (given !== undefined) {
      if (given instanceof Uint8Array) decide(given, false);
      else if (typeof given === 'string') decide(Buffer.from(given, 'utf8'), false);
      else {
        next(
          new ToolctxError(
            'body_already_parsed',
            'req.body is already parsed: mount the toolctx middleware before express.json() or use express.raw()',
          ),
        );
      }
      return;
    }
    if (req.readableEnded) {
      // Something read the stream without leaving the bytes in req.body.
      next(new ToolctxError('body_already_parsed', 'the request body was already read: mount the toolctx middleware first'));
      return;
    }
    readLimited(req, verifier.maxBodyBytes, decide, next);
  };
}

/** Reads at most `limit + 1` bytes; stops reading at `limit + 1`. */
function readLimited(
  req: IncomingMessage,
  limit: number,
  done: (body: Uint8Array, overLimit: boolean) => void,
  fail: (err: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const cleanup = (): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
  };
  const finish = (overLimit: boolean): void => {
    if (finished) return;
    finished = true;
    cleanup();
    if (overLimit) req.pause();
    done(Buffer.concat(chunks, size), overLimit);
  };
  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const room = limit + 1 - size;
    if (bytes.length >= room) {
      chunks.push(bytes.subarray(0, room));
      size += room;
      finish(true);
      return;
    }
    chunks.push(bytes);
    size += bytes.length;
  };
  const onEnd = (): void => finish(false);
  const onError = (err: unknown): void => {
    if (finished) return;
    finished = true;
    cleanup();
    fail(err);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}

function refuse(res: ServerResponse, r: Reject, closeConnection: boolean): void {
  const body = Buffer.from(r.body, 'utf8');
  res.statusCode = r.status;
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', body.length);
  // The rest of an oversized body is not read: end the connection instead.
  if (closeConnection) res.setHeader('connection', 'close');
  res.end(body);
}
