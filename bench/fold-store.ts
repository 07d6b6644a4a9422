/**
 * The fold (`LocalIndex.fold`, LanceDB's optimize()) on an S3-compatible store (issue 20): its time
 * and the store requests it makes, at a few index sizes and numbers of distinct hosts, so that the
 * growth shows. The store is moto's server (`moto[server]` from PyPI) on 127.0.0.1, started by the
 * bench; a counting HTTP proxy in front of it tallies each request by method and by the kind of file
 * it reads, and can add a fixed delay per request to stand in for a remote store's round trip.
 *
 * Per run (pages × hosts): a fresh index under s3://<bucket>/<run>/, the synthetic corpus (dates over
 * ten years, bench/index-bench-common.ts) appended in 10k-page batches and folded once (the load),
 * then `--rounds` times: `--delta` new pages appended and folded (the fold a writer makes on its
 * schedule). Reported: seconds and requests of each fold, and the distinct filter labels the index
 * holds (one GET each per fold, by the probe), by kind.
 *
 *   npm run bench:fold-store                                      # 10k and 50k pages, 300 hosts
 *   npm run bench:fold-store -- --sizes 10000 --hosts 100,1000,5000 # growth with distinct hosts
 *   npm run bench:fold-store -- --latency-ms 20                    # a store 20 ms away
 *   npm run bench:fold-store -- --store local                      # the same on local disk
 *
 * Flags: --moto-server PATH (env SEARCHGATE_MOTO_SERVER, else the s3-server venv of scripts/client-venvs.sh)
 *        --endpoint URL (use a running S3-compatible server instead of starting moto) --port N (5077)
 *        --sizes N,N (10000,50000) --hosts N,N (300) --delta N (200) --rounds R (2) --latency-ms MS (0)
 *        --store s3|local (s3) --out FILE (bench/results/fold-store.json) --max-seconds S (7200)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { publicationLabels, hostSuffixKeys, filterLabels } from '../src/local/index/filters.js';
import { openLocalIndex } from '../src/local/index/index.js';
import { machineDescription, motoServerPath, startWatchdog, syntheticPages } from './index-bench-common.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    'moto-server': { type: 'string', default: process.env.SEARCHGATE_MOTO_SERVER },
    endpoint: { type: 'string' },
    port: { type: 'string', default: '5077' },
    sizes: { type: 'string', default: '10000,50000' },
    hosts: { type: 'string', default: '300' },
    delta: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '2' },
    'latency-ms': { type: 'string', default: '0' },
    store: { type: 'string', default: 's3' },
    out: { type: 'string', default: resolve(REPO_ROOT, 'bench/results/fold-store.json') },
    'max-seconds': { type: 'string', default: '7200' },
  },
});
const numbers = (list: string) => list.split(',').map(Number);
const SIZES = numbers(flags.sizes!);
const HOSTS = numbers(flags.hosts!);
const DELTA = Number(flags.delta);
const ROUNDS = Number(flags.rounds);
const LATENCY_MS = Number(flags['latency-ms']);
const STORE = flags.store === 'local' ? 'local' : 's3';
const BUCKET = 'searchgate-fold-bench';
const LOAD_BATCH = 10_000;
const DATES = { fromMs: Date.UTC(2016, 0, 1), toMs: Date.UTC(2026, 0, 1) };
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------
// The store and the counting proxy in front of it

async function startMoto(): Promise<{ endpoint: string; process: ChildProcess }> {
  const child = spawn(flags['moto-server'] ?? motoServerPath(), ['-H', '127.0.0.1', '-p', flags.port!], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.resume();
  const endpoint = `http://127.0.0.1:${flags.port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode} (is port ${flags.port} free?)`);
    try {
      await fetch(`${endpoint}/`);
      return { endpoint, process: child };
    } catch {
      await new Promise((done) => setTimeout(done, 200));
    }
  }
  child.kill();
  throw new Error('moto_server did not answer within 20 s');
}

/** "GET <kind>": the file kind a request reads, with ids and versions taken out of its path. */
function requestKind(method: string, path: string): string {
  const name = decodeURIComponent(path.split('?')[0]!).split('/').at(-1) ?? '';
  const kind = name
    .replace(/[0-9a-f-]{16,}/g, '<id>')
    .replace(/\d+/g, 'N');
  return `${method} ${kind || '/'}`;
}

class CountingProxy {
  readonly byMethod = new Map<string, number>();
  readonly byKind = new Map<string, number>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly server: http.Server;

