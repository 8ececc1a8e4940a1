// A real stateless Streamable HTTP MCP server on 127.0.0.1 behind the
// toolctx middleware (node:http, Express) or the fetch wrapper, driven by a
// real SDK Client: every cell of sdks.mjs (SDK v1 and v2, each wiring, the
// 2025 and 2026-07-28 clients). Tokens are minted by hand with node:crypto
// (support.mjs), not with toolctx's own minting code. Imports the BUILT
// package (npm/dist).
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';

import { z } from 'zod';

import { contextFrom, createVerifier } from 'toolctx';
import { cells, refusedConnect, start } from './sdks.mjs';
import { CREDENTIAL, INSTANCE, SECRET, callContext, mint } from './support.mjs';

const MAX_BODY = 64 * 1024;

/** What the tool handler saw: proof it ran, and with what. */
const seen = [];

/** The tool, for `sdk`'s McpServer: `extra` is the SDK's own (v1's `extra`, v2's `ctx`). */
const tools = (sdk) => [
  {
    name: 'echo',
    description: 'echoes its input',
    shape: { text: z.string() },
    handler: async ({ text }, extra) => {
      const context = contextFrom(extra);
      seen.push({ text, context, progressToken: sdk.meta(extra)?.progressToken });
      return { content: [{ type: 'text', text: JSON.stringify({ text, task_id: context?.task_id ?? null }) }] };
    },
  },
];

const verifier = createVerifier({
  instanceId: INSTANCE,
  secrets: [SECRET],
  credential: { header: 'authorization', values: [CREDENTIAL] },
  maxBodyBytes: MAX_BODY,
});

/** A cell's server: its wiring around the echo tool, started. */
const serve = (cell) => start(cell, { verifier, name: 'toolctx-integration', tools: tools(cell.sdk) });

/** The cells served on a port (node:http, Express): the whole suite, raw HTTP included. */
function suite(cell) {
  describe(cell.label, () => {
    let front;
    let url;
    const connect = (u, headers) => cell.client.connect(u, headers, front.fetchImpl);
    before(async () => {
      front = await serve(cell);
      url = front.url;
    });
    after(() => front.close());

    test('a verified call reaches the tool with its context and _meta', async () => {
      const { ctx, token, meta } = callContext();
      const client = await connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': token });
      try {
        const before = seen.length;
        const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: meta });
        assert.equal(seen.length, before + 1);
        const call = seen.at(-1);
        assert.equal(call.text, 'hi');
        assert.equal(call.progressToken, 'progress-1');
        assert.equal(call.context.task_id, ctx.task_id);
        assert.equal(call.context.tool_call_id, ctx.tool_call_id);
        assert.equal(call.context.idempotency_key, ctx.idempotency_key);
        assert.equal(call.context.end_user_id, 'user-42');
        assert.equal(call.context.tool, 'echo');
        assert.equal(call.context.secret_index, 0);
        assert.deepEqual(JSON.parse(result.content[0].text), { text: 'hi', task_id: ctx.task_id });
        // tools/list is not this contract's business: it passes.
        const tools = await client.listTools();
        assert.deepEqual(tools.tools.map((t) => t.name), ['echo']);
      } finally {
        await client.close();
      }
    });

    test('refusals come back through the transport with their status and JSON-RPC error; the tool never runs', async () => {
      const before = seen.length;
      // 401 at step 1: without the static credential even `initialize` is
      // refused, before its body is read.
      const noCredential = await refusedConnect(cell.client, url, {}, front.fetchImpl);
      assert.equal(noCredential.status, 401);
      assert.deepEqual(noCredential.json, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'missing credential', data: { reason: 'credential_missing' } },
      });
      const cases = [
        // 401 at step 10: an expired token.
        { ...tokenCase(callContext({ iat: Math.floor(Date.now() / 1000) - 3600 })), want: [401, -32001, 'token_expired'] },
        // 401 at step 9: signed with another secret.
        { ...tokenCase(callContext(), 'x'.repeat(40)), want: [401, -32001, 'signature_invalid'] },
        // 403 at step 12: the token is for another tool.
        { ...tokenCase(callContext({ tool: 'delete_everything' })), want: [403, -32003, 'tool_mismatch'] },
        // 403 at step 14: _meta says another task.
        { ...tokenCase(callContext({ overrideMeta: { 'agentarea/task_id': 'someone-else' } })), want: [403, -32003, 'meta_mismatch'] },
        // 400 at step 11: a malformed context value in _meta.
        { ...tokenCase(callContext({ overrideMeta: { 'agentarea/end_user_id': '' } })), want: [400, -32602, 'context_malformed'] },
      ];
      for (const c of cases) {
        const client = await connect(url, c.headers);
        try {
          const { status, json } = await client.refused({ name: 'echo', arguments: { text: 'no' }, _meta: c.meta });
          assert.equal(status, c.want[0], JSON.stringify(json));
          assert.equal(json.jsonrpc, '2.0');
          assert.equal(json.error.code, c.want[1]);
          assert.equal(json.error.data.reason, c.want[2]);
          assert.equal(typeof json.error.message, 'string');
          assert.equal(typeof json.id, 'number');
        } finally {
          await client.close();
        }
      }
      assert.equal(seen.length, before, 'the tool ran for a refused call');
    });

    test('a JSON-RPC batch containing tools/call is refused', async () => {
      const before = seen.length;
      const { token, meta } = callContext();
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: CREDENTIAL,
          'x-agentarea-context': token,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: meta } },
        ]),
      });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('content-type'), 'application/json');
      const json = await res.json();
      assert.equal(json.id, null);
      assert.equal(json.error.code, -32600);
      assert.equal(json.error.data.reason, 'batch_with_tools_call');
      assert.equal(seen.length, before);
    });

    test('a token header sent twice is token_duplicated', async () => {
      const { token, meta } = callContext();
      const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: meta } });
      const { status, json } = await rawPost(url, {
        authorization: CREDENTIAL,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agentarea-context': [token, token], // two header lines
      }, body);
      assert.equal(status, 401);
      assert.equal(json.id, 9);
      assert.equal(json.error.data.reason, 'token_duplicated');
    });

    test('a body over the limit is refused with 413 without reading it all', async () => {
      const { token } = callContext();
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(MAX_BODY * 4) } } });
      const { status, json } = await rawPost(url, {
        authorization: CREDENTIAL,
        'content-type': 'application/json',
        'x-agentarea-context': token,
      }, body);
      assert.equal(status, 413);
      assert.equal(json.id, null);
      assert.equal(json.error.data.reason, 'body_too_large');
    });
  });
}

