/**
 * Gateway overhead benchmark: how much latency does searchgate add in front of an upstream?
 *
 * Separate processes on loopback (127.0.0.1 only):
 *   - this process: the load client (undici Pools, keep-alive connections);
 *   - an upstream child: a bare node:http server answering POST /v1/web-search with fixed, precomputed
 *     bytes in this contract's envelope (and, for the cache-hit comparison, a second bare server
 *     answering the gateway's own reply bytes);
 *   - a gateway child: createGateway() with one searchgate-compatible provider pointing at the
 *     upstream, logging 'silent', one auth key; cache disabled for the uncached scenarios, enabled
 *     for the cache-hit one;
 *   - a control child: the smallest possible Node proxy (node:http in, undici out, bytes passed
 *     through untouched). It shows what one extra loopback hop through Node costs on this machine,
 *     so that the gateway's own processing can be told apart from the hop.
 *
 * Scenarios, all in one run:
 *   1. uncached, sequential (1 client): per-request latency of client→upstream, client→proxy→upstream
 *      and client→gateway→upstream; median of rounds (each round: N requests per side after warm-up);
 *      p50 and p99, and the difference to direct (the llm-gateway-bench method);
 *   2. uncached, C concurrent clients: p50/p99 and requests/s of the same three paths;
 *   3. cache hit, C concurrent clients: the gateway answering X-Cache: HIT next to a bare node:http
 *      server answering the same bytes, and next to a minimal Koa app answering them (Koa's own cost,
 *      the ceiling for any gateway built on it).
 * Besides latency, each batch records the CPU time each server process spent per request (from
 * /proc, Linux only) and how much CPU other processes on the machine used meanwhile.
 *
 * Every loop is bounded in count and in time, and a watchdog ends the run if it overstays.
 *
 *   npm run bench                              # full run (~1.5 min)
 *   npm run bench -- --quick                   # smoke run (a few seconds; JSON under bench/results/quick.tmp/)
 *   npm run bench -- --profile                 # also write V8 CPU profiles of the gateway children,
 *                                              # taken while they are measured (startup left out);
 *                                              # figures are then slower: profiling costs CPU
 *   node dist/bench/cpuprofile-summary.js bench/results/cpuprofile.tmp/gateway-uncached.cpuprofile
 *   npm run bench -- --baseline-dist /tmp/before/dist   # also measure an earlier build in the same run
 *   node dist/bench/overhead.js --summarize a.json b.json c.json   # spread over repeated runs
 *
 * Flags: --rounds R (5) --n N (2000) --warmup W (1000) --concurrency C (64) --duration-ms D (4000)
 *        --concurrent-rounds K (3) --max-seconds S (170) --out FILE (bench/results/overhead.json)
 *        --profile [--profile-dir DIR (bench/results/cpuprofile.tmp)] --quick
 *        --baseline-dist DIR: a gateway from another build's dist/ (its bench/overhead.js starts it),
 *          measured beside this one on every path: before and after in one run, on the same machine load
 *        --baseline-launcher: the baseline gateway (this build, or --baseline-dist's) runs under the build's
 *          bin/searchgate-node, with the process settings `searchgate` runs under; the other under plain node
 *        --gateway-node-options='--perf-basic-prof' (extra node options for the gateway children, e.g. for
 *          `perf record -g -p <gateway pid>`, or --trace-gc)
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { nodeCommand } from './memory-common.js';

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

type ParentMessage = { type: 'serve-bytes'; body: string } | { type: 'stop' } | { type: 'profile-start' } | { type: 'profile-stop'; file: string };
type ChildMessage = { type: 'ready'; port: number; role: string } | { type: 'profiling' } | { type: 'profile-written' };

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

function listen(server: http.Server): Promise<number> {
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}

/** A bare node:http server: reads the request body, then answers the same precomputed bytes. */
function fixedServer(body: Buffer): http.Server {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };
  return http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== SEARCH_PATH) {
      res.writeHead(404).end();
      return;
    }
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, headers);
      res.end(body);
    });
  });
}

/** The control: the least a Node proxy can do — buffer the request, forward it, pass the reply bytes back. */
function passThroughProxy(upstreamUrl: string): { server: http.Server; pool: Pool } {
  const pool = new Pool(upstreamUrl, { connections: 256, pipelining: 1, keepAliveTimeout: 10_000 });
  const upstreamHeaders = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      pool
        .request({ path: SEARCH_PATH, method: 'POST', headers: upstreamHeaders, body: Buffer.concat(chunks) })
        .then(async (reply) => {
          const body = Buffer.from(await reply.body.arrayBuffer());
          res.writeHead(reply.statusCode, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) });
          res.end(body);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  return { server, pool };
}

