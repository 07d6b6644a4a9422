/**
 * Issue 20: one index on S3-compatible storage, served by a replica from its local copy, against
 * the same index served from a local directory, side by side in one run:
 * - the copy's first sync: time and bytes;
 * - query p50/p95 at 1 and 8 clients, replica ÷ local (goal: within 10 %);
 * - a commit by the writer (`index add --dir s3://…` of one page): the writer's time, then the time
 *   until the replica finds the page, and the bytes that sync copied.
 *
 * The store is moto's server from the pinned venv of scripts/client-venvs.sh on 127.0.0.1 (no
 * network latency: a real store adds its round trips to the sync, never to a query). Pages come
 * from the 243k-page bench corpus, the first --pages of it, indexed with full text alone (the
 * replica's query path is the same with vectors; building them would take the model's time).
 *
 *   npm run bench:replica -- [--pages 50000] [--queries 300] [--out bench/results/replica.json]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Environment, startS3Server } from '../test/helpers/s3-server.js';
import { ensureCorpus, machineDescription, startWatchdog } from './index-bench-common.js';
import { percentile } from './latency.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(REPO_ROOT, 'dist/src/cli/main.js');
const KEY = 'sk-bench-replica-0001';
const BUCKET = 'bench-index';
const URI = `s3://${BUCKET}/index`;

const { values: flags } = parseArgs({
  options: {
    pages: { type: 'string', default: '50000' },
    queries: { type: 'string', default: '300' },
    'work-dir': { type: 'string', default: '/tmp/searchgate-bench/replica' },
    'corpus-dir': { type: 'string', default: '/tmp/searchgate-bench/bakeoff' },
    'install-packages': { type: 'boolean', default: false },
    out: { type: 'string', default: join(REPO_ROOT, 'bench/results/replica.json') },
  },
});
startWatchdog(3 * 3600, 'bench/replica');

const seconds = (ms: number) => Math.round(ms) / 1000;
const loads: number[][] = [];
const noteLoad = () => loads.push(os.loadavg().map((value) => Math.round(value * 100) / 100));

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

function directoryBytes(directory: string): number {
  let total = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    // A sync may rename or remove a file between the listing and the stat.
    try {
      total += statSync(join(entry.parentPath, entry.name)).size;
    } catch {}
  }
  return total;
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string, everyMs = 50): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
}

async function slice(corpus: string, pages: number, path: string): Promise<string[]> {
  const out = createWriteStream(path);
  const titles: string[] = [];
  let count = 0;
  for await (const line of createInterface({ input: createReadStream(corpus) })) {
    if (count++ >= pages) break;
    const document = JSON.parse(line) as { url: string; title: string; body: string };
    if (document.title) titles.push(document.title);
    if (!out.write(`${JSON.stringify({ url: document.url, title: document.title, text: document.body })}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return titles;
}

/** Runs the CLI, its time in ms. Not synchronously: the event loop must keep reading moto's log, or moto stalls on a full pipe. */
async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`searchgate ${args.join(' ')} exited with ${code}`);
  return performance.now() - started;
}

/** Puts a local index directory under the store's prefix, as a writer would have left it. */
async function upload(directory: string, client: S3Client): Promise<number> {
  const files = readdirSync(directory, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  // Manifests last, as a commit: a replica never sees a version whose files are not all there.
  files.sort((a, b) => Number(a.includes(`${sep}_versions${sep}`)) - Number(b.includes(`${sep}_versions${sep}`)));
  let bytes = 0;
  let next = 0;
  const lane = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      const body = readFileSync(file);
      bytes += body.length;
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `index/${relative(directory, file).split(sep).join('/')}`, Body: body }));
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return bytes;
}

async function startGateway(name: string, directory: string, mirror: string | null, env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const config = join(flags['work-dir']!, `${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      logging: { level: 'warn' },
      cache: { enabled: false },
      accounts: { embedded: { path: join(flags['work-dir']!, `${name}-accounts.db`) } },
      providers: {
        'local-reranker': { type: 'local-reranker', optional: true, model: 'none/such' },
        local: { type: 'local', directory, vectorModel: 'none', ...(mirror ? { mirror: { directory: mirror, pollIntervalMs: 1000 } } : {}) },
      },
      search: { chain: ['local'] },
    }),
  );
  const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...process.env, ...env, SEARCHGATE_CONFIG: config, SEARCHGATE_API_KEYS: KEY, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await until(async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined), 60_000, `${name} gateway`);
  return { url, child };
}

async function search(url: string, query: string): Promise<{ ms: number; urls: string[] }> {
  const started = performance.now();
  const answer = await fetch(`${url}/v1/web-search`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, count: 10 }) });
  const body = (await answer.json()) as { data?: { webPages?: { value: Array<{ url: string }> } } };
  const ms = performance.now() - started;
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${JSON.stringify(body)}`);
  return { ms, urls: body.data!.webPages!.value.map((result) => result.url) };
}