function tokenCase({ token, meta }, secret) {
  const t = secret ? mint(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()), secret) : token;
  return { headers: { authorization: CREDENTIAL, 'x-agentarea-context': t }, meta };
}

/** A POST through node:http; an array value sends one header line per element. */
function rawPost(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (e) {
          reject(e);
        }
      });
    });
    // The server may answer and close before the whole body is sent.
    req.on('error', (e) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    req.end(body);
  });
}

/** The cells behind the fetch wrapper, called in process through the client's `fetch` option. */
function fetchSuite(cell) {
  describe(cell.label, () => {
    let front;
    let handler;
    let url; // never dialled: the client's fetch calls the handler directly
    const connect = (u, headers) => cell.client.connect(u, headers, front.fetchImpl);
    before(async () => {
      front = await serve(cell);
      ({ handler, url } = front);
    });
    after(() => front.close());

    test('a verified call reaches the tool with its context', async () => {
      const { ctx, token, meta } = callContext();
      const client = await connect(url, { authorization: CREDENTIAL, 'x-agentarea-context': token });
      try {
        await client.callTool({ name: 'echo', arguments: { text: 'web' }, _meta: meta });
        const call = seen.at(-1);
        assert.equal(call.text, 'web');
        assert.equal(call.context.task_id, ctx.task_id);
      } finally {
        await client.close();
      }
    });

    test('a refusal is answered before the inner handler', async () => {
      const before = seen.length;
      const { meta } = callContext();
      const client = await connect(url, { authorization: CREDENTIAL });
      try {
        const { status, json } = await client.refused({ name: 'echo', arguments: { text: 'x' }, _meta: meta });
        assert.equal(status, 401);
        assert.equal(json.error.data.reason, 'token_missing');
      } finally {
        await client.close();
      }
      assert.equal(seen.length, before);
    });

    test('Headers joins a repeated token header; it still counts as two', async () => {
      const { token, meta } = callContext();
      const headers = new Headers({ authorization: CREDENTIAL, 'content-type': 'application/json' });
      headers.append('x-agentarea-context', token);
      headers.append('x-agentarea-context', token);
      const res = await handler(
        new Request(url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', _meta: meta } }),
        }),
      );
      assert.equal(res.status, 401);
      const json = await res.json();
      assert.equal(json.id, 'a');
      assert.equal(json.error.data.reason, 'token_duplicated');
    });
  });
}

for (const cell of cells) (cell.wiring.kind === 'node' ? suite : fetchSuite)(cell);