function exitOnStop(onStop: () => Promise<unknown> | void) {
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

/**
 * The least a Koa app can do: read the body and answer the same bytes as JSON, with no router and no
 * work of its own. Its throughput next to the bare server's is the most any Koa-based gateway can reach.
 */
async function koaServer(body: Buffer): Promise<http.Server> {
  const { default: Koa } = await import('koa');
  const app = new Koa();
  app.use(
    (ctx) =>
      new Promise<void>((resolve) => {
        ctx.req.on('data', () => {});
        ctx.req.on('end', () => {
          ctx.set('Content-Type', 'application/json; charset=utf-8');
          ctx.body = body;
          resolve();
        });
      }),
  );
  return http.createServer(app.callback());
}

async function runUpstream() {
  const servers = [fixedServer(upstreamReplyBytes())];
  const port = await listen(servers[0]!);
  process.on('message', async (message: ParentMessage) => {
    if (message.type !== 'serve-bytes') return;
    const bytes = Buffer.from(message.body, 'utf8');
    const bare = fixedServer(bytes);
    const koa = await koaServer(bytes);
    servers.push(bare, koa);
    send({ type: 'ready', role: 'bare', port: await listen(bare) });
    send({ type: 'ready', role: 'koa', port: await listen(koa) });
  });
  exitOnStop(() => {
    for (const server of servers) server.closeAllConnections();
  });
  send({ type: 'ready', role: 'upstream', port });
}

async function runProxy(upstreamUrl: string) {
  const { server, pool } = passThroughProxy(upstreamUrl);
  const port = await listen(server);
  exitOnStop(() => {
    server.closeAllConnections();
    return pool.destroy();
  });
  send({ type: 'ready', role: 'proxy', port });
}

async function runGateway(upstreamUrl: string, cacheEnabled: boolean) {
  // Imported here so that the other processes never load the gateway's modules.
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
  exitOnStop(() => gateway.close(200));
  answerProfiling();
  send({ type: 'ready', role: cacheEnabled ? 'gateway-cached' : 'gateway-uncached', port: address.port });
}

/**
 * V8's CPU profiler, in this process, started and stopped by the client around the batches it
 * measures: the profile holds the requests, not the start-up (module loading, config, the model).
 */
function answerProfiling() {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'profile-start') {
      void (async () => {
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: 1000 });
        await post('Profiler.start');
        send({ type: 'profiling' });
      })();
    } else if (message.type === 'profile-stop') {
      void (async () => {
        const { profile } = await post('Profiler.stop');
        writeFileSync(message.file, JSON.stringify(profile));
        send({ type: 'profile-written' });
      })();
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Client side: processes and CPU accounting
// ---------------------------------------------------------------------------------------------------

interface Child {
  process: ChildProcess;
  pid: number;
  url: string;
  stop(): Promise<void>;
  waitFor(role: string): Promise<number>;
  /** Sends `message` and waits for the child's `reply`. */
  ask(message: ParentMessage, reply: ChildMessage['type']): Promise<void>;
}

const children = new Set<ChildProcess>();

/** A child running `module` (this script, or the same script of another build) in the given role. */
function startChild(args: string[], role: string, execArgv: string[] = [], module = SELF, execPath?: string): Promise<Child> {
  const child = fork(module, args, { execArgv, execPath, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
  const ask = (message: ParentMessage, reply: ChildMessage['type']) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${role} child did not answer ${message.type} within 30 s`)), 30_000);
      const onMessage = (answer: ChildMessage) => {
        if (answer.type !== reply) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve();
      };
      child.on('message', onMessage);
      child.send(message);
    });
  return waitFor(role).then((port) => ({ process: child, pid: child.pid!, url: `http://${HOST}:${port}`, stop, waitFor, ask }));
}

function killChildren() {
  for (const child of children) child.kill('SIGKILL');
}

/** Linux clock ticks (USER_HZ), as /proc reports CPU time. */
const TICK_MS = 10;

/** CPU time (user, system) a process has used so far, in ms; null where /proc is unavailable. */
function processCpu(pid: number): { userMs: number; sysMs: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { userMs: Number(fields[11]) * TICK_MS, sysMs: Number(fields[12]) * TICK_MS };
  } catch {
    return null;
  }
}

function processCpuMs(pid: number): number | null {
  const cpu = processCpu(pid);
  return cpu && cpu.userMs + cpu.sysMs;
}

/** CPU time the whole machine has spent busy so far (all CPUs), in ms; null where /proc is unavailable. */
function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * TICK_MS;
  } catch {
    return null;
  }
}

/** CPU used by the machine, by us (client + children) and by everyone else, over a stretch of time. */
function cpuMeter() {
  const ours = () => [process.pid, ...[...children].map((child) => child.pid!)].reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
  const start = { wall: performance.now(), machine: machineBusyMs(), ours: ours() };
  return () => {
    const wallMs = performance.now() - start.wall;
    const machine = machineBusyMs();
    if (machine === null || start.machine === null) return null;
    const busy = machine - start.machine;
    const bench = ours() - start.ours;
    return {
      wallMs: Math.round(wallMs),
      machineCores: round2(busy / wallMs),
      benchCores: round2(bench / wallMs),
      otherCores: round2(Math.max(0, busy - bench) / wallMs),
    };
  };
}

const round2 = (value: number) => Math.round(value * 100) / 100;

// ---------------------------------------------------------------------------------------------------
// Client side: measurement
// ---------------------------------------------------------------------------------------------------

