/**
 * Issue 20: one index on S3-compatible storage, served by a replica from its local copy, against
 * the same index served from a local directory, side by side in one run:
 * - the copy's first sync: time and bytes;
 * - query p50/p95 at 1 and 8 clients, replica ÷ local (goal: within 10 %);
 * - commits by the writer (`index add --dir s3://…` of one page, then of 1,000): the writer's time,
 *   the time until the replica finds the pages, and the bytes its syncs copied, beside the files the
 *   commit added to and removed from the store; with --baseline-dist, the same commits by another
 *   build's writer (each on its own copy of the index, served by a replica of this build);
 * - the peak RSS of `index add` of --rss-pages new pages into a copy of the local index, by each
 *   build, and of the same command again when it writes nothing.
 *
 * The store is moto's server from the pinned venv of scripts/client-venvs.sh on 127.0.0.1 (no
 * network latency: a real store adds its round trips to the sync, never to a query). Pages come
 * from the 243k-page bench corpus, the first --pages of it (or, with --synthetic, as many pages of
 * the synthetic corpus of index-bench-common.ts), indexed with full text alone (the replica's query
 * path is the same with vectors; building them would take the model's time). Pages a commit adds
 * are synthetic in both cases.
 *
 *   npm run bench:replica -- [--pages 50000] [--queries 300] [--synthetic] [--commit-pages 1,1000]
 *        [--rss-pages 300] [--baseline-dist /tmp/base/dist] [--out bench/results/replica.json]
 * (--queries 0 skips the query comparison.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, createReadStream, createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { manifestVersion } from '../src/local/index/mirror.js';
import { ObjectStore, type StoredObject } from '../src/local/index/object-store.js';
import { s3Environment, startS3Server } from '../test/helpers/s3-server.js';
import { ensureCorpus, machineDescription, processMemory, startWatchdog, syntheticPages } from './index-bench-common.js';
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
    synthetic: { type: 'boolean', default: false },
    'commit-pages': { type: 'string', default: '1,1000' },
    'rss-pages': { type: 'string', default: '300' },
    'baseline-dist': { type: 'string' },
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

/** Pages of the synthetic corpus as `index add` reads them, from page `firstPage` on. */
function writeSyntheticPages(path: string, pages: number, firstPage: number, firstTitle?: string): string[] {
  const made = syntheticPages({ pages, firstPage, hosts: 2000, fromMs: Date.UTC(2015, 0, 1), toMs: Date.UTC(2026, 0, 1) });
  if (firstTitle !== undefined && made[0]) made[0].title = firstTitle;
  writeFileSync(path, made.map((page) => `${JSON.stringify({ url: page.url, title: page.title, text: page.text, datePublished: page.datePublished })}\n`).join(''));
  return made.map((page) => page.title);
}

/**
 * Runs a build's CLI, its time in ms and its peak RSS in bytes. Not synchronously: the event loop
 * must keep reading moto's log, or moto stalls on a full pipe.
 */
