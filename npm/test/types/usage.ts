// Type-level test: compiled with `tsc --noEmit -p test/types` against the
// BUILT declarations (the package imports itself by name through `exports`).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import express from 'express';
import { z } from 'zod';

import {
  authInfoFrom,
  contextFrom,
  createVerifier,
  memoryReplayStore,
  redisReplayStore,
  toolctx,
  ToolctxError,
  withToolctx,
  type ClaimAnswer,
  type RefusalReason,
  type ReplayGuard,
  type Upstream,
  upstreamHeaders,
  type ReplayStore,
  type ToolContext,
  type ToolctxErrorCode,
  type ToolctxIncomingMessage,
  type Verifier,
  type VerifyResult,
  type VerdictEvent,
  TELEMETRY,
} from 'toolctx';
import * as otel from '@opentelemetry/api';

const verifier: Verifier = createVerifier({
  instanceId: 'instance',
  secrets: [process.env['TOOLCTX_SECRET'] ?? ''],
  credential: { header: 'authorization', values: ['Bearer x'] },
  clockSkewSeconds: 30,
  protocolMajors: [1],
});

// The replay guard: in memory, in Redis (any client with sendCommand, or a function), or any store.
const inMemory: Verifier = createVerifier({ instanceId: 'i', secrets: ['s'], replayGuard: memoryReplayStore({ capacity: 1000 }) });
const redisClient = { sendCommand: async (args: string[]): Promise<unknown> => args.length };
const guards: ReplayGuard[] = [
  redisReplayStore(redisClient, { prefix: 'p:' }),
  redisReplayStore(async (args) => args[0]),
  { firstUse: async (jti: string, until: number, now: number) => jti.length > 0 && until > now },
];
const shared: Verifier = createVerifier({ instanceId: 'i', secrets: ['s'], replayGuard: guards[0] ?? null });
const store: ReplayStore = redisReplayStore(redisClient);
const later: Promise<VerifyResult> = shared.verifyAsync({ method: 'POST', body: '{}' });
const needsAwait: boolean = shared.verifiesAsync;
void [inMemory, store, later, needsAwait];
// @ts-expect-error a store needs firstUse
createVerifier({ instanceId: 'i', secrets: ['s'], replayGuard: { claim: async () => true } });

// What is forwarded upstream: context fields (typed), Tuix, other _meta members; the verdict says what.
const forwarding: Verifier = createVerifier({
  instanceId: 'i',
  secrets: ['s'],
  forward: { headers: { task_id: 'x-toolctx-task-id', metadata: 'x-toolctx-metadata' }, tuix: true, meta: { traceId: 'x-trace-id' } },
});
const removed: readonly string[] = forwarding.removedHeaders;
const forwarded = forwarding.verify({ method: 'POST', body: '{}' });
if (forwarded.outcome !== 'reject') {
  const up: Upstream = forwarded.upstream;
  const names: readonly string[] = up.remove;
  const set: ReadonlyArray<readonly [string, string]> = up.set;
  const outgoing: Headers = upstreamHeaders(new Headers(), up);
  void [names, set, outgoing];
}
const claim: ClaimAnswer = 'full';
const answering: ReplayStore = { firstUse: async () => claim };
void [removed, answering];
// @ts-expect-error not a context field
createVerifier({ instanceId: 'i', secrets: ['s'], forward: { headers: { task: 'x-task' } } });
// @ts-expect-error the AIVAX fields are the AIVAX verifier's
createVerifier({ instanceId: 'i', secrets: ['s'], forward: { headers: { external_user_id: 'x-user' } } });

// @ts-expect-error instanceId is required
createVerifier({ secrets: ['s'] });
// @ts-expect-error settings are camelCase
createVerifier({ instanceId: 'i', secrets: ['s'], clock_skew_s: 1 });

