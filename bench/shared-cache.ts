/**
 * What the shared response cache (cache.backend: redis) costs and saves per request, next to the
 * memory backend: hits served from a replica's memory, the first hit on a replica for an answer
 * another replica loaded (read from Redis, parsed, the /v1 envelope serialized), and misses, with
 * Redis up and with Redis unreachable. Gateways in this process over loopback HTTP, one bare upstream
 * answering ten results (~5 kB), one request at a time, the scenarios interleaved round by round,
 * nearest-rank percentiles.
 *
 *   npm run bench:shared-cache                          # ~30 s; JSON in bench/results/shared-cache.json
 *   npm run bench:shared-cache -- --n 200 --out /tmp/s.json
 *
 * SEARCHGATE_BENCH_REDIS_URL points it at another Redis (default the local one); it uses a key prefix
 * of its own and deletes its keys at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { resolveConfig } from '../src/config/load.js';
import { createGateway } from '../src/server/app.js';
import { createLogger } from '../src/server/logger.js';
import { machineDescription, startWatchdog } from './index-bench-common.js';
import { latencySummary } from './latency.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '1000' }, out: { type: 'string', default: 'bench/results/shared-cache.json' } } });
const N = Number(values.n);
const KEY = 'sk-bench-cache-0123456789';
const REDIS_URL = process.env.SEARCHGATE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = `sgbench-${randomBytes(4).toString('hex')}`;
startWatchdog(300, 'shared-cache');

const upstreamBody = JSON.stringify({
  code: 200,
  log_id: 'upstream',
  msg: null,
  data: {
    _type: 'SearchResponse',
    webPages: {
      value: Array.from({ length: 10 }, (_, i) => ({ name: `Result ${i}`, url: `https://site${i}.example/page`, snippet: `${'A sentence of a snippet. '.repeat(16)}${i}` })),
    },
  },
});
const upstream = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(upstreamBody));
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

const directory = mkdtempSync(join(os.tmpdir(), 'searchgate-bench-cache-'));
async function gatewayWith(cache: Record<string, unknown>, accountsFile: string) {
  const config = resolveConfig(
    {
      auth: { keys: [{ name: 'bench', key: KEY }] },
      logging: { level: 'silent' },
      providers: { up: { type: 'searchgate-compatible', baseUrl: upstreamUrl, apiKey: 'upstream-key' } },
      search: { chain: ['up'], rerank: { model: null } },
      content: { chain: [] },
      cache: { enabled: true, ...cache },
      // Replicas of one deployment run one config: the same accounts file keeps their fingerprints equal.
      accounts: { embedded: { path: join(directory, accountsFile) } },
    },
    {},
  );
  const gateway = createGateway({ config, logger: createLogger('silent') });
  const { port } = await gateway.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  const search = async (query: string) => {
    const response = await fetch(`${url}/v1/web-search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, count: 10 }),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`status ${response.status}`);
    return response.headers.get('x-cache');
  };
  return { gateway, search };
}

const shared = { backend: 'redis', redis: { url: REDIS_URL, keyPrefix: KEY_PREFIX } };
const memory = await gatewayWith({ backend: 'memory' }, 'memory.db');
const replicaA = await gatewayWith(shared, 'replicas.db');
const replicaB = await gatewayWith(shared, 'replicas.db');
const unreachable = await gatewayWith({ backend: 'redis', redis: { url: 'redis://127.0.0.1:1', keyPrefix: KEY_PREFIX } }, 'unreachable.db');
const redis = new Redis(REDIS_URL);

const WARM_UP = 100;
async function expectStatus(replica: typeof memory, query: string, expected: string) {
  const status = await replica.search(query);
  if (status !== expected) throw new Error(`X-Cache ${status} for "${query}", expected ${expected}`);
}

/**
 * Each scenario times one request per round; the rounds interleave the scenarios, so that the load
 * this shared machine carries at any moment weighs on all of them alike. `prepare` runs untimed.
 */
const scenarios: Array<{ name: string; prepare?: (i: number) => Promise<void>; run: (i: number) => Promise<void> }> = [
  { name: 'memory backend: hit', run: () => expectStatus(memory, 'hot', 'HIT') },
  { name: "redis backend: hit in the replica's memory", run: () => expectStatus(replicaA, 'hot', 'HIT') },
  {
    name: 'redis backend: first hit on replica B of an answer A loaded (read from Redis)',
    async prepare(i) {
      await expectStatus(replicaA, `shared ${i}`, 'MISS');
      // A stores the answer without waiting for Redis: B asks once it is there.
      while ((await redis.keys(`${KEY_PREFIX}:*`)).length <= storedBefore(i)) await new Promise((resolve) => setTimeout(resolve, 1));
    },
    // Not a failure of the run: on a loaded machine a Redis read can overrun cache.redis.timeoutMs (50 ms), and B loads it itself.
    async run(i) {
      if ((await replicaB.search(`shared ${i}`)) !== 'HIT') sharedMisses++;
    },
  },
  { name: 'memory backend: miss (upstream call)', run: (i) => expectStatus(memory, `miss ${i}`, 'MISS') },
  { name: 'redis backend: miss (Redis read, upstream call, Redis write)', run: (i) => expectStatus(replicaA, `miss ${i}`, 'MISS') },
  { name: 'redis backend, Redis unreachable: miss', run: (i) => expectStatus(unreachable, `miss ${i}`, 'MISS') },
];

let sharedMisses = 0;
/** Keys A has stored before round i's shared answer: its 'hot' answer, then a shared and a miss answer per round. */
const storedBefore = (i: number) => 1 + 2 * i;

for (const replica of [memory, replicaA]) await expectStatus(replica, 'hot', 'MISS');
const samples = scenarios.map(() => [] as number[]);
for (let i = 0; i < WARM_UP + N; i++) {
  for (const [s, scenario] of scenarios.entries()) {
    await scenario.prepare?.(i);
    const started = performance.now();
    await scenario.run(i);
    if (i >= WARM_UP) samples[s]!.push(performance.now() - started);
  }
}
const results = scenarios.map((scenario, s) => ({ scenario: scenario.name, ...latencySummary(samples[s]!) }));
for (const row of results) console.log(JSON.stringify(row));
console.log(`B answered ${sharedMisses} of ${WARM_UP + N} shared answers itself (its Redis read failed or overran the deadline)`);

const keys = await redis.keys(`${KEY_PREFIX}:*`);
for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
await redis.quit();
for (const { gateway } of [memory, replicaA, replicaB, unreachable]) await gateway.close(100);
upstream.close();
rmSync(directory, { recursive: true, force: true });

const report = { date: new Date().toISOString(), machine: machineDescription(), n: N, sharedAnswersLoadedByB: sharedMisses, results };
mkdirSync(dirname(values.out!), { recursive: true });
writeFileSync(values.out!, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${values.out}`);
process.exit(0);
