/**
 * How long an MCP tool call takes next to the same request on the HTTP API, on the paths the default
 * tool deadline (mcp.toolTimeoutMs, 4000 ms) is meant for: a cached answer, the local index, and the
 * embedded reranker. One gateway in this process, the official SDK client over loopback HTTP.
 *
 *   npm run bench:mcp                          # ~30 s; JSON in bench/results/mcp.json
 *   npm run bench:mcp -- --n 50 --out /tmp/m.json
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { resolveConfig } from '../src/config/load.js';
import { openLocalIndex } from '../src/local/index/index.js';
import { contentHash } from '../src/local/ingest/indexed-page.js';
import { createGateway } from '../src/server/app.js';
import { createLogger } from '../src/server/logger.js';
import { machineDescription } from './index-bench-common.js';
import { sampleLatency } from './latency.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '300' }, out: { type: 'string', default: 'bench/results/mcp.json' } } });
const N = Number(values.n);
const KEY = 'sk-bench-mcp-0123456789';
const MODEL = process.env.SEARCHGATE_TEST_MODEL_DIR ?? 'models/all-minilm-l6-v2';

const directory = mkdtempSync(join(os.tmpdir(), 'searchgate-bench-mcp-'));
const index = await openLocalIndex(join(directory, 'index'));
const topics = ['capital of France', 'potassium in bananas', 'river Seine', 'Lyon cuisine', 'HTTP semantics', 'TypeScript strict mode'];
await index.upsert(
  Array.from({ length: 600 }, (_, i) => {
    const text = `${topics[i % topics.length]} page ${i}: ${'words about the topic and related matters. '.repeat(20)}`;
    const url = `https://site${i % 40}.example/page/${i}`;
    return { url, canonicalUrl: url, title: `${topics[i % topics.length]} ${i}`, text, datePublished: null, domain: new URL(url).hostname, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
  }),
);
await index.close();

async function gatewayWith(cache: boolean) {
  const config = resolveConfig(
    {
      auth: { keys: [{ name: 'bench', key: KEY }] },
      logging: { level: 'silent' },
      providers: { local: { type: 'local', directory: join(directory, 'index') }, 'local-reranker': { type: 'local-reranker', model: MODEL } },
      search: { chain: ['local'], rerank: { model: null } },
      content: { chain: [] },
      cache: { enabled: cache },
      accounts: { embedded: { path: join(directory, `accounts-${cache}.db`) } },
    },
    {},
  );
  const gateway = createGateway({ config, logger: createLogger('silent') });
  const { port } = await gateway.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  return { gateway, url, client };
}

/** Both sides of a scenario are sampled alike: N timed calls after a short warm-up. */
const SAMPLING = { count: N, warmUp: 30 };

const DOCUMENTS = Array.from({ length: 10 }, (_, i) => `${topics[i % topics.length]}: a passage of about thirty words that a retrieval pipeline could hand to the reranker, number ${i}.`);
const scenarios: Record<string, { tool: string; args: (i: number) => Record<string, unknown>; path: string; cache: boolean }> = {
  'web_search, cached answer': { tool: 'web_search', args: () => ({ query: 'capital of France', count: 10 }), path: '/v1/web-search', cache: true },
  'web_search, local index (no cache)': { tool: 'web_search', args: (i) => ({ query: `${topics[i % topics.length]} ${i}`, count: 10 }), path: '/v1/web-search', cache: false },
  'rerank, 10 documents, embedded model (no cache)': { tool: 'rerank', args: (i) => ({ query: topics[i % topics.length], documents: DOCUMENTS }), path: '/v1/rerank', cache: false },
};

const results = [];
for (const cache of [true, false]) {
  const { gateway, url, client } = await gatewayWith(cache);
  for (const [label, scenario] of Object.entries(scenarios)) {
    if (scenario.cache !== cache) continue;
    const mcp = await sampleLatency(async (i) => {
      const result = await client.callTool({ name: scenario.tool, arguments: scenario.args(i) });
      if (result.isError) throw new Error(JSON.stringify(result.content));
    }, SAMPLING);
    const http = await sampleLatency(async (i) => {
      const response = await fetch(`${url}${scenario.path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(scenario.args(i)) });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`status ${response.status}`);
    }, SAMPLING);
    const row = { scenario: label, mcp, http };
    console.log(JSON.stringify(row));
    results.push(row);
  }
  await client.close();
  await gateway.close(100);
}
rmSync(directory, { recursive: true, force: true });
const report = { date: new Date().toISOString(), machine: machineDescription(), n: N, results };
mkdirSync(dirname(values.out!), { recursive: true });
writeFileSync(values.out!, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${values.out}`);
process.exit(0);