interface Target {
  label: string;
  /** For progress lines and JSON keys. */
  key: string;
  origin: string;
  /** The process that answers the client (its CPU per request is recorded). */
  serverPid: number;
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
  /** CPU time (user + system) the answering process spent per request, in µs (null without /proc). */
  serverCpuUs: number | null;
  /** Of which in the kernel (system time): syscalls, loopback TCP. */
  serverSysUs: number | null;
  /** CPU time this client process spent per request, in µs. */
  clientCpuUs: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

const median = (values: number[]) => {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
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
 * `maxMs` passed, whichever comes first. Latency is measured per request on the client.
 */
async function load(pool: Pool, target: Target, workers: number, maxRequests: number, maxMs: number): Promise<Sample> {
  const latencies = new Float64Array(maxRequests);
  let issued = 0;
  let done = 0;
  let errors = 0;
  const serverCpuBefore = processCpu(target.serverPid);
  const clientCpuBefore = process.cpuUsage();
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
  const elapsedMs = performance.now() - started;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const serverCpuAfter = processCpu(target.serverPid);
  const sorted = latencies.slice(0, done).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: done,
    errors,
    elapsedMs,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: done ? sum / done : NaN,
    rps: done / (elapsedMs / 1000),
    serverCpuUs:
      serverCpuBefore && serverCpuAfter && done
        ? ((serverCpuAfter.userMs + serverCpuAfter.sysMs - serverCpuBefore.userMs - serverCpuBefore.sysMs) * 1000) / done
        : null,
    serverSysUs: serverCpuBefore && serverCpuAfter && done ? ((serverCpuAfter.sysMs - serverCpuBefore.sysMs) * 1000) / done : null,
    clientCpuUs: done ? (clientCpu.user + clientCpu.system) / done : NaN,
  };
}

function newPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
}

/** Checks that a target answers as expected before it is measured; returns the reply body. */
async function probe(target: Target): Promise<string> {
  const pool = newPool(target.origin, 1);
  try {
    const response = await pool.request({ path: SEARCH_PATH, method: 'POST', headers: REQUEST_HEADERS, body: REQUEST_BODY });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${target.label}: HTTP ${response.statusCode}: ${text.slice(0, 300)}`);
    if (target.expectCache !== undefined && response.headers['x-cache'] !== target.expectCache) {
      throw new Error(`${target.label}: X-Cache ${String(response.headers['x-cache'])}, expected ${target.expectCache}`);
    }
    const parsed = JSON.parse(text) as { code?: number; data?: { webPages?: { value?: unknown[] } } };
    if (parsed.code !== 200 || parsed.data?.webPages?.value?.length !== 10) {
      throw new Error(`${target.label}: unexpected reply ${text.slice(0, 300)}`);
    }
    return text;
  } finally {
    await pool.close();
  }
}

/** Median over rounds of each figure, per target. */
function summarizeRounds(targets: Target[], rounds: Array<Record<string, Sample>>) {
  return Object.fromEntries(
    targets.map((target) => {
      const of = (pick: (sample: Sample) => number | null) => median(rounds.map((round) => pick(round[target.key]!) ?? NaN));
      return [
        target.key,
        {
          label: target.label,
          p50: of((s) => s.p50),
          p99: of((s) => s.p99),
          mean: of((s) => s.mean),
          rps: of((s) => s.rps),
          serverCpuUs: of((s) => s.serverCpuUs),
          serverSysUs: of((s) => s.serverSysUs),
          clientCpuUs: of((s) => s.clientCpuUs),
          requests: rounds.reduce((sum, round) => sum + round[target.key]!.count, 0),
          errors: rounds.reduce((sum, round) => sum + round[target.key]!.errors, 0),
        },
      ];
    }),
  ) as Record<string, { label: string; p50: number; p99: number; mean: number; rps: number; serverCpuUs: number; serverSysUs: number; clientCpuUs: number; requests: number; errors: number }>;
}

/**
 * Rounds of batches, one batch per target per round; the order rotates every round so that slow
 * drift of the machine favours no side.
 */
async function rounds(
  targets: Target[],
  options: { rounds: number; workers: number; maxRequests: number; maxMs: number; warmupRequests: number; warmupMs: number },
  log: (line: string) => void,
  name: string,
) {
  const pools = new Map(targets.map((target) => [target.key, newPool(target.origin, options.workers)]));
  try {
    for (const target of targets) await load(pools.get(target.key)!, target, options.workers, options.warmupRequests, options.warmupMs);
    const results: Array<Record<string, Sample>> = [];
    for (let round = 0; round < options.rounds; round++) {
      const result: Record<string, Sample> = {};
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(i + round) % targets.length]!;
        result[target.key] = await load(pools.get(target.key)!, target, options.workers, options.maxRequests, options.maxMs);
      }
      results.push(result);
      log(
        `  ${name} round ${round + 1}: ` +
          targets
            .map((t) => {
              const s = result[t.key]!;
              return `${t.key} p50 ${ms(s.p50)} p99 ${ms(s.p99)} ms ${rps(s.rps)} req/s`;
            })
            .join(' | '),
      );
    }
    return { summary: summarizeRounds(targets, results), perRound: results };
  } finally {
    await Promise.all([...pools.values()].map((pool) => pool.close()));
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
  gatewayNodeOptions: string[];
  baselineDist: string | null;
  baselineLauncher: boolean;
  summarize: string[] | null;
}

function readOptions(): Options {
  const { values, positionals } = parseArgs({
    options: {
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
      'gateway-node-options': { type: 'string' },
      'baseline-dist': { type: 'string' },
      'baseline-launcher': { type: 'boolean', default: false },
      summarize: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  const quick = values.quick === true;
  const int = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer`);
    return parsed;
  };
  if (positionals.length > 0 && !values.summarize) throw new Error(`unexpected arguments: ${positionals.join(' ')}`);
  return {
    rounds: int(values.rounds, quick ? 2 : 5, 'rounds'),
    n: int(values.n, quick ? 200 : 2000, 'n'),
    warmup: int(values.warmup, quick ? 200 : 1000, 'warmup'),
    concurrency: int(values.concurrency, 64, 'concurrency'),
    durationMs: int(values['duration-ms'], quick ? 500 : 4000, 'duration-ms'),
    concurrentRounds: int(values['concurrent-rounds'], quick ? 1 : 3, 'concurrent-rounds'),
    maxSeconds: int(values['max-seconds'], values['baseline-dist'] || values['baseline-launcher'] ? 240 : 170, 'max-seconds'),
    out: resolve(values.out ?? (quick ? 'bench/results/quick.tmp/overhead.json' : 'bench/results/overhead.json')),
    profile: values.profile === true,
    profileDir: resolve(values['profile-dir'] ?? 'bench/results/cpuprofile.tmp'),
    gatewayNodeOptions: (values['gateway-node-options'] ?? '').split(/\s+/).filter(Boolean),
    baselineDist: values['baseline-dist'] ? resolve(values['baseline-dist']) : null,
    baselineLauncher: values['baseline-launcher'] === true,
    summarize: values.summarize ? positionals.map((file) => resolve(file)) : null,
  };
}

