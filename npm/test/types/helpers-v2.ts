// Type-level test of toolctx and toolctx/helpers with MCP SDK v2's real
// types (@modelcontextprotocol/server 2.4.0, @modelcontextprotocol/node
// 2.1.2): the v2 `ctx` must be assignable wherever SDK v1's `extra` is.
// Compiled with `tsc -p test/types/tsconfig.helpers.json` against the BUILT
// declarations.
import { createServer } from 'node:http';

import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import { aivaxContextFrom, authInfoFrom, contextFrom, createVerifier, toolctx, withToolctx, type ToolContext } from 'toolctx';
import {
  cancellable,
  checkResult,
  idempotent,
  jsonResult,
  progress,
  textResult,
  withLimits,
  type IdempotencyOutcome,
  type SdkV2Context,
  type ToolExtra,
} from 'toolctx/helpers';

// SDK v2's own context type is assignable to what the helpers take.
declare const ctx: ServerContext;
const asExtra: ToolExtra = ctx;
const asV2: SdkV2Context = ctx;
const context: ToolContext | undefined = contextFrom(ctx);
void [asExtra, asV2, context, aivaxContextFrom(ctx)];

function factory(): McpServer {
  const server = new McpServer({ name: 'types-v2', version: '1.0.0' });
  // The wrappers keep v2's argument and ctx types; results are CallToolResults.
  server.registerTool(
    'charge',
    { inputSchema: z.object({ orderId: z.string(), amount: z.number() }) },
    cancellable(
      idempotent(async ({ orderId, amount }, c) => {
        const report = progress(c);
        await report(1, 2, 'charging');
        const signal: AbortSignal = c.mcpReq.signal;
        void signal;
        const who = contextFrom(c)?.task_id;
        return jsonResult({ orderId, amount, who: who ?? null });
      }),
      { timeoutMs: 60_000 },
    ),
  );
  server.registerTool(
    'search',
    { inputSchema: z.object({ q: z.string() }) },
    withLimits(async ({ q }, c) => {
      void progress(c)(1, 1);
      return textResult(`results for ${q} (${contextFrom(c)?.task_id ?? 'no context'})`);
    }),
  );
  // Plain calls opted in explicitly.
  server.registerTool('plain', { inputSchema: z.object({}) }, idempotent(async () => textResult('ok'), { allowUnverified: true }));
  // @ts-expect-error no such argument
  server.registerTool('bad', { inputSchema: z.object({ q: z.string() }) }, cancellable(async ({ nope }) => textResult(String(nope))));
  return server;
}

const outcome: IdempotencyOutcome = 'unverified';
void [outcome, checkResult(textResult('x'))];

// The three wirings of issue 12, type-checked.
const verifier = createVerifier({ instanceId: 'i', secrets: ['s'] });
const handler = createMcpHandler(factory);
const nodeHandler = toNodeHandler(handler);
const middleware = toolctx(verifier);
createServer((req, res) => middleware(req, res, () => void nodeHandler(req, res, (req as { body?: unknown }).body)));
const fetchHandler = withToolctx(verifier, (request: Request) => handler.fetch(request, { authInfo: authInfoFrom(request) }));
void fetchHandler;

// @ts-expect-error the tool's arguments are not a context source
contextFrom({ orderId: 'x' });
