// A stateless Streamable HTTP MCP server (the real SDK, either line) behind
// toolctx, with tools built on toolctx/helpers, wired as one cell of
// sdks.mjs. Used in-process by helpers.test.mjs and as a separate process by
// helpers-server.mjs.
import { acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import { z } from 'zod';

import { createVerifier } from 'toolctx';
import { cancellable, idempotent, jsonResult, noticeCancelled, progress } from 'toolctx/helpers';
import { sdks } from './sdks.mjs';
import { CREDENTIAL, INSTANCE, SECRET } from './support.mjs';

/**
 * The helpers' tools for `cell`'s SDK line and what they saw, as the spec
 * `start(cell, spec)` / `nodeServerOf(cell, spec)` take.
 * `store`: the idempotency store (default: the in-memory one);
 * `clock`: the progress helper's clock; `waitMs`: how long a duplicate waits;
 * `requireContext`: the verifier's (default true).
 */
export function helpersApp(cell, { store, clock, waitMs = 10_000, requireContext = true } = {}) {
  const seen = { runs: 0, cancelled: [], started: [] };
  const verifier = createVerifier({
    instanceId: INSTANCE,
    secrets: [SECRET],
    credential: { header: 'authorization', values: [CREDENTIAL] },
    requireContext,
  });

  // Wrapped once per process, not per request: the wrapper holds the store.
  const charge = cancellable(
    idempotent(
      async ({ orderId, amount, delayMs }) => {
        seen.runs += 1;
        const run = seen.runs;
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        // A result with a _meta of its own: a replay must carry it as sent.
        return { ...jsonResult({ orderId, amount, chargedBy: process.pid, run }), _meta: { 'example.com/receipt': { id: `r-${run}`, note: null } } };
      },
      { ...(store ? { store } : {}), waitMs },
    ),
  );
  // Safe to run for a caller without context: runs unguarded then.
  const note = idempotent(
    async ({ text }) => {
      seen.runs += 1;
      return jsonResult({ text, run: seen.runs });
    },
    { allowUnverified: true },
  );
  // SDK v2, 2026-07-28: asks the client to confirm (an input_required
  // result), charges on the round that carries the confirmation.
  const confirmCharge = idempotent(
    async ({ orderId, amount }, ctx) => {
      if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm')?.confirm !== true) {
        const requestedSchema = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] };
        return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `charge ${amount} for ${orderId}?`, requestedSchema }) } });
      }
      seen.runs += 1;
      return jsonResult({ orderId, amount, run: seen.runs });
    },
    { ...(store ? { store } : {}), waitMs },
  );
  const report = async ({ steps, stepMs }, extra) => {
    const send = progress(extra, clock ? { clock } : {});
    for (let i = 1; i <= steps; i++) {
      clock?.advance(stepMs);
      await send(i, steps, `step ${i}`);
    }
    return { content: [{ type: 'text', text: `sent ${send.sent} of ${steps}` }] };
  };
  const slow = cancellable(async ({ label }, extra) => {
    seen.started.push(label);
    const signal = cell.sdk.signal(extra);
    const reason = await new Promise((resolve) => {
      if (signal.aborted) resolve(signal.reason);
      signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
    });
    seen.cancelled.push({ label, reason });
    return { content: [{ type: 'text', text: 'stopped' }] };
  });

  const tools = [
    { name: 'charge', shape: { orderId: z.string(), amount: z.number(), delayMs: z.number().optional() }, handler: charge },
    { name: 'note', shape: { text: z.string() }, handler: note },
    { name: 'report', shape: { steps: z.number(), stepMs: z.number() }, handler: report },
    { name: 'slow', shape: { label: z.string() }, handler: slow },
  ];
  if (cell.sdk === sdks.v2) tools.push({ name: 'confirm_charge', shape: { orderId: z.string(), amount: z.number() }, handler: confirmCharge });
  // A notifications/cancelled arrives in its own POST, at another server instance.
  const onBody = (body, headers) => noticeCancelled(body, headers);
  return { seen, spec: { verifier, name: 'toolctx-helpers', tools, seen, onBody } };
}