// The result is a discriminated union.
const result: VerifyResult = verifier.verify(
  { method: 'POST', headers: [['x-agentarea-context', 'a.b.c']], body: '{}' },
  { now: 1767225600 },
);
switch (result.outcome) {
  case 'pass':
    break;
  case 'accept': {
    const ctx: ToolContext = result.context;
    const key: string = ctx.idempotency_key;
    const agent: string | undefined = ctx.agent_id;
    const exp: number = ctx.exp;
    void [key, agent, exp];
    // @ts-expect-error an accept has no status
    void result.status;
    break;
  }
  case 'reject': {
    const status: number = result.status;
    const reason: RefusalReason = result.reason;
    const id: string | number | null = result.id;
    const body: string = result.body;
    void [status, reason, id, body];
    break;
  }
  default: {
    const never: never = result;
    void never;
  }
}

// Every header shape.
verifier.verify({ method: 'POST', headers: new Headers() });
verifier.verify({ method: 'POST', headers: { 'x-agentarea-context': ['a', 'b'], host: 'h' } });
verifier.verify({ method: 'POST', headers: ['x-agentarea-context', 'a'] });
verifier.verify({ method: 'POST', headers: [['x', new Uint8Array([1])]], body: new Uint8Array() });
// @ts-expect-error a body is bytes or a string
verifier.verify({ method: 'POST', body: 42 });

try {
  createVerifier({ instanceId: 'i', secrets: ['short'] });
} catch (e) {
  if (e instanceof ToolctxError) {
    const code: ToolctxErrorCode = e.code;
    if (code === 'secret_length') void code;
    // @ts-expect-error not a code
    if (code === 'secret_too_short') void code;
  }
}

// The MCP SDK: the context in a tool handler through `extra`.
const server = new McpServer({ name: 'types', version: '1.0.0' });
server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
  const ctx: ToolContext | undefined = contextFrom(extra);
  return { content: [{ type: 'text', text: `${text} ${ctx?.task_id ?? ''}` }] };
});

// node:http: the middleware and `transport.handleRequest(req, res, req.body)`.
const middleware = toolctx(verifier);
createServer((req: IncomingMessage, res: ServerResponse) => {
  middleware(req, res, async (err) => {
    if (err) return;
    const r = req as ToolctxIncomingMessage;
    const auth: AuthInfo | undefined = r.auth;
    void auth;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await transport.handleRequest(r, res, r.body);
  });
});

// Express.
const app = express();
app.post('/mcp', toolctx(verifier), (req, res) => {
  const ctx = contextFrom(req as ToolctxIncomingMessage);
  res.json({ task: ctx?.task_id });
});

// fetch-style handlers keep their extra arguments.
interface Env {
  TOOLCTX_SECRET: string;
}
const fetchHandler: (request: Request, env: Env) => Promise<Response> = withToolctx(
  verifier,
  async (request: Request, env: Env) => {
    void env;
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const authInfo: AuthInfo | undefined = authInfoFrom(request);
    return transport.handleRequest(request, { authInfo });
  },
);
void fetchHandler;

// The AIVAX profile: the same middleware and wrapper, its own context type.
import { aivaxContextFrom, tuixHeaders, type AivaxContext, type AivaxVerifier, type AivaxVerifyResult, type CallVerifier } from 'toolctx';
import { createAivaxVerifier, AivaxVerifier as AivaxVerifierClass } from 'toolctx/aivax';
import { canonicalJson, qualifiedToolName, serverLabel, tuixIdempotencyKey, type TuixKeyInput } from 'toolctx/conventions';
// @ts-expect-error the main entry does not load the conventions module
import { qualifiedToolName as notInMain } from 'toolctx';
// @ts-expect-error nor the AIVAX factory
import { createAivaxVerifier as notInMainEither } from 'toolctx';
void [notInMain, notInMainEither];

