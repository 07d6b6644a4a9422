/**
 * The MCP server end to end: the official SDK client over real HTTP against a real gateway, with the
 * local index and the real embedded reranker; answers compared with the HTTP API's for the same input.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openLocalIndex } from '../../src/local/index/index.js';
import { contentHash } from '../../src/local/ingest/indexed-page.js';
import type { IndexedPage } from '../../src/local/types.js';
import { metricValue } from '../helpers/faults.js';
import { REAL_LOCAL_RERANKER, TEST_KEY, startGateway, startUpstream, type RunningGateway } from '../helpers/gateway.js';

function page(url: string, title: string, text: string, datePublished: string | null = null): IndexedPage {
  return { url, canonicalUrl: url, title, text, datePublished, domain: new URL(url).hostname, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
}

async function localIndex(): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-mcp-index-'));
  const index = await openLocalIndex(directory);
  await index.upsert([
    page('https://paris.example/', 'Paris', 'Paris is the capital and largest city of France, on the Seine.', '2026-05-01T00:00:00.000Z'),
    page('https://lyon.example/', 'Lyon', 'Lyon is a city in France known for its cuisine and the capital of gastronomy.'),
    page('https://bananas.example/', 'Bananas', 'Bananas are rich in potassium, and France imports many.'),
  ]);
  await index.close();
  return directory;
}

async function setup(t: ExecutionContext, extra: Record<string, unknown> = {}) {
  const gateway = await startGateway({
    providers: { local: { type: 'local', directory: await localIndex() }, 'local-reranker': REAL_LOCAL_RERANKER },
    search: { chain: ['local'], rerank: { model: null } },
    ...extra,
  });
  t.teardown(() => gateway.close());
  return gateway;
}

async function connect(t: ExecutionContext, gateway: RunningGateway, key = TEST_KEY): Promise<Client> {
  const client = new Client({ name: 'searchgate-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  t.teardown(() => client.close());
  return client;
}

const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

test.serial('the SDK client lists both tools with descriptions and the API\'s input schemas', async (t) => {
  const gateway = await setup(t);
  const client = await connect(t, gateway);
  t.is(client.getServerVersion()?.name, 'searchgate');
  const { tools } = await client.listTools();
  t.deepEqual(tools.map((tool) => tool.name), ['web_search', 'rerank']);
  const [webSearch, rerank] = tools;
  t.regex(webSearch!.description!, /Search the web/);
  t.deepEqual(webSearch!.inputSchema.required, ['query']);
  t.deepEqual(Object.keys(webSearch!.inputSchema.properties!).sort(), ['contents', 'count', 'excludeDomains', 'freshness', 'includeDomains', 'language', 'query', 'summary']);
  t.regex((webSearch!.inputSchema.properties!.freshness as { description: string }).description, /oneWeek/);
  t.true(JSON.stringify(webSearch!.inputSchema.properties!.contents).includes('"format":{"type":"string","enum":["text","markdown"]'), 'an agent can ask for markdown');
  t.false(JSON.stringify(webSearch!.inputSchema).includes('$id'), 'no schema ids that some clients reject');
  t.deepEqual(rerank!.inputSchema.required, ['query', 'documents']);
  t.truthy(rerank!.outputSchema);
  t.deepEqual(
    tools.map(({ annotations }) => [annotations?.readOnlyHint, annotations?.openWorldHint]),
    [
      [true, true],
      [true, false],
    ],
    'web_search reaches the open web, rerank only reads what it is given',
  );
  // Strict JSON Schema validators refuse array-valued `type` (ajv without allowUnionTypes, among others).
  const strict = new Ajv2020({ strict: true, allowUnionTypes: false });
  for (const tool of tools) {
    for (const schema of [tool.inputSchema, tool.outputSchema]) {
      t.false(JSON.stringify(schema).includes('"type":['), `${tool.name}: no array-valued type`);
      t.notThrows(() => strict.compile(schema!), `${tool.name}: compiles in strict mode`);
    }
  }
});

test.serial('web_search on the local index answers what POST /v1/web-search answers, as structured content and as text', async (t) => {
  const gateway = await setup(t);
  const client = await connect(t, gateway);
  const input = { query: 'capital of France', count: 2, contents: { text: { max_characters: 30 } } };
  const result = (await client.callTool({ name: 'web_search', arguments: input })) as CallToolResult;
  t.falsy(result.isError, textOf(result));
  const api = (await (await gateway.post('/v1/web-search', input)).json()) as any;
  const structured = result.structuredContent as any;
  t.is(structured.query, 'capital of France');
  t.true(structured.results.length > 0);
  t.deepEqual(structured.results, api.data.webPages.value, 'the same result objects as the API');
  t.is(structured.totalEstimatedMatches, api.data.webPages.totalEstimatedMatches);
  const first = structured.results[0];
  t.is([...first.text].length <= 30, true, 'text truncated by code points, as the API does');
  const text = textOf(result);
  t.regex(text, /^2 results for "capital of France":/);
  t.true(text.includes(`1. ${first.name}\n   ${first.url}`));
  t.true(text.includes('Published: 2026-05-01'));
});

test.serial('rerank with the real embedded model answers what POST /v1/rerank answers', async (t) => {
  const gateway = await setup(t);
  const client = await connect(t, gateway);
  const input = {
    query: 'what is the capital of france',
    documents: ['Bananas are rich in potassium.', 'Berlin is the capital of Germany.', 'Paris is the capital and largest city of France.'],
    top_n: 2,
    return_documents: true,
  };
  const result = (await client.callTool({ name: 'rerank', arguments: input })) as CallToolResult;
  t.falsy(result.isError, textOf(result));
  const api = (await (await gateway.post('/v1/rerank', input)).json()) as any;
  const structured = result.structuredContent as any;
  t.deepEqual(structured, { model: api.model, results: api.results });
  t.is(structured.results[0].index, 2);
  t.true(structured.results[0].relevance_score > 0.5);
  t.regex(textOf(result), /^Ranked by .+, most relevant first:\n1\. document 2, score 0\.\d{3}: Paris is the capital/);
});

test.serial('validation errors come back as tool errors naming the problem, like the API\'s 400', async (t) => {
  const gateway = await setup(t);
  const client = await connect(t, gateway);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['web_search', { query: 'q', count: 51 }, '/v1/web-search'],
    ['web_search', { query: '' }, '/v1/web-search'],
    ['web_search', { query: 'q', freshness: '2026-02-30' }, '/v1/web-search'],
    ['web_search', { query: 'q', includeDomains: [' '] }, '/v1/web-search'],
    ['rerank', { query: 'q', documents: [] }, '/v1/rerank'],
  ];
  for (const [tool, input, path] of cases) {
    const result = (await client.callTool({ name: tool, arguments: input })) as CallToolResult;
    const api = (await (await gateway.post(path, input)).json()) as { message: string };
    t.true(result.isError, JSON.stringify(input));
    t.true(textOf(result).startsWith(`Error 400 (invalid arguments): ${api.message}`), textOf(result));
  }
  const unknown = (await client.callTool({ name: 'fetch_page', arguments: {} })) as CallToolResult;
  t.true(unknown.isError);
  t.regex(textOf(unknown), /unknown tool "fetch_page"; this server has web_search and rerank/);
  t.is(await metricValue(gateway, 'searchgate_mcp_tool_calls_total', { tool: 'web_search', status: '400' }), 4);
});

test.serial('401 at the transport without a key, with a bad key and with a deleted one is a JSON-RPC error naming the resource metadata; GET is 405', async (t) => {
  const gateway = await setup(t);
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
  const post = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });
  const { accounts } = gateway.gateway.services;
  const account = await accounts.store.createAccount({ name: 'mcp' }, Date.now());
  const { key, record } = await accounts.createKey(account.id, 'mcp');
  await accounts.store.deleteKey(record.id, Date.now());
  const metadataUrl = `${gateway.url}/.well-known/oauth-protected-resource/mcp`;
  for (const [headers, message, challenge] of [
    [{}, /missing Authorization header/, `Bearer realm="searchgate", resource_metadata="${metadataUrl}"`],
    [{ authorization: 'Bearer sk-not-a-key-000' }, /^invalid API key$/, `Bearer realm="searchgate", error="invalid_token", error_description="invalid API key", resource_metadata="${metadataUrl}"`],
    [{ authorization: `Bearer ${key}` }, /has been deleted/, undefined],
  ] as const) {
    const response = await post(headers);
    t.is(response.status, 401);
    const header = response.headers.get('www-authenticate')!;
    if (challenge) t.is(header, challenge);
    else t.regex(header, /^Bearer realm="searchgate", error="invalid_token", error_description="API key sg_[0-9a-f]{12}\.\.\. has been deleted; use another key of the account", resource_metadata="/);
    const body = (await response.json()) as { jsonrpc: string; id: null; error: { code: number; message: string; data: { status: number; log_id: string } } };
    t.is(body.jsonrpc, '2.0');
    t.is(body.id, null);
    t.is(body.error.code, -32001);
    t.is(body.error.data.status, 401);
    t.is(body.error.data.log_id, response.headers.get("x-log-id") ?? "");
    t.regex(body.error.message, message);
  }
  // RFC 9728: the metadata names this resource and how to present a key, at both well-known places.
  for (const url of [metadataUrl, `${gateway.url}/.well-known/oauth-protected-resource`]) {
    const metadata = (await (await fetch(url)).json()) as Record<string, unknown>;
    t.is(metadata.resource, `${gateway.url}/mcp`);
    t.deepEqual(metadata.bearer_methods_supported, ['header']);
  }
  await t.throwsAsync(connect(t, gateway, 'sk-not-a-key-000'), { message: /401|invalid API key|Unauthorized/i }, 'the SDK client fails to connect');
  const ok = await post({ authorization: `Bearer ${TEST_KEY}` });
  t.is(ok.status, 200);
  t.is(((await ok.json()) as any).result.serverInfo.name, 'searchgate');
  const get = await fetch(`${gateway.url}/mcp`, { headers: { authorization: `Bearer ${TEST_KEY}`, accept: 'text/event-stream' } });
  t.is(get.status, 405);
  t.is(get.headers.get('allow'), 'POST');
});

test.serial('tool calls draw on the same allowance as the API: charged once per call, then a 429 tool error', async (t) => {
  const gateway = await setup(t, { accounts: { defaults: { dailyAllowance: 3, ratePerSecond: 0, ratePerMinute: 0 } } });
  const { accounts } = gateway.gateway.services;
  const account = await accounts.store.createAccount({ name: 'agent' }, Date.now());
  const { key } = await accounts.createKey(account.id, 'agent');
  const client = await connect(t, gateway, key);
  await client.listTools();
  const first = (await client.callTool({ name: 'web_search', arguments: { query: 'paris' } })) as CallToolResult;
  t.falsy(first.isError, textOf(first));
  t.is((await gateway.post('/v1/web-search', { query: 'lyon' }, { authorization: `Bearer ${key}` })).headers.get('x-ratelimit-remaining'), '1', 'initialize and tools/list cost nothing');
  // A raw tools/call, to see the HTTP reply: it carries the allowance headers, as the API's replies do.
  const raw = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'bananas' } } }),
  });
  t.is(raw.status, 200);
  t.is(raw.headers.get('x-ratelimit-limit'), '3');
  t.is(raw.headers.get('x-ratelimit-remaining'), '0');
  t.falsy(((await raw.json()) as any).result.isError);
  const refused = (await client.callTool({ name: 'web_search', arguments: { query: 'seine' } })) as CallToolResult;
  t.true(refused.isError);
  t.regex(textOf(refused), /^Error 429 \(limit reached\): daily allowance exhausted: 3 of 3 units used today; it resets at .+\nRetry after \d+ s\./);
  const api = await gateway.post('/v1/web-search', { query: 'q' }, { authorization: `Bearer ${key}` });
  t.is(api.status, 429, 'and the API agrees');
  t.is(await metricValue(gateway, 'searchgate_mcp_tool_calls_total', { tool: 'web_search', status: '429' }), 1);
  t.is(await metricValue(gateway, 'searchgate_allowance_refusals_total', { limit: 'day' }), 2);
  const line = gateway.logLines.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'mcp tool call' && entry.status === 429);
  t.like(line, { tool: 'web_search', account: 'agent', key: key.slice(0, 15) });
  t.false(gateway.logLines.join('\n').includes(key.slice(16)), 'the key never reaches the log');
});

test.serial('a tool call past mcp.toolTimeoutMs is a 504 tool error well before the client gives up', async (t) => {
  const upstream = await startUpstream(async (_request, res) => {
    await new Promise((resolve) => setTimeout(resolve, 3000));
    if (!res.destroyed) res.end('{}');
  });
  t.teardown(() => upstream.close());
  const gateway = await setup(t, {
    providers: { slow: { type: 'searchgate-compatible', baseUrl: upstream.url, apiKey: 'sk-upstream-123456' }, 'local-reranker': REAL_LOCAL_RERANKER },
    search: { chain: ['slow'] },
    mcp: { toolTimeoutMs: 300 },
    retry: { retries: 0 },
  });
  const client = await connect(t, gateway);
  const started = performance.now();
  const result = (await client.callTool({ name: 'web_search', arguments: { query: 'slow' } })) as CallToolResult;
  const elapsed = performance.now() - started;
  t.true(result.isError);
  t.regex(textOf(result), /^Error 504 \(timed out\)/);
  t.true(elapsed < 2500, `answered after ${Math.round(elapsed)} ms`);
});
