/**
 * Gateway overhead benchmark: how much latency does searchgate add in front of an upstream?
 *
 * Three separate processes on loopback (127.0.0.1 only):
 *   - this process: the load client (undici Pools, keep-alive);
 *   - an upstream child: a bare node:http server answering POST /v1/web-search with fixed, precomputed
 *     bytes in this contract's envelope (and, for the cache-hit comparison, a second bare server
 *     answering the gateway's own response bytes);
 *   - a gateway child: createGateway() with one searchgate-compatible provider pointing at the
 *     upstream, logging 'silent', one auth key; cache disabled for the uncached scenarios, enabled
 *     for the cache-hit one.
 *
 * Scenarios, all in one run:
 *   1. uncached, sequential (1 client): per-request latency, client→upstream vs client→gateway→upstream,
 *      median of rounds (each round: N requests after warm-up), p50 and p99, and the difference;
 *   2. uncached, C concurrent clients: p50/p99 and requests/s, direct vs via gateway;
 *   3. cache hit, C concurrent clients: requests/s of the gateway answering X-Cache: HIT next to a bare
 *      node:http server answering the same bytes.
 *
 * Every loop is bounded in count and in time, and a watchdog ends the run if it overstays.
 *
 *   npm run bench                              # full run (~1.5 min)
 *   npm run bench -- --quick                   # smoke run (a few seconds)
 *   npm run bench -- --profile                 # also write V8 CPU profiles of the gateway children
 *                                              # (figures are then slower: profiling costs CPU)
 *
 * Flags: --rounds R (5) --n N (2000) --warmup W (1000) --concurrency C (64) --duration-ms D (4000)
 *        --concurrent-rounds K (3) --max-seconds S (170) --out FILE (bench/results/overhead.json)
 *        --profile [--profile-dir DIR (bench/results/cpuprofile.tmp)] --quick
 */
import { fork, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const SELF = fileURLToPath(import.meta.url);
const HOST = '127.0.0.1';
const BENCH_KEY = 'sk-bench-0123456789abcdef';
const UPSTREAM_KEY = 'sk-upstream-bench-0123456789';
const SEARCH_PATH = '/v1/web-search';
const REQUEST_BODY = JSON.stringify({ query: 'searchgate overhead benchmark', count: 10 });
const REQUEST_HEADERS = {
  authorization: `Bearer ${BENCH_KEY}`,
  'content-type': 'application/json',
  accept: 'application/json',
};

// ---------------------------------------------------------------------------------------------------
// Child roles
// ---------------------------------------------------------------------------------------------------

type ParentMessage = { type: 'serve-bytes'; body: string } | { type: 'stop' };
type ChildMessage = { type: 'ready'; port: number; role: string };

function send(message: ChildMessage) {
  process.send!(message);
}

/** The upstream's reply: ten results in this contract's envelope, serialized once. */
function upstreamReplyBytes(): Buffer {
  const value = Array.from({ length: 10 }, (_, i) => ({
    name: `Benchmark result ${i + 1}: a page about searchgate overhead`,
    url: `https://example${i + 1}.com/articles/searchgate-overhead-${i + 1}`,
    snippet:
      `Result ${i + 1}. A fixed snippet of a realistic length, so that the gateway parses, normalizes and ` +
      'serializes about as much text as a real search reply carries. Nothing here changes between requests.',
    datePublished: `2025-0${(i % 9) + 1}-1${i % 10}T08:00:00Z`,
  }));
  return Buffer.from(
    JSON.stringify({
      code: 200,
      log_id: 'upstream-bench-log-id',
      msg: null,
      data: { _type: 'SearchResponse', webPages: { value } },
    }),
  );
}

/**
 * A bare node:http server: reads the request body, then answers the same precomputed bytes. POST
 * only, any path given in `paths` (or any path when empty).
 */
function startFixedServer(body: Buffer, paths: string[]): Promise<http.Server> {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || (paths.length > 0 && !paths.includes(req.url ?? ''))) {
      res.writeHead(404).end();
      return;
    }
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, headers);
      res.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve(server));
  });
}