const aivax: AivaxVerifier = createAivaxVerifier({
  hookKey: process.env['AIVAX_HOOK_KEY'] ?? '',
  maxBcryptCost: 10,
  requireNonce: true,
  forward: { headers: { external_user_id: 'x-aivax-user' }, tuix: true },
});
// @ts-expect-error hookKey is required
createAivaxVerifier({ requireNonce: false });
// @ts-expect-error settings are camelCase
createAivaxVerifier({ hookKey: 'k', hook_key: 'k' });
const aivaxResult: AivaxVerifyResult = aivax.verify({ method: 'POST', headers: [], body: '{}' });
if (aivaxResult.outcome === 'accept') {
  const verified: boolean = aivaxResult.context.nonce_verified;
  const tenant: string | undefined = aivaxResult.context.metadata['tenant_id'];
  // @ts-expect-error an AIVAX context has no task_id
  void aivaxResult.context.task_id;
  void [verified, tenant];
} else if (aivaxResult.outcome === 'reject') {
  const reason: RefusalReason = aivaxResult.reason;
  void reason;
}
const asCall: CallVerifier<AivaxContext> = aivax;
const asCallToo: CallVerifier<ToolContext> = verifier;
void [asCall, asCallToo];
app.post('/aivax', toolctx(aivax, { tuixHeaders: true }), (req, res) => {
  const r = req as ToolctxIncomingMessage;
  const ctx: AivaxContext | undefined = r.aivax ?? aivaxContextFrom(r);
  res.json({ user: ctx?.external_user_id, headers: tuixHeaders(r.body) });
});
const aivaxFetch: (request: Request, env: Env) => Promise<Response> = withToolctx(
  aivax,
  async (request: Request, env: Env) => {
    void env;
    return new Response(aivaxContextFrom(request)?.call_source ?? '');
  },
  { tuixHeaders: true },
);
void aivaxFetch;

const toolName: string = qualifiedToolName('My GitHub!', 'create_issue');
const label: string = serverLabel('My GitHub!');
const tuixKey: string = tuixIdempotencyKey({ sessionId: 's', turn: 't', tool: 'x', arguments: { a: 1 } });
// @ts-expect-error the key needs a turn
tuixIdempotencyKey({ sessionId: 's', tool: 'x' });
const keyInput: TuixKeyInput = { sessionId: 's', turn: 't', tool: 'x' };
const replayReason: RefusalReason = 'token_replayed';
const storeDown: RefusalReason = 'internal_error';
const asyncCode: ToolctxErrorCode = 'replay_guard_async';
void [replayReason, storeDown, asyncCode];
const canonical: string = canonicalJson({ b: 1, a: [1.0] });
const sameClass: AivaxVerifierClass = aivax;
void [toolName, label, tuixKey, keyInput, canonical, sameClass];

// Telemetry: onVerdict on every entry point, the OpenTelemetry API passed in
// (workerd), `telemetry: false`; the event's reason is a RefusalReason.
const heard: VerdictEvent[] = [];
const onVerdict = (e: VerdictEvent): void => {
  heard.push(e);
  if (e.outcome === 'reject') {
    const why: RefusalReason | undefined = e.reason;
    const method: string | undefined = e.method;
    const tool: string | undefined = e.tool;
    console.warn(why, e.status, e.requestId, method, tool, e.peer, e.durationSeconds.toFixed(6));
  }
};
createVerifier({ instanceId: 'i', secrets: ['s'.repeat(32)], onVerdict, telemetry: false });
createAivaxVerifier({ hookKey: 'k', onVerdict, telemetry: otel });
toolctx(verifier, { onVerdict, telemetry: otel });
withToolctx(verifier, (r: Request) => new Response(r.url), { onVerdict, telemetry: true });
const counterName: 'toolctx.verdicts' = TELEMETRY.verdicts;
// @ts-expect-error telemetry is a boolean or the API
createVerifier({ instanceId: 'i', secrets: ['s'.repeat(32)], telemetry: 'yes' });
void counterName;