function machine() {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // not Linux
  }
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // not a checkout
  }
  return {
    nproc: os.availableParallelism(),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map(round2),
    commit,
  };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : 'n/a');
const rps = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const us = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const cpuCell = (sample: { serverCpuUs: number; serverSysUs: number }) => `${us(sample.serverCpuUs)} (${us(sample.serverSysUs)})`;
const signedMs = (value: number) => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${ms(value)}` : 'n/a');
const times = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');
const range = (values: number[], format: (value: number) => string) => {
  const finite = values.filter(Number.isFinite);
  return finite.length ? `${format(Math.min(...finite))} … ${format(Math.max(...finite))}` : 'n/a';
};

type Summary = ReturnType<typeof summarizeRounds>;
type PerRound = Array<Record<string, Sample>>;

/** Latency a path adds over the direct call: of the medians over rounds, and per round (the spread). */
function addedOverDirect(summary: Summary, perRound: PerRound, key: string) {
  const p50PerRound = perRound.map((round) => round[key]!.p50 - round.direct!.p50);
  const p99PerRound = perRound.map((round) => round[key]!.p99 - round.direct!.p99);
  return {
    p50: summary[key]!.p50 - summary.direct!.p50,
    p99: summary[key]!.p99 - summary.direct!.p99,
    p50PerRound,
    p99PerRound,
    /** Per round, then the median: robust to a round where one side was disturbed. */
    p50MedianOfRoundDeltas: median(p50PerRound),
  };
}

/** A server's cache-hit throughput over the bare server's: of the medians, and per round (both measured back to back). */
function throughputOverBare(summary: Summary, perRound: PerRound, key: string) {
  return { ratio: summary[key]!.rps / summary.bare!.rps, perRound: perRound.map((round) => round[key]!.rps / round.bare!.rps) };
}

/** os.loadavg() as `uptime` prints it, with the time it was read. */
const loadNow = () => ({ at: new Date().toISOString(), loadAverage: os.loadavg().map(round2) });

async function runClient() {
  const options = readOptions();
  if (options.summarize) return summarizeRuns(options.summarize);
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
  const loads: Record<string, ReturnType<typeof loadNow>> = { start: loadNow() };

  const nodeOptions = options.gatewayNodeOptions;
  if (options.profile) mkdirSync(options.profileDir, { recursive: true });
  /** The gateway child's CPU profiler, on around the batches measured, when --profile asks for it. */
  const startProfile = async (child: Child) => {
    if (options.profile) await child.ask({ type: 'profile-start' }, 'profiling');
  };
  const stopProfile = async (child: Child, name: string) => {
    if (!options.profile) return;
    const file = resolve(options.profileDir, `${name}.cpuprofile`);
    await child.ask({ type: 'profile-stop', file }, 'profile-written');
    log(`bench: CPU profile of the gateway: ${relative(process.cwd(), file)}`);
  };
  const baselineDist = options.baselineDist ?? (options.baselineLauncher ? resolve(dirname(SELF), '..') : null);
  const baselineModule = baselineDist && resolve(baselineDist, 'bench/overhead.js');
  const baselineExecPath = baselineDist && options.baselineLauncher ? nodeCommand(baselineDist).command : undefined;
  const startGateway = (cache: 'on' | 'off', module = SELF, execPath?: string) =>
    startChild(['--role', 'gateway', '--upstream', upstream.url, '--cache', cache], cache === 'on' ? 'gateway-cached' : 'gateway-uncached', nodeOptions, module, execPath);

  const upstream = await startChild(['--role', 'upstream'], 'upstream');
  const proxy = await startChild(['--role', 'proxy', '--upstream', upstream.url], 'proxy');
  const gateway = await startGateway('off');
  const baseline = baselineModule ? await startGateway('off', baselineModule, baselineExecPath) : null;

  const direct: Target = { key: 'direct', label: 'direct: client → upstream', origin: upstream.url, serverPid: upstream.pid };
  const viaProxy: Target = { key: 'proxy', label: 'control: client → bare Node proxy → upstream', origin: proxy.url, serverPid: proxy.pid };
  const viaGateway: Target = {
    key: 'gateway',
    label: 'client → searchgate → upstream',
    origin: gateway.url,
    serverPid: gateway.pid,
    expectCache: 'BYPASS',
  };
  const viaBaseline: Target | null = baseline && {
    key: 'baseline',
    label: 'client → searchgate, baseline build → upstream',
    origin: baseline.url,
    serverPid: baseline.pid,
    expectCache: 'BYPASS',
  };
  const uncachedTargets = [direct, viaProxy, viaGateway, ...(viaBaseline ? [viaBaseline] : [])];
  for (const target of uncachedTargets) await probe(target);
  const gatewayKeys = ['proxy', 'gateway', ...(viaBaseline ? ['baseline'] : [])];

  // The uncached profile covers both uncached phases, sequential and concurrent.
  await startProfile(gateway);

  // 1. Uncached, sequential: median of rounds.
  log(`bench: uncached sequential: ${options.rounds} rounds × ${options.n} requests per path (warm-up ${options.warmup})`);
  loads.sequential = loadNow();
  let meter = cpuMeter();
  const seq = await rounds(
    uncachedTargets,
    { rounds: options.rounds, workers: 1, maxRequests: options.n, maxMs: 20_000, warmupRequests: options.warmup, warmupMs: 20_000 },
    log,
    'sequential',
  );
  const seqCpu = meter();
  const sequential = {
    rounds: options.rounds,
    requestsPerRound: options.n,
    warmup: options.warmup,
    paths: seq.summary,
    added: Object.fromEntries(gatewayKeys.map((key) => [key, addedOverDirect(seq.summary, seq.perRound, key)])),
    cpu: seqCpu,
    perRound: seq.perRound,
  };

  // 2. Uncached, concurrent.
  log(`bench: uncached, ${options.concurrency} concurrent clients: ${options.concurrentRounds} rounds × ${options.durationMs} ms per path`);
  const concurrentOptions = {
    rounds: options.concurrentRounds,
    workers: options.concurrency,
    maxRequests: 1_000_000,
    maxMs: options.durationMs,
    warmupRequests: 1_000_000,
    warmupMs: Math.min(1000, options.durationMs),
  };
  loads.concurrent = loadNow();
  meter = cpuMeter();
  const conc = await rounds(uncachedTargets, concurrentOptions, log, 'uncached');
  const concurrent = { clients: options.concurrency, paths: conc.summary, cpu: meter(), perRound: conc.perRound };
  await stopProfile(gateway, 'gateway-uncached');
  await Promise.all([gateway.stop(), proxy.stop(), baseline?.stop()]);

  // 3. Cache hit, concurrent.
  log(`bench: cache hit, ${options.concurrency} concurrent clients: ${options.concurrentRounds} rounds × ${options.durationMs} ms per server`);
  const cachedGateway = await startGateway('on');
  const cachedBaseline = baselineModule ? await startGateway('on', baselineModule, baselineExecPath) : null;
  const hit: Target = { key: 'gatewayHit', label: 'searchgate, X-Cache: HIT', origin: cachedGateway.url, serverPid: cachedGateway.pid, expectCache: 'HIT' };
  const baselineHit: Target | null = cachedBaseline && {
    key: 'baselineHit',
    label: 'searchgate, baseline build, X-Cache: HIT',
    origin: cachedBaseline.url,
    serverPid: cachedBaseline.pid,
    expectCache: 'HIT',
  };
  await probe({ ...hit, expectCache: 'MISS' }); // fills the cache
  const hitBytes = await probe(hit);
  if (baselineHit) {
    await probe({ ...baselineHit, expectCache: 'MISS' });
    const baselineBytes = await probe(baselineHit);
    // The replies differ only in the log_id and the gateway's own port (in each result's id).
    const comparable = (text: string) => text.replace(/"log_id":"[0-9a-f]+"/, '').replaceAll(/127\.0\.0\.1:\d+/g, '');
    if (comparable(baselineBytes) !== comparable(hitBytes)) throw new Error('the baseline build answers different bytes');
  }
  upstream.process.send({ type: 'serve-bytes', body: hitBytes } satisfies ParentMessage);
  const bare: Target = {
    key: 'bare',
    label: 'bare node:http, same reply bytes',
    origin: `http://${HOST}:${await upstream.waitFor('bare')}`,
    serverPid: upstream.pid,
  };
  if ((await probe(bare)) !== hitBytes) throw new Error('the bare server does not answer the gateway reply bytes');
  const koa: Target = {
    key: 'koa',
    label: 'control: minimal Koa app, same reply bytes',
    origin: `http://${HOST}:${await upstream.waitFor('koa')}`,
    serverPid: upstream.pid,
  };
  if ((await probe(koa)) !== hitBytes) throw new Error('the Koa control does not answer the gateway reply bytes');
  loads.cacheHit = loadNow();
  meter = cpuMeter();
  await startProfile(cachedGateway);
  const cached = await rounds([bare, koa, hit, ...(baselineHit ? [baselineHit] : [])], concurrentOptions, log, 'cache-hit');
  await stopProfile(cachedGateway, 'gateway-cached');
  const hitKeys = ['koa', 'gatewayHit', ...(baselineHit ? ['baselineHit'] : [])];
  const cacheHit = {
    clients: options.concurrency,
    servers: cached.summary,
    throughputOverBare: Object.fromEntries(hitKeys.map((key) => [key, throughputOverBare(cached.summary, cached.perRound, key)])),
    cpu: meter(),
    perRound: cached.perRound,
  };
  await Promise.all([cachedGateway.stop(), cachedBaseline?.stop()]);
  await upstream.stop();
  loads.end = loadNow();

  const after = machine();
  const result = {
    benchmark: 'bench/overhead',
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
    command: `node dist/bench/overhead.js ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { ...before, loadAverageAfter: after.loadAverage, loads },
    setup: {
      processes: 'client (this process; undici Pool, keep-alive), upstream child, bare-proxy child, gateway child(ren); 127.0.0.1',
      request: { method: 'POST', path: SEARCH_PATH, body: REQUEST_BODY, headers: 'Authorization: Bearer <key>, Content-Type: application/json' },
      upstreamReplyBytes: upstreamReplyBytes().length,
      gatewayReplyBytes: Buffer.byteLength(hitBytes),
      gateway: { provider: 'searchgate-compatible', logging: 'silent', authKeys: 1, cache: { uncachedScenarios: false, cacheHitScenario: true } },
      baselineDist: options.baselineDist,
      baselineUnder: baselineExecPath ?? 'node',
      units: 'latency in ms; serverCpuUs/clientCpuUs: CPU µs per request; cpu.*Cores: average CPUs busy during the phase',
    },
    options: {
      ...options,
      out: relative(process.cwd(), options.out),
      profileDir: options.profile ? relative(process.cwd(), options.profileDir) : undefined,
    },
    sequential,
    concurrent,
    cacheHit,
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${report(result, options).join('\n')}\n`);
}