function exitWhenOrphaned(onStop: () => Promise<void> | void) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(0), 3000);
    force.unref();
    try {
      await onStop();
    } finally {
      process.exit(0);
    }
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stop') void stop();
  });
  process.on('disconnect', () => void stop());
}

async function runUpstream() {
  const servers: http.Server[] = [await startFixedServer(upstreamReplyBytes(), [SEARCH_PATH])];
  process.on('message', async (message: ParentMessage) => {
    if (message.type !== 'serve-bytes') return;
    const bare = await startFixedServer(Buffer.from(message.body, 'utf8'), [SEARCH_PATH]);
    servers.push(bare);
    send({ type: 'ready', role: 'bare', port: (bare.address() as AddressInfo).port });
  });
  exitWhenOrphaned(() => {
    for (const server of servers) server.closeAllConnections();
  });
  send({ type: 'ready', role: 'upstream', port: (servers[0]!.address() as AddressInfo).port });
}

async function runGateway(upstreamUrl: string, cacheEnabled: boolean) {
  // Imported here so that the client and upstream processes never load the gateway's modules.
  const { resolveConfig } = await import('../src/config/load.js');
  const { createGateway } = await import('../src/server/app.js');
  const { createLogger } = await import('../src/server/logger.js');
  const config = resolveConfig(
    {
      server: { host: HOST, port: 0 },
      logging: { level: 'silent' },
      auth: { keys: [{ name: 'bench', key: BENCH_KEY }] },
      providers: { up: { type: 'searchgate-compatible', baseUrl: upstreamUrl, apiKey: UPSTREAM_KEY } },
      search: { chain: ['up'] },
      cache: { enabled: cacheEnabled },
    },
    {},
  );
  const gateway = createGateway({ config, logger: createLogger('silent') });
  const address = await gateway.listen(0, HOST);
  exitWhenOrphaned(() => gateway.close(200));
  send({ type: 'ready', role: cacheEnabled ? 'gateway-cached' : 'gateway-uncached', port: address.port });
}

// ---------------------------------------------------------------------------------------------------
// Client side: process management
// ---------------------------------------------------------------------------------------------------

interface Child {
  process: ChildProcess;
  port: number;
  url: string;
  stop(): Promise<void>;
  waitFor(role: string): Promise<number>;
}

const children = new Set<ChildProcess>();

