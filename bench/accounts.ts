/**
 * What authentication plus allowance accounting adds to a request, per account backend:
 *   - operator key from config (no store: the baseline),
 *   - embedded SQLite, synchronous=FULL (the default) and NORMAL,
 *   - PostgreSQL alone (daily ledger and rate windows in Postgres),
 *   - PostgreSQL with Redis (rate windows in Redis).
 *
 * Two measurements for each:
 *   1. in process: `authenticate(header)` + `ledger.consume(principal)`, exactly the two steps a
 *      request takes, timed one after another (latency) and with 64 in flight (throughput);
 *   2. over HTTP: sequential POST /v1/web-search answered from the response cache, once with an
 *      operator key and once with an account key, interleaved, so that the difference is what the
 *      account path adds end to end.
 * The rate windows are on (limits far above the load) so that their cost is counted too.
 *
 *   npm run bench:accounts                      # ~1 min; JSON in bench/results/accounts.json
 *   npm run bench:accounts -- --n 500 --out /tmp/a.json   # quick
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { resolveConfig } from '../src/config/load.js';
import { createGateway } from '../src/server/app.js';
import { createLogger } from '../src/server/logger.js';
import type { Services } from '../src/server/services.js';
import { PostgresStore } from '../src/state/postgres.js';
import { machineDescription } from './index-bench-common.js';
import { latencySummary, sampleLatency } from './latency.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '64' },
    out: { type: 'string', default: 'bench/results/accounts.json' },
  },
});
const N = Number(values.n);
const CONCURRENCY = Number(values.concurrency);
const POSTGRES_URL = process.env.SEARCHGATE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.SEARCHGATE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const OPERATOR_KEY = 'sk-bench-operator-0123456789';

const directory = mkdtempSync(join(os.tmpdir(), 'searchgate-bench-accounts-'));
const schema = `sg_bench_${randomBytes(4).toString('hex')}`;
const unlimited = { dailyAllowance: 1_000_000_000, ratePerSecond: 1_000_000_000, ratePerMinute: 1_000_000_000 };

const BACKENDS: Record<string, Record<string, unknown>> = {
  'embedded (synchronous=full)': { store: 'embedded', embedded: { path: join(directory, 'full.db'), synchronous: 'full' } },
  'embedded (synchronous=normal)': { store: 'embedded', embedded: { path: join(directory, 'normal.db'), synchronous: 'normal' } },
  'postgres': { store: 'postgres', postgres: { url: POSTGRES_URL, schema: `${schema}_pg` } },
  'postgres + redis': { store: 'postgres', postgres: { url: POSTGRES_URL, schema: `${schema}_redis` }, redis: { url: REDIS_URL, keyPrefix: schema } },
};

/** The two steps a request takes, timed alone. */
async function inProcess(services: Services, header: string) {
  const step = async () => {
    const principal = await services.authenticator.authenticate(header);
    await services.ledger.consume(principal, 'web-search');
  };
  const sequential = await sampleLatency(step, { count: N, warmUp: 500 });
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < N) await step();
  }));
  const cpu = process.cpuUsage(cpuBefore);
  const perSecond = Math.round(N / ((performance.now() - started) / 1000));
  // CPU of this process (gateway code and client drivers) per operation; the database's own is not in it.
  const gatewayCpuMsPerOp = Math.round(((cpu.user + cpu.system) / 1000 / N) * 1000) / 1000;
  return { sequential, [`concurrent${CONCURRENCY}PerSecond`]: perSecond, gatewayCpuMsPerOp };
}

/** Sequential requests answered from the cache, operator key and account key interleaved. */
async function overHttp(url: string, accountKey: string) {
  const body = JSON.stringify({ query: 'searchgate accounts benchmark' });
  const call = async (key: string) => {
    const started = performance.now();
    const response = await fetch(`${url}/v1/web-search`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 300; i++) await call(i % 2 ? OPERATOR_KEY : accountKey);
  const operator: number[] = [];
  const account: number[] = [];
  for (let i = 0; i < N / 2; i++) {
    operator.push(await call(OPERATOR_KEY));
    account.push(await call(accountKey));
  }
  const operatorSummary = latencySummary(operator);
  const accountSummary = latencySummary(account);
  return {
    operatorKey: operatorSummary,
    accountKey: accountSummary,
    addedP50Ms: Math.round((accountSummary.p50Ms - operatorSummary.p50Ms) * 1000) / 1000,
    addedP99Ms: Math.round((accountSummary.p99Ms - operatorSummary.p99Ms) * 1000) / 1000,
  };
}

async function measure(label: string, accounts: Record<string, unknown>) {
  // The upstream answers once; every measured request is a cache hit, so the account path is what varies.
  const upstream = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: 200, log_id: 'x', msg: null, data: { _type: 'SearchResponse', queryContext: { originalQuery: 'q' }, webPages: { webSearchUrl: '', totalEstimatedMatches: null, value: [], someResultsRemoved: false } } }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const config = resolveConfig(
    {
      auth: { keys: [{ name: 'operator', key: OPERATOR_KEY }] },
      logging: { level: 'silent' },
      providers: { upstream: { type: 'searchgate-compatible', baseUrl: upstreamUrl, apiKey: 'sk-upstream-0123456789' } },
      search: { chain: ['upstream'] },
      content: { chain: [] },
      accounts: { ...accounts, defaults: unlimited, touchIntervalSeconds: 60 },
    },
    {},
  );
  const gateway = createGateway({ config, logger: createLogger('silent') });
  const address = await gateway.listen(0, '127.0.0.1');
  const { accounts: service } = gateway.services;
  const account = await service.store.createAccount({ name: `bench-${randomBytes(3).toString('hex')}` }, Date.now());
  const { key } = await service.createKey(account.id, 'bench');
  try {
    const accountInProcess = await inProcess(gateway.services, `Bearer ${key}`);
    const operatorInProcess = await inProcess(gateway.services, `Bearer ${OPERATOR_KEY}`);
    const http = await overHttp(`http://127.0.0.1:${address.port}`, key);
    const result = { backend: label, inProcess: { operatorKey: operatorInProcess, accountKey: accountInProcess }, http };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    if (service.store instanceof PostgresStore) {
      await service.store.pool.query(`DROP SCHEMA IF EXISTS ${config.accounts.postgres.schema} CASCADE`);
    }
    await gateway.close(100);
    upstream.close();
  }
}

const results = [];
for (const [label, accounts] of Object.entries(BACKENDS)) results.push(await measure(label, accounts));
rmSync(directory, { recursive: true, force: true });
const report = {
  date: new Date().toISOString(),
  machine: { ...machineDescription(), sqliteDirectory: os.tmpdir() },
  n: N,
  concurrency: CONCURRENCY,
  results,
};
mkdirSync(dirname(values.out!), { recursive: true });
writeFileSync(values.out!, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${values.out}`);