type Result = {
  startedAt: string;
  durationSeconds: number;
  machine: ReturnType<typeof machine> & { loadAverageAfter: number[]; loads?: Record<string, ReturnType<typeof loadNow>> };
  setup: { gatewayReplyBytes: number; baselineDist?: string | null };
  options: { rounds: number; n: number; warmup: number; concurrency: number; concurrentRounds: number; durationMs: number; profile: boolean; profileDir?: string; out: string };
  sequential: { paths: Summary; added: Record<string, ReturnType<typeof addedOverDirect>>; cpu: ReturnType<ReturnType<typeof cpuMeter>>; perRound: PerRound };
  concurrent: { paths: Summary; cpu: ReturnType<ReturnType<typeof cpuMeter>>; perRound: PerRound };
  cacheHit: { servers: Summary; throughputOverBare: Record<string, ReturnType<typeof throughputOverBare>>; cpu: ReturnType<ReturnType<typeof cpuMeter>> };
};

/** The run as Markdown: the figures the targets are about first, side by side as ratios, then every table. */
function report(result: Result, options: Pick<Options, 'rounds' | 'n' | 'warmup' | 'concurrency' | 'concurrentRounds' | 'durationMs' | 'profile' | 'profileDir'>) {
  const { machine: m, sequential: s, concurrent: c, cacheHit: h } = result;
  const sp = s.paths;
  const cp = c.paths;
  const hs = h.servers;
  const hasBaseline = 'baseline' in sp;
  const other = (cpu: ReturnType<ReturnType<typeof cpuMeter>>) => (cpu ? `${cpu.otherCores}` : 'n/a');
  const column = (key: string, hitKey: string) => [
    `${signedMs(s.added[key]!.p50)} (rounds ${range(s.added[key]!.p50PerRound, signedMs)})`,
    `${signedMs(s.added[key]!.p99)} (rounds ${range(s.added[key]!.p99PerRound, signedMs)})`,
    times(s.added[key]!.p50 / s.added.proxy!.p50),
    times(cp[key]!.serverCpuUs / cp.proxy!.serverCpuUs),
    hitKey ? `${times(h.throughputOverBare[hitKey]!.ratio)} (rounds ${range(h.throughputOverBare[hitKey]!.perRound, times)})` : '—',
  ];
  const gatewayColumn = column('gateway', 'gatewayHit');
  const baselineColumn = hasBaseline ? column('baseline', 'baselineHit') : [];
  const koaHit = h.throughputOverBare.koa;
  const proxyColumn = [
    `${signedMs(s.added.proxy!.p50)} (rounds ${range(s.added.proxy!.p50PerRound, signedMs)})`,
    `${signedMs(s.added.proxy!.p99)} (rounds ${range(s.added.proxy!.p99PerRound, signedMs)})`,
    '1.00×',
    '1.00×',
    koaHit ? `minimal Koa app: ${times(koaHit.ratio)} (rounds ${range(koaHit.perRound, times)})` : '—',
  ];
  const rows = [
    'added p50 over a direct call (sequential, ms)',
    'added p99 over a direct call (sequential, ms)',
    'added p50 ÷ the control proxy’s',
    'server CPU per request ÷ the control proxy’s (uncached, 64 clients)',
    'cache-hit throughput ÷ bare node:http (same bytes, 64 clients)',
  ];
  const targets = ['≤ +0.300', '', '', '', '≥ 0.50×'];
  const loads = m.loads ? Object.entries(m.loads).map(([phase, load]) => `${phase} ${load.loadAverage.join(' ')}`).join('; ') : '';
  const lines = [
    `### Gateway overhead — ${result.startedAt}`,
    '',
    `Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, commit ${m.commit ?? 'n/a'}. ` +
      `Load average (1, 5, 15 min): ${loads || `start ${m.loadAverage.join(' ')}, end ${m.loadAverageAfter.join(' ')}`}. ` +
      `CPUs used by other processes meanwhile: ${other(s.cpu)} (sequential), ${other(c.cpu)} (uncached concurrent), ${other(h.cpu)} (cache hit).` +
      (result.setup.baselineDist ? ` Baseline build: ${result.setup.baselineDist}.` : ''),
    '',
    `| | **searchgate**${hasBaseline ? ' | searchgate, baseline build' : ''} | controls: do-nothing Node proxy; minimal Koa app | target |`,
    `|---|---:|${hasBaseline ? '---:|' : ''}---:|---:|`,
    ...rows.map((row, i) => `| ${row} | **${gatewayColumn[i]}**${hasBaseline ? ` | ${baselineColumn[i]}` : ''} | ${proxyColumn[i]} | ${targets[i]} |`),
    '',
    `**Uncached, sequential** — 1 client, median of ${options.rounds} rounds × ${options.n} requests per path, after ${options.warmup} warm-up requests`,
    '',
    '| path | p50 (ms) | p99 (ms) | added p50 (ms) | added p99 (ms) | server CPU µs/req (kernel) |',
    '|---|---:|---:|---:|---:|---:|',
    `| ${sp.direct!.label} | ${ms(sp.direct!.p50)} | ${ms(sp.direct!.p99)} | — | — | ${cpuCell(sp.direct!)} (upstream) |`,
    ...['proxy', 'gateway', ...(hasBaseline ? ['baseline'] : [])].map((key) => {
      const bold = key === 'gateway' ? '**' : '';
      return `| ${bold}${sp[key]!.label}${bold} | ${ms(sp[key]!.p50)} | ${ms(sp[key]!.p99)} | ${bold}${signedMs(s.added[key]!.p50)}${bold} | ${bold}${signedMs(s.added[key]!.p99)}${bold} | ${cpuCell(sp[key]!)} |`;
    }),
    '',
    `**Uncached, ${options.concurrency} concurrent clients** — keep-alive, median of ${options.concurrentRounds} rounds × ${options.durationMs / 1000} s per path`,
    '',
    '| path | p50 (ms) | p99 (ms) | req/s | added p50 (ms) | server CPU µs/req (kernel) |',
    '|---|---:|---:|---:|---:|---:|',
    `| ${cp.direct!.label} | ${ms(cp.direct!.p50)} | ${ms(cp.direct!.p99)} | ${rps(cp.direct!.rps)} | — | ${cpuCell(cp.direct!)} |`,
    ...['proxy', 'gateway', ...(hasBaseline ? ['baseline'] : [])].map((key) => {
      const bold = key === 'gateway' ? '**' : '';
      return `| ${bold}${cp[key]!.label}${bold} | ${ms(cp[key]!.p50)} | ${ms(cp[key]!.p99)} | ${rps(cp[key]!.rps)} | ${signedMs(cp[key]!.p50 - cp.direct!.p50)} | ${cpuCell(cp[key]!)} |`;
    }),
    '',
    `**Cache hit, ${options.concurrency} concurrent clients** — same ${result.setup.gatewayReplyBytes}-byte reply; median of ${options.concurrentRounds} rounds × ${options.durationMs / 1000} s per server`,
    '',
    '| server | p50 (ms) | p99 (ms) | req/s | server CPU µs/req (kernel) |',
    '|---|---:|---:|---:|---:|',
    `| ${hs.bare!.label} | ${ms(hs.bare!.p50)} | ${ms(hs.bare!.p99)} | ${rps(hs.bare!.rps)} | ${cpuCell(hs.bare!)} |`,
    ...[...('koa' in hs ? ['koa'] : []), 'gatewayHit', ...(hasBaseline ? ['baselineHit'] : [])].map((key) => {
      const bold = key === 'gatewayHit' ? '**' : '';
      return `| ${bold}${hs[key]!.label}${bold} | ${ms(hs[key]!.p50)} | ${ms(hs[key]!.p99)} | ${rps(hs[key]!.rps)} (${times(h.throughputOverBare[key]!.ratio)} bare) | ${cpuCell(hs[key]!)} |`;
    }),
    '',
    `Errors: ${Object.values(sp).reduce((sum, path) => sum + path.errors, 0)} sequential, ` +
      `${Object.values(cp).reduce((sum, path) => sum + path.errors, 0)} uncached concurrent, ${Object.values(hs).reduce((sum, path) => sum + path.errors, 0)} cache hit. ` +
      `Run took ${result.durationSeconds} s. JSON: ${result.options.out}` +
      (options.profile ? `. CPU profiles of the gateway children: ${relative(process.cwd(), options.profileDir)}/` : ''),
  ];
  return lines;
}