function startChild(args: string[], role: string, execArgv: string[] = []): Promise<Child> {
  const child = fork(SELF, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const waiters = new Map<string, (port: number) => void>();
  const ready = new Map<string, number>();
  child.on('message', (message: ChildMessage) => {
    if (message.type !== 'ready') return;
    ready.set(message.role, message.port);
    waiters.get(message.role)?.(message.port);
  });
  const waitFor = (which: string) =>
    new Promise<number>((resolve, reject) => {
      const known = ready.get(which);
      if (known !== undefined) return resolve(known);
      const timer = setTimeout(() => reject(new Error(`${which} child did not start within 15 s`)), 15_000);
      child.once('exit', (code) => reject(new Error(`${which} child exited (code ${code}) before it was ready`)));
      waiters.set(which, (port) => {
        clearTimeout(timer);
        resolve(port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
      else child.kill('SIGTERM');
    });
  return waitFor(role).then((port) => ({ process: child, port, url: `http://${HOST}:${port}`, stop, waitFor }));
}

function killChildren() {
  for (const child of children) child.kill('SIGKILL');
}

// ---------------------------------------------------------------------------------------------------
// Client side: measurement
// ---------------------------------------------------------------------------------------------------

interface Target {
  label: string;
  /** For progress lines. */
  short: string;
  origin: string;
  /** X-Cache value every reply must carry (gateway targets only). */
  expectCache?: string;
}

interface Sample {
  count: number;
  errors: number;
  elapsedMs: number;
  p50: number;
  p99: number;
  mean: number;
  rps: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

function summarize(latencies: Float64Array, count: number, errors: number, elapsedMs: number): Sample {
  const sorted = latencies.slice(0, count).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count,
    errors,
    elapsedMs,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: count ? sum / count : NaN,
    rps: count / (elapsedMs / 1000),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One request, body read to the end; true when it was a 200 (with the expected X-Cache, if any). */
async function oneRequest(pool: Pool, target: Target): Promise<boolean> {
  const response = await pool.request({ path: SEARCH_PATH, method: 'POST', headers: REQUEST_HEADERS, body: REQUEST_BODY });
  await response.body.arrayBuffer();
  if (response.statusCode !== 200) return false;
  return target.expectCache === undefined || response.headers['x-cache'] === target.expectCache;
}

/**
 * `workers` loops issuing requests back to back on `pool`, until `maxRequests` were issued or
 * `maxMs` passed, whichever first. Latency is measured per request on the client.
 */
async function load(pool: Pool, target: Target, workers: number, maxRequests: number, maxMs: number): Promise<Sample> {
  const latencies = new Float64Array(maxRequests);
  let issued = 0;
  let done = 0;
  let errors = 0;
  const started = performance.now();
  const endAt = started + maxMs;
  const worker = async () => {
    while (issued < maxRequests && performance.now() < endAt) {
      issued++;
      const t0 = performance.now();
      let ok = false;
      try {
        ok = await oneRequest(pool, target);
      } catch {
        ok = false;
      }
      const t1 = performance.now();
      if (ok) latencies[done++] = t1 - t0;
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return summarize(latencies, done, errors, performance.now() - started);
}

function newPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
}

/** Checks a target answers as expected before it is measured; returns the reply body. */
async function probe(target: Target): Promise<string> {
  const pool = newPool(target.origin, 1);
  try {
    const response = await pool.request({ path: SEARCH_PATH, method: 'POST', headers: REQUEST_HEADERS, body: REQUEST_BODY });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${target.label}: HTTP ${response.statusCode}: ${text.slice(0, 300)}`);
    const parsed = JSON.parse(text) as { code?: number; data?: { webPages?: { value?: unknown[] } } };
    if (parsed.code !== 200 || parsed.data?.webPages?.value?.length !== 10) {
      throw new Error(`${target.label}: unexpected reply ${text.slice(0, 300)}`);
    }
    return text;
  } finally {
    await pool.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Client side: the run
// ---------------------------------------------------------------------------------------------------

interface Options {
  rounds: number;
  n: number;
  warmup: number;
  concurrency: number;
  durationMs: number;
  concurrentRounds: number;
  maxSeconds: number;
  out: string;
  profile: boolean;
  profileDir: string;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      role: { type: 'string' },
      rounds: { type: 'string' },
      n: { type: 'string' },
      warmup: { type: 'string' },
      concurrency: { type: 'string' },
      'duration-ms': { type: 'string' },
      'concurrent-rounds': { type: 'string' },
      'max-seconds': { type: 'string' },
      out: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'profile-dir': { type: 'string' },
      quick: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const quick = values.quick === true;
  const int = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer`);
    return parsed;
  };
  return {
    rounds: int(values.rounds, quick ? 2 : 5, 'rounds'),
    n: int(values.n, quick ? 200 : 2000, 'n'),
    warmup: int(values.warmup, quick ? 200 : 1000, 'warmup'),
    concurrency: int(values.concurrency, 64, 'concurrency'),
    durationMs: int(values['duration-ms'], quick ? 500 : 4000, 'duration-ms'),
    concurrentRounds: int(values['concurrent-rounds'], quick ? 1 : 3, 'concurrent-rounds'),
    maxSeconds: int(values['max-seconds'], 170, 'max-seconds'),
    out: resolve(values.out ?? (quick ? 'bench/results/quick.tmp/overhead.json' : 'bench/results/overhead.json')),
    profile: values.profile === true,
    profileDir: resolve(values['profile-dir'] ?? 'bench/results/cpuprofile.tmp'),
  };
}

function machine() {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  })();
  return {
    nproc: os.availableParallelism(),
    cpuModel,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((value) => Math.round(value * 100) / 100),
    commit,
  };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : 'n/a');
const rps = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const signedMs = (value: number) => `${value >= 0 ? '+' : ''}${ms(value)}`;

async function runClient() {
  const options = readOptions();
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: still running after ${options.maxSeconds} s; stopping\n`);
    killChildren();
    process.exit(2);
  }, options.maxSeconds * 1000);
  watchdog.unref();
  process.on('exit', killChildren);

  const startedAt = new Date();
  const before = machine();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(`bench: ${before.nproc} CPUs (${before.cpuModel}), Node ${before.node}, load ${before.loadAverage.join(' ')}`);

  const upstream = await startChild(['--role', 'upstream'], 'upstream');
  const profileArgs = (name: string) =>
    options.profile ? ['--cpu-prof', '--cpu-prof-dir', options.profileDir, '--cpu-prof-name', `${name}.cpuprofile`] : [];
  if (options.profile) mkdirSync(options.profileDir, { recursive: true });
  const gateway = await startChild(
    ['--role', 'gateway', '--upstream', upstream.url, '--cache', 'off'],
    'gateway-uncached',
    profileArgs('gateway-uncached'),
  );

  const direct: Target = { label: 'direct (client → upstream)', short: 'direct', origin: upstream.url };
  const viaGateway: Target = { label: 'via gateway (client → gateway → upstream)', short: 'gateway', origin: gateway.url, expectCache: 'BYPASS' };
  await probe(direct);
  await probe(viaGateway);

  // 1. Uncached, sequential: median of rounds.
  log(`bench: uncached sequential: ${options.rounds} rounds × ${options.n} requests (warm-up ${options.warmup})`);
  const seqPools = { direct: newPool(direct.origin, 1), gateway: newPool(viaGateway.origin, 1) };
  const seqBudgetMs = 20_000; // per batch; a batch that hits it is reported with fewer requests
  await load(seqPools.direct, direct, 1, options.warmup, seqBudgetMs);
  await load(seqPools.gateway, viaGateway, 1, options.warmup, seqBudgetMs);
  const seqRounds: Array<{ direct: Sample; gateway: Sample }> = [];
  for (let round = 0; round < options.rounds; round++) {
    // Alternate which side goes first, so that slow drift of the machine does not favour one side.
    const first = round % 2 === 0 ? 'direct' : 'gateway';
    const result = {} as { direct: Sample; gateway: Sample };
    for (const side of first === 'direct' ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const)) {
      result[side] = await load(seqPools[side], side === 'direct' ? direct : viaGateway, 1, options.n, seqBudgetMs);
    }
    seqRounds.push(result);
    log(
      `  round ${round + 1}: direct p50 ${ms(result.direct.p50)} p99 ${ms(result.direct.p99)} | ` +
        `gateway p50 ${ms(result.gateway.p50)} p99 ${ms(result.gateway.p99)} ms`,
    );
  }
  await Promise.all([seqPools.direct.close(), seqPools.gateway.close()]);
  const sequential = {
    rounds: options.rounds,
    requestsPerRound: options.n,
    warmup: options.warmup,
    direct: { p50: median(seqRounds.map((r) => r.direct.p50)), p99: median(seqRounds.map((r) => r.direct.p99)) },
    gateway: { p50: median(seqRounds.map((r) => r.gateway.p50)), p99: median(seqRounds.map((r) => r.gateway.p99)) },
    added: { p50: 0, p99: 0 },
    addedPerRound: seqRounds.map((r) => ({ p50: r.gateway.p50 - r.direct.p50, p99: r.gateway.p99 - r.direct.p99 })),
    errors: seqRounds.reduce((sum, r) => sum + r.direct.errors + r.gateway.errors, 0),
    perRound: seqRounds,
  };
  sequential.added = { p50: sequential.gateway.p50 - sequential.direct.p50, p99: sequential.gateway.p99 - sequential.direct.p99 };

  // 2 and 3. Concurrent: median of rounds of fixed duration (bounded by count too).
  const maxConcurrentRequests = 2_000_000;
  const concurrentPair = async (a: Target, b: Target, name: string) => {
    const pools = [newPool(a.origin, options.concurrency), newPool(b.origin, options.concurrency)] as const;
    const warmupMs = Math.min(1000, options.durationMs);
    await load(pools[0], a, options.concurrency, maxConcurrentRequests, warmupMs);
    await load(pools[1], b, options.concurrency, maxConcurrentRequests, warmupMs);
    const rounds: Array<[Sample, Sample]> = [];
    for (let round = 0; round < options.concurrentRounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const pair: Sample[] = [];
      for (const i of order) {
        pair[i] = await load(pools[i as 0 | 1], i === 0 ? a : b, options.concurrency, maxConcurrentRequests, options.durationMs);
      }
      rounds.push([pair[0]!, pair[1]!]);
      log(
        `  ${name} round ${round + 1}: ${a.short} ${rps(pair[0]!.rps)} req/s p50 ${ms(pair[0]!.p50)} p99 ${ms(pair[0]!.p99)} | ` +
          `${b.short} ${rps(pair[1]!.rps)} req/s p50 ${ms(pair[1]!.p50)} p99 ${ms(pair[1]!.p99)}`,
      );
    }
    await Promise.all(pools.map((pool) => pool.close()));
    const side = (i: 0 | 1) => ({
      p50: median(rounds.map((r) => r[i].p50)),
      p99: median(rounds.map((r) => r[i].p99)),
      rps: median(rounds.map((r) => r[i].rps)),
      requests: rounds.reduce((sum, r) => sum + r[i].count, 0),
      errors: rounds.reduce((sum, r) => sum + r[i].errors, 0),
    });
    return { baseline: side(0), gateway: side(1), perRound: rounds };
  };

  log(`bench: uncached, ${options.concurrency} concurrent clients: ${options.concurrentRounds} rounds × ${options.durationMs} ms per side`);
  const concurrent = await concurrentPair(direct, viaGateway, 'uncached');
  await gateway.stop();

  log(`bench: cache hit, ${options.concurrency} concurrent clients: ${options.concurrentRounds} rounds × ${options.durationMs} ms per side`);
  const cachedGateway = await startChild(
    ['--role', 'gateway', '--upstream', upstream.url, '--cache', 'on'],
    'gateway-cached',
    profileArgs('gateway-cached'),
  );
  const cacheTarget: Target = { label: 'gateway (X-Cache: HIT)', short: 'gateway-hit', origin: cachedGateway.url, expectCache: 'HIT' };
  await probe({ ...cacheTarget, expectCache: 'MISS' }); // fills the cache
  const hitBytes = await probe(cacheTarget);
  upstream.process.send({ type: 'serve-bytes', body: hitBytes } satisfies ParentMessage);
  const bare: Target = { label: 'bare node:http (same bytes)', short: 'bare', origin: `http://${HOST}:${await upstream.waitFor('bare')}` };
  const bareBytes = await probe(bare);
  if (bareBytes !== hitBytes) throw new Error('bare server does not answer the gateway reply bytes');
  const cacheHit = await concurrentPair(bare, cacheTarget, 'cache-hit');
  await cachedGateway.stop();
  await upstream.stop();

  const after = machine();
  const result = {
    benchmark: 'bench/overhead',
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
    command: `node dist/bench/overhead.js ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { ...before, loadAverageAfter: after.loadAverage },
    setup: {
      processes: 'client (this process, undici Pool keep-alive), gateway child, upstream child; loopback 127.0.0.1',
      request: { method: 'POST', path: SEARCH_PATH, body: REQUEST_BODY, authorization: 'Bearer <key>' },
      upstreamReplyBytes: upstreamReplyBytes().length,
      gatewayReplyBytes: Buffer.byteLength(hitBytes),
      gatewayConfig: { provider: 'searchgate-compatible', logging: 'silent', authKeys: 1, cacheUncached: false, cacheHit: true },
    },
    options: { ...options, out: undefined, profileDir: options.profile ? options.profileDir : undefined },
    sequential,
    concurrent: { clients: options.concurrency, ...concurrent },
    cacheHit: { clients: options.concurrency, ...cacheHit },
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);

  const c = concurrent;
  const h = cacheHit;
  const lines = [
    `### Gateway overhead — ${startedAt.toISOString()}`,
    '',
    `Machine: ${before.nproc} CPUs (${before.cpuModel}), ${before.memoryGiB} GiB, Node ${before.node}, ` +
      `load average ${before.loadAverage.join(' ')} (after: ${after.loadAverage.join(' ')})`,
    '',
    `**Uncached, sequential** (1 client, median of ${options.rounds} rounds × ${options.n} requests, ${options.warmup} warm-up)`,
    '',
    '| path | p50 (ms) | p99 (ms) |',
    '|---|---:|---:|',
    `| ${direct.label} | ${ms(sequential.direct.p50)} | ${ms(sequential.direct.p99)} |`,
    `| ${viaGateway.label} | ${ms(sequential.gateway.p50)} | ${ms(sequential.gateway.p99)} |`,
    `| **added by the gateway** | **${signedMs(sequential.added.p50)}** | **${signedMs(sequential.added.p99)}** |`,
    '',
    `**Uncached, ${options.concurrency} concurrent clients** (keep-alive, median of ${options.concurrentRounds} rounds × ${options.durationMs / 1000} s)`,
    '',
    '| path | p50 (ms) | p99 (ms) | req/s |',
    '|---|---:|---:|---:|',
    `| ${direct.label} | ${ms(c.baseline.p50)} | ${ms(c.baseline.p99)} | ${rps(c.baseline.rps)} |`,
    `| ${viaGateway.label} | ${ms(c.gateway.p50)} | ${ms(c.gateway.p99)} | ${rps(c.gateway.rps)} |`,
    `| **added / ratio** | **${signedMs(c.gateway.p50 - c.baseline.p50)}** | **${signedMs(c.gateway.p99 - c.baseline.p99)}** | ${(c.gateway.rps / c.baseline.rps).toFixed(2)}× |`,
    '',
    `**Cache hit, ${options.concurrency} concurrent clients** (same reply bytes, ${Buffer.byteLength(hitBytes)} B; median of ${options.concurrentRounds} rounds × ${options.durationMs / 1000} s)`,
    '',
    '| server | p50 (ms) | p99 (ms) | req/s |',
    '|---|---:|---:|---:|',
    `| ${bare.label} | ${ms(h.baseline.p50)} | ${ms(h.baseline.p99)} | ${rps(h.baseline.rps)} |`,
    `| ${cacheTarget.label} | ${ms(h.gateway.p50)} | ${ms(h.gateway.p99)} | ${rps(h.gateway.rps)} |`,
    `| **gateway / bare** | | | ${(h.gateway.rps / h.baseline.rps).toFixed(2)}× |`,
    '',
    `Errors: sequential ${sequential.errors}, uncached concurrent ${c.baseline.errors + c.gateway.errors}, cache hit ${h.baseline.errors + h.gateway.errors}. ` +
      `Run took ${result.durationSeconds} s. JSON: ${options.out}` +
      (options.profile ? `. CPU profiles of the gateway children: ${options.profileDir}` : ''),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  clearTimeout(watchdog);
}

// ---------------------------------------------------------------------------------------------------

const roleArgs = parseArgs({
  options: { role: { type: 'string' }, upstream: { type: 'string' }, cache: { type: 'string' } },
  strict: false,
}).values;

try {
  switch (roleArgs.role) {
    case 'upstream':
      await runUpstream();
      break;
    case 'gateway':
      await runGateway(String(roleArgs.upstream), roleArgs.cache === 'on');
      break;
    case undefined:
      await runClient();
      break;
    default:
      throw new Error(`unknown role ${String(roleArgs.role)}`);
  }
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
  killChildren();
  process.exit(1);
}