  constructor(private readonly upstream: URL, latencyMs: number) {
    this.server = http.createServer((request, response) => {
      const method = request.method ?? '?';
      this.byMethod.set(method, (this.byMethod.get(method) ?? 0) + 1);
      const kind = requestKind(method, request.url ?? '/');
      this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
      const forward = () => {
        const outgoing = http.request(
          { host: this.upstream.hostname, port: this.upstream.port, method, path: request.url, headers: request.headers, agent: this.agent },
          (incoming) => {
            response.writeHead(incoming.statusCode ?? 502, incoming.headers);
            incoming.pipe(response);
          },
        );
        outgoing.on('error', (error) => response.destroy(error));
        request.pipe(outgoing);
      };
      if (latencyMs > 0) setTimeout(forward, latencyMs);
      else forward();
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The counts so far, and a fresh start. */
  take(): { total: number; byMethod: Record<string, number>; topKinds: Record<string, number> } {
    const total = [...this.byMethod.values()].reduce((sum, count) => sum + count, 0);
    const byMethod = Object.fromEntries(this.byMethod);
    const topKinds = Object.fromEntries([...this.byKind].sort((a, b) => b[1] - a[1]).slice(0, 6));
    this.byMethod.clear();
    this.byKind.clear();
    return { total, byMethod, topKinds };
  }

  close(): void {
    this.server.close();
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// One run

interface FoldFigures {
  seconds: number;
  requests: number;
  byMethod: Record<string, number>;
  topKinds: Record<string, number>;
}

async function timedFold(fold: () => Promise<void>, proxy: CountingProxy | null): Promise<FoldFigures> {
  proxy?.take();
  const started = performance.now();
  await fold();
  const seconds = round((performance.now() - started) / 1000);
  const counted = proxy?.take() ?? { total: 0, byMethod: {}, topKinds: {} };
  return { seconds, requests: counted.total, byMethod: counted.byMethod, topKinds: counted.topKinds };
}

/** The distinct labels the pages carry, by kind: what the label index holds one bitmap (and one GET per fold) for. */
function labelCardinality(pages: ReturnType<typeof syntheticPages>) {
  const all = new Set<string>();
  const hostKeys = new Set<string>();
  const dateLabels = new Set<string>();
  for (const page of pages) {
    const publishedAtMs = page.datePublished === null ? null : Date.parse(page.datePublished);
    for (const label of filterLabels(page.domain, publishedAtMs)) all.add(label);
    for (const key of hostSuffixKeys(page.domain)) hostKeys.add(key);
    for (const label of publicationLabels(publishedAtMs)) dateLabels.add(label);
  }
  return { labels: all.size, hostKeys: hostKeys.size, dateLabels: dateLabels.size };
}

async function run(location: string, pages: number, hosts: number, proxy: CountingProxy | null) {
  const corpus = syntheticPages({ pages, hosts, ...DATES });
  const index = await openLocalIndex(location);
  try {
    const loadStarted = performance.now();
    for (let start = 0; start < corpus.length; start += LOAD_BATCH) await index.append(corpus.slice(start, start + LOAD_BATCH));
    const appendSeconds = round((performance.now() - loadStarted) / 1000);
    const load = await timedFold(() => index.fold({ keepVersionsMs: 0 }), proxy);
    console.log(`  ${pages} pages, ${hosts} hosts: appended in ${appendSeconds} s, load fold ${load.seconds} s, ${load.requests} requests`);
    const deltas: FoldFigures[] = [];
    const written = [...corpus];
    for (let pass = 0; pass < ROUNDS; pass++) {
      const delta = syntheticPages({ pages: DELTA, hosts, ...DATES, firstPage: pages + pass * DELTA });
      written.push(...delta);
      await index.append(delta);
      const figures = await timedFold(() => index.fold({ keepVersionsMs: 0 }), proxy);
      console.log(`    fold of ${DELTA} new pages: ${figures.seconds} s, ${figures.requests} requests ${JSON.stringify(figures.byMethod)}`);
      deltas.push(figures);
    }
    return { pages, hosts, ...labelCardinality(written), appendSeconds, load, deltas };
  } finally {
    await index.close();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  startWatchdog(Number(flags['max-seconds']), 'fold-store');
  const machine = machineDescription();
  const scratch = mkdtempSync(join(os.tmpdir(), 'searchgate-fold-store-'));
  let moto: ChildProcess | null = null;
  let proxy: CountingProxy | null = null;
  const results = [];
  try {
    if (STORE === 's3') {
      let endpoint = flags.endpoint;
      if (!endpoint) {
        ({ endpoint, process: moto } = await startMoto());
        // The watchdog ends the process with exit(): the server must not outlive it.
        process.once('exit', () => moto?.kill());
      }
      proxy = new CountingProxy(new URL(endpoint), LATENCY_MS);
      Object.assign(process.env, {
        AWS_ENDPOINT_URL: await proxy.listen(),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_ALLOW_HTTP: 'true',
      });
      const created = await fetch(`${endpoint}/${BUCKET}`, { method: 'PUT' });
      if (!created.ok && created.status !== 409) throw new Error(`creating the bucket: HTTP ${created.status}`);
    }
    const stamp = Date.now();
    for (const pages of SIZES) {
      for (const hosts of HOSTS) {
        const name = `fold-${stamp}-${pages}-${hosts}`;
        const location = STORE === 's3' ? `s3://${BUCKET}/${name}` : join(scratch, name);
        results.push(await run(location, pages, hosts, proxy));
      }
    }
  } finally {
    proxy?.close();
    moto?.kill();
    rmSync(scratch, { recursive: true, force: true });
  }
  const report = {
    bench: 'fold-store',
    at: new Date().toISOString(),
    machine,
    loadAverageAtEnd: os.loadavg().map((load) => round(load)),
    store: STORE === 's3' ? `moto_server via a counting proxy, +${LATENCY_MS} ms per request` : 'local disk',
    settings: { sizes: SIZES, hosts: HOSTS, delta: DELTA, rounds: ROUNDS, dates: '2016-01-01..2026-01-01' },
    results,
  };
  mkdirSync(dirname(flags.out!), { recursive: true });
  writeFileSync(flags.out!, JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${flags.out}`);
}

await main();