async function cli(args: string[], env: NodeJS.ProcessEnv, program = CLI): Promise<{ ms: number; peakRssBytes: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [program, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  let peakRssBytes = 0;
  // The kernel's high-water mark, read until the process is gone.
  const sampler = setInterval(() => (peakRssBytes = Math.max(peakRssBytes, processMemory(child.pid!)?.peak ?? 0)), 50);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(sampler);
  if (code !== 0) throw new Error(`searchgate ${args.join(' ')} exited with ${code}`);
  return { ms: performance.now() - started, peakRssBytes };
}

/** Puts a local index directory under the store's prefix, as a writer would have left it. */
async function upload(directory: string, client: S3Client, prefix: string): Promise<number> {
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
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}/${relative(directory, file).split(sep).join('/')}`, Body: body }));
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
const pages = Number(flags.pages);
const titles = flags.synthetic
  ? writeSyntheticPages(join(work, 'pages.jsonl'), pages, 0)
  : await slice(ensureCorpus(flags['corpus-dir']!, { installPackages: flags['install-packages']! }), pages, join(work, 'pages.jsonl'));
noteLoad();

const localIndex = join(work, 'local-index');
const { ms: buildMs } = await cli(['index', 'add', join(work, 'pages.jsonl'), '--dir', localIndex, '--no-vectors'], {});
noteLoad();
const moto = await startS3Server();
await moto.createBucket(BUCKET);
// moto itself, not the test server's relay: the relay would add a loopback hop to every call.
const s3env = { ...s3Environment(moto.directEndpoint, 'bench'), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
Object.assign(process.env, s3env);
const s3 = new S3Client({ forcePathStyle: true, region: 'us-east-1' });
let uploadMs = performance.now();
const uploadedBytes = await upload(localIndex, s3, 'index');
uploadMs = performance.now() - uploadMs;

const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.kill()));
const local = await startGateway('local', localIndex, null, {});
children.push(local.child);
const mirror = join(work, 'mirror');
const replicaStarted = performance.now();
const replica = await startGateway('replica', URI, mirror, s3env);
children.push(replica.child);
type ReplicaStatus = { version: number | null; bytesCopied: number };
const statusOf = async (url: string) => ((await (await fetch(`${url}/readyz`)).json()) as { indexReplicas?: ReplicaStatus[] }).indexReplicas?.[0];
const readyz = () => statusOf(replica.url);
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
const oneClient = queries.length > 0 ? await sideBySide(local.url, replica.url, queries, 1) : null;
noteLoad();
const eightClients = queries.length > 0 ? await sideBySide(local.url, replica.url, queries, 8) : null;
noteLoad();
replica.child.kill();
local.child.kill();

// Commits by each build's writer into its own copy of the index, each served by a replica of this build.
const builds = [
  ...(flags['baseline-dist'] ? [{ name: 'baseline', cli: join(resolve(flags['baseline-dist']), 'src/cli/main.js') }] : []),
  { name: 'this build', cli: CLI },
];
const commitSizes = flags['commit-pages']!.split(',').map(Number);
const newestVersion = (objects: StoredObject[]) => Math.max(...objects.map((object) => manifestVersion(object.key) ?? 0));
const commits = [];
let nextPage = 50_000_000;
for (const [number, build] of builds.entries()) {
  const prefix = `commits-${number}`;
  await upload(localIndex, s3, prefix);
  const store = new ObjectStore(BUCKET, prefix, 30_000);
  const served = await startGateway(`commits-${number}`, `s3://${BUCKET}/${prefix}`, join(work, `commits-mirror-${number}`), s3env);
  children.push(served.child);
  await until(async () => ((await statusOf(served.url))?.version != null ? true : undefined), 30 * 60_000, `the copy of ${prefix}`);
  for (const size of commitSizes) {
    const marker = `commitmarker${Date.now().toString(36)}`;
    const file = join(work, `commit-${number}-${size}.jsonl`);
    writeSyntheticPages(file, size, nextPage, `${marker} first page of the commit`);
    nextPage += size;
    const before = await store.list('pages.lance/');
    const copiedBefore = (await statusOf(served.url))!.bytesCopied;
    const writer = await cli(['index', 'add', file, '--dir', `s3://${BUCKET}/${prefix}`, '--no-vectors'], s3env, build.cli);
    const writerDone = performance.now();
    await until(async () => ((await search(served.url, marker)).urls.length > 0 ? true : undefined), 10 * 60_000, 'the commit on the replica', 100);
    const visibleAfterMs = performance.now() - writerDone;
    const after = await store.list('pages.lance/');
    // Every copy made: the replica on the store's newest version (the writer's cleanup may follow its last commit).
    await until(async () => ((await statusOf(served.url))?.version === newestVersion(await store.list('pages.lance/_versions/')) ? true : undefined), 10 * 60_000, 'the replica on the newest version', 100);
    const keysBefore = new Set(before.map((object) => object.key));
    const keysAfter = new Set(after.map((object) => object.key));
    const added = after.filter((object) => !keysBefore.has(object.key));
    commits.push({
      writer: build.name,
      pages: size,
      writerSeconds: seconds(writer.ms),
      writerPeakRssMiB: Math.round(writer.peakRssBytes / 1_048_576),
      visibleOnReplicaAfterWriterSeconds: seconds(visibleAfterMs),
      bytesCopiedByReplica: (await statusOf(served.url))!.bytesCopied - copiedBefore,
      storeFilesAdded: added.length,
      storeBytesAdded: added.reduce((total, object) => total + object.size, 0),
      storeFilesRemoved: before.filter((object) => !keysAfter.has(object.key)).length,
      indexBytesAfter: after.reduce((total, object) => total + object.size, 0),
      loadAverage: os.loadavg().map((value) => Math.round(value * 100) / 100),
    });
    console.log(JSON.stringify(commits.at(-1)));
  }
  served.child.kill();
  store.close();
}
noteLoad();

// The peak RSS of `index add` of a few hundred new pages into a large index, by each build, then of
// the same command again, which finds every page in and writes nothing.
const rssPages = Number(flags['rss-pages']);
const additions = [];
for (const [number, build] of builds.entries()) {
  const copy = join(work, `rss-index-${number}`);
  cpSync(localIndex, copy, { recursive: true });
  const file = join(work, `rss-${number}.jsonl`);
  writeSyntheticPages(file, rssPages, 60_000_000);
  const adding = await cli(['index', 'add', file, '--dir', copy, '--no-vectors'], {}, build.cli);
  const again = await cli(['index', 'add', file, '--dir', copy, '--no-vectors'], {}, build.cli);
  additions.push({
    writer: build.name,
    pages: rssPages,
    seconds: seconds(adding.ms),
    peakRssMiB: Math.round(adding.peakRssBytes / 1_048_576),
    writingNothing: { seconds: seconds(again.ms), peakRssMiB: Math.round(again.peakRssBytes / 1_048_576) },
    indexBytesAfter: directoryBytes(copy),
    loadAverage: os.loadavg().map((value) => Math.round(value * 100) / 100),
  });
  console.log(JSON.stringify(additions.at(-1)));
  rmSync(copy, { recursive: true, force: true });
}
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
  commits: { pollIntervalMs: 1000, maxUnindexedRows: process.env.SEARCHGATE_MAX_UNINDEXED_ROWS ?? 'default', runs: commits },
  indexAdd: additions,
};
mkdirSync(dirname(flags.out!), { recursive: true });
writeFileSync(flags.out!, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
children.forEach((child) => child.kill());
await moto.stop();
process.exit(0);