/** The spread of the headline figures over several runs' JSON files (`--summarize a.json b.json …`). */
function summarizeRuns(files: string[]) {
  const runs = files.map((file) => ({ file: relative(process.cwd(), file), result: JSON.parse(readFileSync(file, 'utf8')) as Result }));
  const figures: Array<[string, (result: Result) => number, (value: number) => string]> = [
    ['searchgate: added p50 (ms)', (r) => r.sequential.added.gateway!.p50, signedMs],
    ['searchgate: added p99 (ms)', (r) => r.sequential.added.gateway!.p99, signedMs],
    ['control proxy: added p50 (ms)', (r) => r.sequential.added.proxy!.p50, signedMs],
    ['control proxy: added p99 (ms)', (r) => r.sequential.added.proxy!.p99, signedMs],
    ['searchgate ÷ control, added p50', (r) => r.sequential.added.gateway!.p50 / r.sequential.added.proxy!.p50, times],
    ['cache hit ÷ bare node:http, throughput', (r) => r.cacheHit.throughputOverBare.gatewayHit!.ratio, times],
    ['minimal Koa app ÷ bare node:http, throughput', (r) => r.cacheHit.throughputOverBare.koa?.ratio ?? NaN, times],
    ['bare node:http: requests/s', (r) => r.cacheHit.servers.bare!.rps, rps],
    ['cache hit: searchgate requests/s', (r) => r.cacheHit.servers.gatewayHit!.rps, rps],
    ['cache hit: searchgate CPU µs/req', (r) => r.cacheHit.servers.gatewayHit!.serverCpuUs, us],
    ['uncached, 64 clients: searchgate CPU µs/req', (r) => r.concurrent.paths.gateway!.serverCpuUs, us],
    ['uncached, 64 clients: control CPU µs/req', (r) => r.concurrent.paths.proxy!.serverCpuUs, us],
    ['baseline build: added p50 (ms)', (r) => r.sequential.added.baseline?.p50 ?? NaN, signedMs],
    ['baseline build: added p99 (ms)', (r) => r.sequential.added.baseline?.p99 ?? NaN, signedMs],
    ['baseline build: cache hit ÷ bare', (r) => r.cacheHit.throughputOverBare.baselineHit?.ratio ?? NaN, times],
    ['baseline build: cache hit CPU µs/req', (r) => r.cacheHit.servers.baselineHit?.serverCpuUs ?? NaN, us],
    ['load average (1 min) at start', (r) => r.machine.loadAverage[0]!, (v) => v.toFixed(2)],
    ['CPUs used by others, sequential', (r) => r.sequential.cpu?.otherCores ?? NaN, (v) => v.toFixed(2)],
    ['CPUs used by others, cache hit', (r) => r.cacheHit.cpu?.otherCores ?? NaN, (v) => v.toFixed(2)],
  ];
  const lines = [
    `| figure | ${runs.map((_run, i) => `run ${i + 1}`).join(' | ')} | median | min … max |`,
    `|---|${runs.map(() => '---:|').join('')}---:|---:|`,
  ];
  for (const [name, pick, format] of figures) {
    const values = runs.map(({ result }) => pick(result));
    if (values.every((value) => !Number.isFinite(value))) continue;
    lines.push(`| ${name} | ${values.map(format).join(' | ')} | ${format(median(values))} | ${range(values, format)} |`);
  }
  lines.push('', ...runs.map(({ file, result }, i) => `run ${i + 1}: ${file}, ${result.startedAt}, load ${result.machine.loadAverage.join(' ')}`));
  process.stdout.write(`${lines.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------------------

const roleArgs = parseArgs({
  options: { role: { type: 'string' }, upstream: { type: 'string' }, cache: { type: 'string' } },
  allowPositionals: true,
  strict: false,
}).values;

try {
  switch (roleArgs.role) {
    case 'upstream':
      await runUpstream();
      break;
    case 'proxy':
      await runProxy(String(roleArgs.upstream));
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
