// One tools/call through the official TypeScript client
// (@modelcontextprotocol/client, npm/'s dev dependency) pinned to protocol
// revision 2026-07-28, for tests/cross-language/redis.py:
//
//   node client.mjs URL TOKEN CALL_JSON
//
// CALL_JSON is {"name", "arguments", "_meta"}; TOKEN goes in
// X-AgentArea-Context on every request. Prints one JSON line:
// {"status", "wire": the JSON-RPC response to the tools/call as sent,
// "result": what the client made of it} or {"status", "wire", "error"} when
// the client refused it (a result without resultType, for one).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const npm = join(dirname(dirname(dirname(fileURLToPath(import.meta.url)))), 'npm');
const resolved = createRequire(join(npm, 'package.json')).resolve('@modelcontextprotocol/client');
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(resolved).href);

const REVISION = '2026-07-28';
const [url, token, callJson] = process.argv.slice(2);
const call = JSON.parse(callJson);

// The tools/call's response as it came over the wire (JSON or the SSE
// stream's message), read from a copy so the client reads its own.
let wire = null;
let status = 0;
async function recording(input, init) {
  const response = await fetch(input, init);
  const body = typeof init?.body === 'string' ? init.body : '';
  if (!body.includes('"tools/call"')) return response;
  status = response.status;
  const text = await response.clone().text();
  const messages = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim()).map((l) => JSON.parse(l.slice(5)))
    : text
      ? [JSON.parse(text)]
      : [];
  wire = messages.find((m) => 'result' in m || 'error' in m) ?? null;
  return response;
}

const client = new Client({ name: 'toolctx-cross-language', version: '1.0.0' }, { versionNegotiation: { mode: { pin: REVISION } } });
try {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-agentarea-context': token } }, fetch: recording }),
  );
  const result = await client.callTool({ name: call.name, arguments: call.arguments, _meta: call._meta });
  console.log(JSON.stringify({ status, wire, result }));
} catch (e) {
  console.log(JSON.stringify({ status, wire, error: String(e instanceof Error ? e.message : e) }));
} finally {
  await client.close().catch(() => {});
}
