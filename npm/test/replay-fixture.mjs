// A stateless Streamable HTTP MCP server (the real SDK, either line) behind
// the toolctx middleware or the fetch wrapper, with the replay guard on,
// wired as one cell of sdks.mjs. Used in-process by replay.test.mjs and as a
// separate process by replay-server.mjs.
import { acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import { z } from 'zod';

import { contextFrom, createVerifier } from 'toolctx';
import { CREDENTIAL, INSTANCE, SECRET } from './support.mjs';

/** The verifier the fixtures use, with `replayGuard` and any other options. */
export function replayVerifier(options) {
  return createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    credential: { header: 'authorization', values: [CREDENTIAL] },
    ...options,
  });
}

/**
 * The echo tool behind `verifier` (and the middleware's or the wrapper's
 * `options`), as the spec `start(cell, spec)` / `nodeServerOf(cell, spec)`
 * take; on node:http `GET /runs` answers how often the tool ran. Returns
 * the spec and what the tool saw.
 */
export function replayApp(verifier, options = {}) {
  const seen = { runs: 0, jtis: [] };
  const echo = async ({ text }, extra) => {
    seen.runs += 1;
    seen.jtis.push(contextFrom(extra)?.jti);
    return { content: [{ type: 'text', text }] };
  };
  // 2026-07-28's multi-round-trip call: the first round asks to confirm,
  // the round that carries the answer does the work (called in the modern
  // cells only).
  const confirm = async ({ text }, ctx) => {
    seen.rounds = (seen.rounds ?? 0) + 1;
    if (acceptedContent(ctx.mcpReq.inputResponses, 'ok')?.ok !== true) {
      const requestedSchema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
      return inputRequired({ inputRequests: { ok: inputRequired.elicit({ message: `send ${text}?`, requestedSchema }) } });
    }
    return echo({ text }, ctx);
  };
  const tools = [
    { name: 'echo', shape: { text: z.string() }, handler: echo },
    { name: 'confirm_echo', shape: { text: z.string() }, handler: confirm },
  ];
  return { seen, spec: { verifier, options, name: 'toolctx-replay', tools, seen } };
}

/**
 * A fetch for the SDK client that records the JSON-RPC id of every
 * `tools/call` it sends; `inner` sends it (the network, or a handler).
 */
export function recordingFetch(inner = fetch) {
  const ids = [];
  const fetchImpl = (url, init) => {
    if (typeof init?.body === 'string') {
      const message = JSON.parse(init.body);
      if (message.method === 'tools/call') ids.push(message.id);
    }
    return inner(url, init);
  };
  return { fetchImpl, ids };
}