/** Every query to both gateways, the first of each pair alternating, with `clients` such pairs in flight. */
async function sideBySide(local: string, replica: string, queries: string[], clients: number) {
  const times = { local: [] as number[], replica: [] as number[] };
  let differing = 0;
  let next = 0;
  const client = async () => {
    while (next < queries.length) {
      const i = next++;
      const order = i % 2 === 0 ? (['local', 'replica'] as const) : (['replica', 'local'] as const);
      const answers: Partial<Record<'local' | 'replica', string[]>> = {};
      for (const which of order) {
        const { ms, urls } = await search(which === 'local' ? local : replica, queries[i]!);
        times[which].push(ms);
        answers[which] = urls;
      }
      if (JSON.stringify(answers.local) !== JSON.stringify(answers.replica)) differing++;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const summary = (samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return { p50Ms: Math.round(percentile(sorted, 0.5) * 1000) / 1000, p95Ms: Math.round(percentile(sorted, 0.95) * 1000) / 1000 };
  };
  const [onLocal, onReplica] = [summary(times.local), summary(times.replica)];
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
  return { clients, local: onLocal, replica: onReplica, p50Ratio: ratio(onReplica.p50Ms, onLocal.p50Ms), p95Ratio: ratio(onReplica.p95Ms, onLocal.p95Ms), differingAnswers: differing };
}

const work = resolve(flags['work-dir']!);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const machine = machineDescription();
const corpus = ensureCorpus(flags['corpus-dir']!, { installPackages: flags['install-packages']! });
const pages = Number(flags.pages);
const titles = await slice(corpus, pages, join(work, 'pages.jsonl'));
noteLoad();

const localIndex = join(work, 'local-index');
const buildMs = await cli(['index', 'add', join(work, 'pages.jsonl'), '--dir', localIndex, '--no-vectors'], {});
noteLoad();
const moto = await startS3Server();
await moto.createBucket(BUCKET);
// moto itself, not the test server's relay: the relay would add a loopback hop to every call.
const s3env = { ...s3Environment(moto.directEndpoint, 'bench'), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
Object.assign(process.env, s3env);
const s3 = new S3Client({ forcePathStyle: true, region: 'us-east-1' });
let uploadMs = performance.now();
const uploadedBytes = await upload(localIndex, s3);
uploadMs = performance.now() - uploadMs;

const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.kill()));
const local = await startGateway('local', localIndex, null, {});
children.push(local.child);
const mirror = join(work, 'mirror');
const replicaStarted = performance.now();
const replica = await startGateway('replica', URI, mirror, s3env);
children.push(replica.child);
const readyz = async () => ((await (await fetch(`${replica.url}/readyz`)).json()) as { indexReplicas?: Array<{ version: number | null; bytesCopied: number }> }).indexReplicas?.[0];
await until(async () => ((await readyz())?.version != null ? true : undefined), 30 * 60_000, 'the replica\'s first copy');
const firstSyncMs = performance.now() - replicaStarted;
const mirrorBytes = directoryBytes(mirror);
noteLoad();

// Known items: each query is a page's title; a fixed stride through the slice, the same every run.
const queryCount = Number(flags.queries);
const stride = Math.max(1, Math.floor(titles.length / queryCount));
const queries = Array.from({ length: Math.min(queryCount, titles.length) }, (_, i) => titles[i * stride]!);
for (const query of queries.slice(0, 20)) {
  await search(local.url, query);
  await search(replica.url, query);
}
const oneClient = await sideBySide(local.url, replica.url, queries, 1);
noteLoad();
const eightClients = await sideBySide(local.url, replica.url, queries, 8);
noteLoad();

// A commit by the writer, and how long until the replica serves it.
const marker = `replica visibility marker ${Date.now().toString(36)}`;
writeFileSync(join(work, 'one.jsonl'), `${JSON.stringify({ url: `https://bench.example/${Date.now()}`, title: marker, text: `${marker}: one page added by the writer.` })}\n`);
const versionBefore = (await readyz())!.version;
const copiedBefore = (await readyz())!.bytesCopied;
const writerMs = await cli(['index', 'add', join(work, 'one.jsonl'), '--dir', URI, '--no-vectors'], s3env);
const writerDone = performance.now();
await until(async () => ((await search(replica.url, marker)).urls.length > 0 ? true : undefined), 10 * 60_000, 'the new page on the replica', 100);
const visibleAfterMs = performance.now() - writerDone;
const { version: versionAfter, bytesCopied: copiedAfter } = (await readyz())!;
const syncBytes = copiedAfter - copiedBefore;
noteLoad();

const result = {
  command: `node dist/bench/replica.js ${process.argv.slice(2).join(' ')}`.trim(),
  machine,
  loadAverages: loads,
  pages,
  localBuildSeconds: seconds(buildMs),
  localIndexBytes: directoryBytes(localIndex),
  upload: { seconds: seconds(uploadMs), bytes: uploadedBytes },
  firstSync: { seconds: seconds(firstSyncMs), mirrorBytes },
  queries: { count: queries.length, oneClient, eightClients },
  commit: { writerSeconds: seconds(writerMs), visibleAfterWriterSeconds: seconds(visibleAfterMs), pollIntervalMs: 1000, versionBefore, versionAfter, bytesCopiedBySync: syncBytes, mirrorBytesAfter: directoryBytes(mirror) },
};
mkdirSync(dirname(flags.out!), { recursive: true });
writeFileSync(flags.out!, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
children.forEach((child) => child.kill());
await moto.stop();
process.exit(0);
