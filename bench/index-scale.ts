/**
 * The local index at scale (issue 24): the 243k-page bench corpus (../shared/tools/build_corpus.py
 * over Debian's documentation packages, man pages, dictionaries and the KJV) into one index through
 * `searchgate index add`, as a user runs it, in three successive runs that grow one index: the first
 * 10k pages, up to 50k, then the rest. After each run, a gateway (`searchgate serve`) serves the index
 * and is measured over HTTP.
 *
 * Reported per run: pages/s for each 10k-page slice (from the CLI's progress lines), the fold time, the
 * peak RSS of `index add` (the kernel's high-water mark), peak and final disk, and against the grown
 * index: the delay from `index add` of one page to a search finding it, query p50/p95 at 1 and 8
 * clients, known-item MRR@10 (the exact title of a page no other page shares, as the query) and the
 * gateway's RSS. Pages/s are of pages done (written or skipped as unchanged). Then a
 * projection to 1M and 10M pages from the measured growth.
 *
 *   npm run bench:index-scale                   # vectors on (the default configuration)
 *   npm run bench:index-scale -- --no-vectors   # full text alone
 *   npm run bench:index-scale -- --quick        # the first 20k pages, two runs
 *   npm run bench:index-scale -- --shard-pages 50000   # shards of 50k pages (SEARCHGATE_SHARD_PAGES), so
 *                                               # that the full corpus spans several and the fold's
 *                                               # memory is seen to stop growing at a shard's size
 *   npm run bench:index-scale -- --no-vectors --copies 2   # the corpus twice over (each copy's URLs,
 *                                               # titles and texts made distinct): past the corpus's size
 *
 * Flags: --work-dir DIR (/tmp/searchgate-bench/bakeoff) --index-dir DIR (/tmp/searchgate-bench/scale-index)
 *        --out FILE --install-packages --no-vectors --quick --shard-pages N --copies K (1) --max-seconds S (10800)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { normalizeUrl } from '../src/local/fetch/url.js';
import { shardNames } from '../src/local/index/shards.js';
import { seededRandom } from '../src/util/random.js';
import { corpusCopy, ensureCorpus, linearFit, machineDescription, processMemory, startWatchdog, type CorpusDocument } from './index-bench-common.js';
import { percentile } from './latency.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = resolve(REPO_ROOT, 'dist/src/cli/main.js');
/** The `searchgate` command's own launcher (its malloc settings): memory is measured as users run it. */
const NODE = resolve(REPO_ROOT, 'bin/searchgate-node');
const { values: flags } = parseArgs({
  options: {
    'work-dir': { type: 'string', default: '/tmp/searchgate-bench/bakeoff' },
    'index-dir': { type: 'string', default: '/tmp/searchgate-bench/scale-index' },
    out: { type: 'string' },
    'install-packages': { type: 'boolean', default: false },
    'no-vectors': { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    'shard-pages': { type: 'string' },
    copies: { type: 'string', default: '1' },
    'max-seconds': { type: 'string', default: '10800' },
  },
});
const QUICK = flags.quick!;
const VECTORS = !flags['no-vectors'];
const SHARD_PAGES = flags['shard-pages'];
// `index add` and `serve` read it from the environment they inherit.
if (SHARD_PAGES !== undefined) process.env.SEARCHGATE_SHARD_PAGES = SHARD_PAGES;
const COPIES = Number(flags.copies);
if (!Number.isInteger(COPIES) || COPIES < 1) throw new Error('--copies must be a whole number ≥ 1');
const VARIANT = `${VECTORS ? '' : '-bm25'}${QUICK ? '-quick' : ''}${SHARD_PAGES === undefined ? '' : `-shards${SHARD_PAGES}`}${COPIES === 1 ? '' : `-x${COPIES}`}`;
const OUT = flags.out ?? resolve(REPO_ROOT, `bench/results/index-scale${VARIANT}.json`);
const STAGES = QUICK ? [10_000, 20_000] : [10_000, 50_000, Number.POSITIVE_INFINITY];
// Pages are written a batch (2,048) at a time: a slice spans several batches.
const SLICE = QUICK ? 5_000 : 10_000;
const API_KEY = 'sk-bench-index-scale';
const QUERIES = QUICK ? 60 : 200;

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const mib = (bytes: number) => round(bytes / 1_048_576, 0);

// ---------------------------------------------------------------------------------------------
// The corpus as `index add` reads it

interface Page {
  url: string;
  title: string;
  text: string;
  datePublished: string;
}

/** Writes the stages' JSONL files (pages [from, to) of the corpus each); returns their paths and the pages. */
async function stageFiles(corpus: string, workDir: string): Promise<{ files: string[]; pages: Page[] }> {
  const pages: Page[] = [];
  for await (const line of createInterface({ input: createReadStream(corpus, 'utf8'), crlfDelay: Infinity })) {
    if (!line) continue;
    const document = JSON.parse(line) as CorpusDocument;
    pages.push({ url: document.url, title: document.title, text: document.body, datePublished: document.datePublished });
    if (pages.length >= STAGES.at(-1)!) break;
  }
  // Further copies: other URLs and texts (a page whose text another URL already holds is stored once).
  const original = pages.length;
  for (let copy = 2; copy <= COPIES; copy++) {
    for (const page of pages.slice(0, original)) {
      pages.push({ ...page, ...corpusCopy(page, copy), title: `${page.title} (copy ${copy})` });
    }
  }
  const files: string[] = [];
  let from = 0;
  for (const [i, to] of STAGES.entries()) {
    const file = join(workDir, `scale-stage-${i + 1}.jsonl`);
    const stream = createWriteStream(file);
    for (const page of pages.slice(from, Math.min(to, pages.length))) if (!stream.write(`${JSON.stringify(page)}\n`)) await once(stream, 'drain');
    stream.end();
    await once(stream, 'finish');
    files.push(file);
    from = to;
  }
  return { files, pages };
}

// ---------------------------------------------------------------------------------------------
// Sampling a child process and a directory

function directoryBytes(directory: string): number {
  if (!existsSync(directory)) return 0;
  let total = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      total += statSync(join(entry.parentPath, entry.name)).size;
    } catch {
      // A file deleted between the listing and the stat: cleanup at work.
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// One `index add` run

interface RunReport {
  pagesIn: number;
  seconds: number;
  foldSeconds: number;
  embedSeconds: number;
  pagesPerSecond: number;
  slices: { pages: number; pagesPerSecond: number }[];
  lastTenthOverFirstTenth: number | null;
  peakRssMiB: number;
  /** The highest RSS seen while each PROFILE_PAGES pages were done: whether memory levels off as the index grows. */
  rssProfile: { pages: number; peakRssMiB: number }[];
  peakDiskMiB: number;
  finalDiskMiB: number;
  peakOverFinalDisk: number;
}

async function indexAdd(file: string, indexDir: string): Promise<RunReport> {
  const args = [CLI, 'index', 'add', file, '--dir', indexDir, ...(VECTORS ? [] : ['--no-vectors'])];
  console.log(`$ searchgate ${args.slice(1).join(' ')}`);
  const child = spawn(NODE, args, { env: { ...process.env, SEARCHGATE_PROGRESS_INTERVAL_MS: '1000' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const started = performance.now();
  // Pages done (written or found unchanged), not pages read: the reader runs up to two batches ahead.
  const progress: { seconds: number; done: number }[] = [];
  let summary = '';
  const count = (text: string | undefined) => Number((text ?? '0').replaceAll(',', ''));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    const received = /^index: ([\d,]+) pages,.*?([\d,]+) written, ([\d,]+) unchanged/.exec(line);
    if (received) progress.push({ seconds: (performance.now() - started) / 1000, done: count(received[2]) + count(received[3]) });
    if (/pages written/.test(line)) summary = line;
    if (!received) console.log(`  ${line}`);
  });
  let peakDisk = 0;
  let peakRss = 0;
  const rssSamples: { done: number; rss: number }[] = [];
  const sampler = setInterval(() => {
    peakDisk = Math.max(peakDisk, directoryBytes(indexDir));
    const memory = processMemory(child.pid!);
    peakRss = Math.max(peakRss, memory?.peak ?? 0);
    if (memory) rssSamples.push({ done: progress.at(-1)?.done ?? 0, rss: memory.rss });
  }, 1000);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(sampler);
  if (code !== 0) throw new Error(`index add exited with ${code}`);
  const seconds = (performance.now() - started) / 1000;
  const finalDisk = directoryBytes(indexDir);
  peakDisk = Math.max(peakDisk, finalDisk);
  const seconds_ = (label: string) => {
    const match = new RegExp(`${label} (?:(\\d+)h)?(?:(\\d+)m)?(\\d+)s`).exec(summary);
    return match ? Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3]) : 0;
  };
  const pagesIn = count(/([\d,]+) pages written/.exec(summary)?.[1]) + count(/([\d,]+) unchanged/.exec(summary)?.[1]);
  const slices = sliceRates(progress, pagesIn);
  const tenth = Math.max(1, Math.round(slices.length / 10));
  const rate = (part: typeof slices) => part.reduce((sum, slice) => sum + slice.pagesPerSecond, 0) / Math.max(1, part.length);
  return {
    pagesIn,
    seconds: round(seconds),
    foldSeconds: seconds_('folding'),
    embedSeconds: seconds_('embedding'),
    pagesPerSecond: round(pagesIn / seconds),
    slices,
    // Null for a run too short to have two slices.
    lastTenthOverFirstTenth: slices.length < 2 ? null : round(rate(slices.slice(-tenth)) / rate(slices.slice(0, tenth)), 2),
    peakRssMiB: mib(peakRss),
    rssProfile: rssProfile(rssSamples),
    peakDiskMiB: mib(peakDisk),
    finalDiskMiB: mib(finalDisk),
    peakOverFinalDisk: round(peakDisk / finalDisk, 2),
  };
}

const PROFILE_PAGES = 50_000;

/** The highest sampled RSS in each window of PROFILE_PAGES pages done (the last window may be shorter). */
function rssProfile(samples: readonly { done: number; rss: number }[]) {
  const windows = new Map<number, number>();
  for (const { done, rss } of samples) {
    const window = Math.floor(done / PROFILE_PAGES);
    windows.set(window, Math.max(windows.get(window) ?? 0, rss));
  }
  return [...windows].sort(([a], [b]) => a - b).map(([window, rss]) => ({ pages: (window + 1) * PROFILE_PAGES, peakRssMiB: mib(rss) }));
}

/** Pages/s of each SLICE pages done, from the progress samples (time of first reaching each boundary). */
function sliceRates(progress: readonly { seconds: number; done: number }[], total: number) {
  const slices: { pages: number; pagesPerSecond: number }[] = [];
  let previous = { seconds: 0, done: 0 };
  for (let boundary = SLICE; boundary <= total; boundary += SLICE) {
    const reached = progress.find((sample) => sample.done >= boundary);
    if (!reached) break;
    slices.push({ pages: boundary, pagesPerSecond: round((reached.done - previous.done) / Math.max(reached.seconds - previous.seconds, 1e-3)) });
    previous = reached;
  }
  return slices;
}

// ---------------------------------------------------------------------------------------------
// A gateway on the index

interface Gateway {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startGateway(indexDir: string, workDir: string): Promise<Gateway> {
  const config = join(workDir, 'scale-gateway.json');
  writeFileSync(
    config,
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0 },
      logging: { level: 'warn' },
      providers: { local: { type: 'local', directory: indexDir } },
      cache: { enabled: false },
      dashboard: { enabled: false },
      accounts: { embedded: { path: join(workDir, 'scale-accounts.db') } },
    }),
  );
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(NODE, [CLI, 'serve'], {
    env: { ...process.env, SEARCHGATE_CONFIG: config, SEARCHGATE_API_KEYS: API_KEY, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (attempt > 600) throw new Error('the gateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

async function search(gateway: Gateway, query: string, count = 10): Promise<string[]> {
  const response = await fetch(`${gateway.url}/v1/web-search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, count }),
  });
  if (!response.ok) throw new Error(`search answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { data: { webPages: { value: Array<{ url: string }> } } };
  return body.data.webPages.value.map((result) => result.url);
}

async function latency(gateway: Gateway, queries: readonly string[], clients: number) {
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < queries.length) {
        const query = queries[next++]!;
        const begun = performance.now();
        await search(gateway, query);
        samples.push(performance.now() - begun);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  return { clients, queries: samples.length, p50Ms: round(percentile(samples, 0.5)), p95Ms: round(percentile(samples, 0.95)), queriesPerSecond: round(samples.length / seconds) };
}

/** Known items: the exact title of a page in the index; the rank of that page in the top 10. */
async function knownItemMrr(gateway: Gateway, items: readonly Page[]) {
  let reciprocal = 0;
  let first = 0;
  for (const item of items) {
    const wanted = normalizeUrl(item.url);
    const rank = (await search(gateway, item.title)).findIndex((url) => normalizeUrl(url) === wanted);
    if (rank >= 0) reciprocal += 1 / (rank + 1);
    if (rank === 0) first += 1;
  }
  return { queries: items.length, mrrAt10: round(reciprocal / items.length, 3), foundFirst: round(first / items.length, 3) };
}

/** From `index add` of one new page to a search through the running gateway finding it. */
async function addToFoundDelay(gateway: Gateway, indexDir: string, workDir: string) {
  const token = `zyxquorble${Date.now()}`;
  const file = join(workDir, 'scale-one-page.jsonl');
  writeFileSync(file, `${JSON.stringify({ url: `https://delay.example/${token}`, title: `Delay probe ${token}`, text: `A page written to time how soon ${token} is found.` })}\n`);
  const started = performance.now();
  const writer = spawn(NODE, [CLI, 'index', 'add', file, '--dir', indexDir, ...(VECTORS ? [] : ['--no-vectors'])], { stdio: 'ignore' });
  const exited = once(writer, 'exit').then(() => (performance.now() - started) / 1000);
  for (;;) {
    if ((await search(gateway, token)).length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const foundSeconds = (performance.now() - started) / 1000;
  return { foundSeconds: round(foundSeconds, 2), indexAddSeconds: round(await exited, 2) };
}

// ---------------------------------------------------------------------------------------------
// Queries

const WORDS = /[\p{L}\p{N}]+/gu;
const normalizedTitle = (title: string) => title.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

function pickQueries(pages: readonly Page[], random: () => number): { titles: Page[]; phrases: string[] } {
  // The page a canonical URL ends up holding is its last occurrence (fragments are one page).
  const current = new Map<string, Page>();
  for (const page of pages) current.set(normalizeUrl(page.url), page);
  const candidates = [...current.values()];
  // A known item is a page whose title no other page has: a title several pages share (a man page in
  // two sections, a word in two dictionaries) names none of them first.
  const pagesPerTitle = new Map<string, number>();
  for (const page of candidates) pagesPerTitle.set(normalizedTitle(page.title), (pagesPerTitle.get(normalizedTitle(page.title)) ?? 0) + 1);
  const uniquelyTitled = candidates.filter((page) => page.title.trim() !== '' && pagesPerTitle.get(normalizedTitle(page.title)) === 1);
  const titles: Page[] = [];
  const phrases: string[] = [];
  while (titles.length < QUERIES / 2) titles.push(uniquelyTitled[Math.floor(random() * uniquelyTitled.length)]!);
  while (phrases.length < QUERIES / 2) {
    const words = candidates[Math.floor(random() * candidates.length)]!.text.match(WORDS) ?? [];
    if (words.length < 4) continue;
    const start = Math.floor(random() * (words.length - 3));
    phrases.push(words.slice(start, start + 2 + Math.floor(random() * 3)).join(' '));
  }
  return { titles, phrases };
}

// ---------------------------------------------------------------------------------------------

/** Least squares of y = a + b·x. */
async function main(): Promise<void> {
  startWatchdog(Number(flags['max-seconds']), 'index-scale');
  const workDir = flags['work-dir']!;
  const indexDir = flags['index-dir']! + VARIANT;
  mkdirSync(workDir, { recursive: true });
  const corpus = ensureCorpus(workDir, { installPackages: flags['install-packages']! });
  const { files, pages } = await stageFiles(corpus, workDir);
  rmSync(indexDir, { recursive: true, force: true });
  const random = seededRandom(20261125);
  const stages = [];
  for (const [i, file] of files.entries()) {
    const upTo = Math.min(STAGES[i]!, pages.length);
    console.log(`run ${i + 1}: pages up to ${upTo}`);
    const run = await indexAdd(file, indexDir);
    console.log(JSON.stringify({ ...run, slices: undefined }));
    const gateway = await startGateway(indexDir, workDir);
    try {
      const { titles, phrases } = pickQueries(pages.slice(0, upTo), random);
      const queryTexts = [...titles.map((page) => page.title), ...phrases];
      await latency(gateway, queryTexts.slice(0, 20), 4); // warm-up: caches, JIT, the model
      const oneClient = await latency(gateway, queryTexts, 1);
      const eightClients = await latency(gateway, [...queryTexts, ...queryTexts], 8);
      const knownItems = await knownItemMrr(gateway, titles);
      const delay = await addToFoundDelay(gateway, indexDir, workDir);
      const gatewayRss = processMemory(gateway.child.pid!);
      const stage = {
        pages: upTo,
        shards: shardNames(readdirSync(indexDir).map((name) => name.replace(/\.lance$/, ''))).length,
        run,
        queries: [oneClient, eightClients],
        knownItems,
        addToFound: delay,
        gatewayRssMiB: mib(gatewayRss?.rss ?? 0),
        gatewayPeakRssMiB: mib(gatewayRss?.peak ?? 0),
        loadAverage: os.loadavg().map((load) => round(load, 2)),
      };
      console.log(JSON.stringify({ ...stage, run: undefined }));
      stages.push(stage);
    } finally {
      await gateway.stop();
    }
  }

  // Projection from the measured growth: time per page of the last run (its slices and its fold),
  // disk per page, and peak RSS against pages.
  const last = stages.at(-1)!;
  const steady =
    last.run.slices.length > 0 ? percentile([...last.run.slices.map((slice) => slice.pagesPerSecond)].sort((a, b) => a - b), 0.5) : last.run.pagesPerSecond;
  const folds = linearFit(stages.map((stage) => [stage.pages, stage.run.foldSeconds]));
  const disk = linearFit(stages.map((stage) => [stage.pages, stage.run.finalDiskMiB]));
  const rss = linearFit(stages.map((stage) => [stage.pages, stage.run.peakRssMiB]));
  const project = (pages: number) => ({
    pages,
    // One run of all pages: appending at the steady rate, then folds every 100k pages whose cost grows with the index.
    hours: round((pages / steady + Array.from({ length: Math.ceil(pages / 100_000) }, (_, k) => folds.intercept + folds.slope * (k + 1) * 100_000).reduce((a, b) => a + b, 0)) / 3600, 1),
    diskGiB: round((disk.intercept + disk.slope * pages) / 1024, 1),
    // A straight line through each run's peak: crude, and an upper bound where memory levels off.
    peakRssGiBIfLinear: round((rss.intercept + rss.slope * pages) / 1024, 1),
  });
  const report = {
    benchmark: 'index-scale',
    date: new Date().toISOString(),
    machine: machineDescription(),
    vectors: VECTORS,
    copies: COPIES,
    shardPages: SHARD_PAGES === undefined ? null : Number(SHARD_PAGES),
    corpus: { path: corpus, pages: pages.length },
    stages,
    projection: { steadyPagesPerSecond: steady, foldSecondsPerPage: folds.slope, diskMiBPerPage: disk.slope, rssMiBPerPage: rss.slope, at: [project(1_000_000), project(10_000_000)] },
    loadAverageAtEnd: os.loadavg().map((load) => round(load, 2)),
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(report, null, 2) + '\n');
  console.log(JSON.stringify(report.projection));
  console.log(`wrote ${OUT}`);
  process.exit(0);
}

await main();
