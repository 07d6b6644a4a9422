/**
 * Speed of the local index on the bake-off's corpus class (../shared/notes/index-bakeoff.md):
 * ~228k documents of real English from Debian documentation packages, man pages, the KJV Bible and
 * three dictionaries, 264 fake domains, random dates 2015–2026.
 *
 * 1. Corpus: built once under /tmp (never in the repo) by ../shared/tools/build_corpus.py and
 *    man2txt.sh, copied into --work-dir with their /tmp/bakeoff paths pointed there. The Debian
 *    packages must be installed (the run prints the apt-get command, or runs it with
 *    --install-packages when root).
 * 2. Indexing: a fresh index, pages upserted in batches; pages/s over the whole load, folds included.
 * 3. Queries: 200 of the bake-off's kind (100 from titles, 1–5 words; 100 body phrases, 2–4 words),
 *    AND semantics ('all'), top 20 with snippets, at 1 client and at 8 concurrent async clients in
 *    this one process (how the gateway calls search()), in three filter modes: none; restrictive
 *    (the source document's domain and its calendar year); exclude (the 3 biggest domains, dates
 *    2020–2026). Plus the default 'any' matching without filters. p50/p95/p99 and queries/s.
 * 4. Maintenance on the full index: adding, updating and removing pages, and reopening.
 *
 *   node dist/bench/index-speed.js                 # full run (corpus build ~15 min once; then ~15 min)
 *   node dist/bench/index-speed.js --reuse-index   # skip the load when the index already holds the corpus
 *   node dist/bench/index-speed.js --quick         # smoke run on the first 20,000 documents
 *
 * Flags: --work-dir DIR (/tmp/searchgate-bench/bakeoff) --index-dir DIR (/tmp/searchgate-bench/speed-index)
 *        --batch-size N (20000) --rounds R (3 passes of the queries at 8 clients) --limit-docs N
 *        --maintenance-pages N (1000) --out FILE (bench/results/index-speed.json) --max-seconds S (3600)
 *        --install-packages --reuse-index --quick
 *        --dump-queries FILE (write the queries of each filter mode as JSON and stop: other engines
 *          can then be measured on the very same requests)
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openLocalIndex } from '../src/local/index/index.js';
import type { IndexedPage, IndexQuery, LocalIndex } from '../src/local/types.js';
import { ensureCorpus, machineDescription, startWatchdog, type CorpusDocument } from './index-bench-common.js';
import { seededRandom } from '../src/util/random.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    'work-dir': { type: 'string', default: '/tmp/searchgate-bench/bakeoff' },
    'index-dir': { type: 'string', default: '/tmp/searchgate-bench/speed-index' },
    'batch-size': { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    'limit-docs': { type: 'string' },
    'maintenance-pages': { type: 'string', default: '1000' },
    out: { type: 'string' },
    'max-seconds': { type: 'string', default: '3600' },
    'install-packages': { type: 'boolean', default: false },
    'reuse-index': { type: 'boolean', default: false },
    'dump-queries': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const QUICK = flags.quick!;
const OUT =
  flags.out ?? resolve(REPO_ROOT, QUICK ? 'bench/results/quick.tmp/index-speed.json' : 'bench/results/index-speed.json');

const TOP_K = 20;
const CLIENTS = [1, 8] as const;

// ---------------------------------------------------------------------------------------------
// Corpus

async function readCorpus(path: string, limit: number): Promise<CorpusDocument[]> {
  const documents: CorpusDocument[] = [];
  for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })) {
    if (!line) continue;
    documents.push(JSON.parse(line) as CorpusDocument);
    if (documents.length >= limit) break;
  }
  return documents;
}

function asPage(document: CorpusDocument): IndexedPage {
  return {
    url: document.url,
    canonicalUrl: document.url,
    title: document.title,
    text: document.body,
    datePublished: new Date(document.datePublished).toISOString(),
    domain: document.domain,
    language: 'en',
    fetchedAt: '2026-11-01T00:00:00.000Z',
    contentHash: createHash('sha256').update(document.body).digest('hex'),
  };
}

// ---------------------------------------------------------------------------------------------
// Queries


const WORDS = /[\p{L}\p{N}]+/gu;
const COMMON_WORDS = new Set('a an and are as at be by for from in is it of on or that the this to with'.split(' '));

interface BenchQuery {
  kind: 'title' | 'body';
  text: string;
  source: CorpusDocument;
}

/** Consecutive words of `text`, `minWords`–`maxWords` long, with at least one word worth searching for. */
function phrase(text: string, minWords: number, maxWords: number, random: () => number): string | null {
  const words = text.match(WORDS) ?? [];
  if (words.length < minWords) return null;
  const length = Math.min(words.length, minWords + Math.floor(random() * (maxWords - minWords + 1)));
  const start = Math.floor(random() * (words.length - length + 1));
  const picked = words.slice(start, start + length);
  return picked.some((word) => word.length > 1 && !COMMON_WORDS.has(word.toLowerCase())) ? picked.join(' ') : null;
}

function makeQueries(documents: readonly CorpusDocument[], perKind: number): BenchQuery[] {
  const random = seededRandom(20261122);
  const queries: BenchQuery[] = [];
  for (const [kind, pick] of [
    ['title', (document: CorpusDocument) => phrase(document.title, 1, 5, random)],
    ['body', (document: CorpusDocument) => phrase(document.body, 2, 4, random)],
  ] as const) {
    for (let made = 0; made < perKind; ) {
      const source = documents[Math.floor(random() * documents.length)]!;
      const text = pick(source);
      if (text) {
        queries.push({ kind, text, source });
        made++;
      }
    }
  }
  return queries;
}

type FilterMode = 'none' | 'restrictive' | 'exclude';

function biggestDomains(documents: readonly CorpusDocument[], count: number): string[] {
  const sizes = new Map<string, number>();
  for (const document of documents) sizes.set(document.domain, (sizes.get(document.domain) ?? 0) + 1);
  return [...sizes].sort((a, b) => b[1] - a[1]).slice(0, count).map(([domain]) => domain);
}

function indexQuery(query: BenchQuery, mode: FilterMode, match: 'all' | 'any', excluded: string[]): IndexQuery {
  const base: IndexQuery = { query: query.text, limit: TOP_K, offset: 0, includeDomains: [], excludeDomains: [], window: null, match };
  if (mode === 'restrictive') {
    const year = new Date(query.source.datePublished).getUTCFullYear();
    return { ...base, includeDomains: [query.source.domain], window: { fromMs: Date.UTC(year, 0, 1), toMs: Date.UTC(year + 1, 0, 1) } };
  }
  if (mode === 'exclude') {
    return { ...base, excludeDomains: excluded, window: { fromMs: Date.UTC(2020, 0, 1), toMs: Date.UTC(2027, 0, 1) } };
  }
  return base;
}

// ---------------------------------------------------------------------------------------------
// Measurement

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

interface ScenarioResult {
  filter: FilterMode;
  match: 'all' | 'any';
  clients: number;
  queries: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  queriesPerSecond: number;
  meanHits: number;
  zeroHitShare: number;
}

async function runScenario(
  index: LocalIndex,
  requests: readonly IndexQuery[],
  clients: number,
  labels: Pick<ScenarioResult, 'filter' | 'match'>,
): Promise<ScenarioResult> {
  const latencies: number[] = [];
  let hitsTotal = 0;
  let zeroHits = 0;
  let next = 0;
  const client = async () => {
    while (next < requests.length) {
      const request = requests[next++]!;
      const started = performance.now();
      const { hits } = await index.search(request);
      latencies.push(performance.now() - started);
      hitsTotal += hits.length;
      if (hits.length === 0) zeroHits++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, client));
  const elapsedSeconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ...labels,
    clients,
    queries: latencies.length,
    p50Ms: round(percentile(latencies, 0.5)),
    p95Ms: round(percentile(latencies, 0.95)),
    p99Ms: round(percentile(latencies, 0.99)),
    maxMs: round(latencies.at(-1)!),
    queriesPerSecond: round(latencies.length / elapsedSeconds),
    meanHits: round(hitsTotal / latencies.length),
    zeroHitShare: round(zeroHits / latencies.length, 3),
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const started = performance.now();
  const result = await work();
  return { result, seconds: round((performance.now() - started) / 1000, 2) };
}

async function buildIndex(indexDir: string, documents: readonly CorpusDocument[], batchSize: number) {
  rmSync(indexDir, { recursive: true, force: true });
  const index = await openLocalIndex(indexDir);
  const batches: { pages: number; seconds: number }[] = [];
  const started = performance.now();
  for (let start = 0; start < documents.length; start += batchSize) {
    const pages = documents.slice(start, start + batchSize).map(asPage);
    const { seconds } = await timed(() => index.upsert(pages));
    batches.push({ pages: start + pages.length, seconds });
    console.log(`  ${start + pages.length} pages, batch ${seconds} s`);
  }
  const seconds = (performance.now() - started) / 1000;
  await index.close();
  return { pages: documents.length, batchSize, seconds: round(seconds), pagesPerSecond: round(documents.length / seconds), batches };
}

/** Adds, updates and removes pages of the full index, each as one write (commit + fold). */
async function measureMaintenance(index: LocalIndex, documents: readonly CorpusDocument[], count: number) {
  const sample = documents.slice(0, count);
  const added = sample.map((document) => ({ ...asPage(document), url: `${document.url}?copy`, canonicalUrl: `${document.url}?copy` }));
  const add = await timed(() => index.upsert(added));
  const updated = sample.map((document) => ({ ...asPage(document), title: `${document.title} (revised)`, text: `${document.body}\n\nRevised.` }));
  const update = await timed(() => index.upsert(updated));
  const single = await timed(() => index.upsert([{ ...asPage(documents[count]!), title: 'One page updated alone' }]));
  const remove = await timed(() => index.remove(added.map((page) => page.url)));
  return {
    pages: count,
    addSeconds: add.seconds,
    updateSeconds: update.seconds,
    updateOnePageSeconds: single.seconds,
    removeSeconds: remove.seconds,
    removed: remove.result,
  };
}

/** Whether the index already holds every distinct page of the corpus (the corpus repeats a few URLs). */
async function holdsCorpus(indexDir: string, documents: readonly CorpusDocument[]): Promise<boolean> {
  if (!existsSync(indexDir)) return false;
  let stored: number;
  try {
    const index = await openLocalIndex(indexDir);
    stored = (await index.stats()).documents;
    await index.close();
  } catch (error) {
    console.log(`not reusing ${indexDir}: ${(error as Error).message}`);
    return false;
  }
  return stored === new Set(documents.map((document) => document.url)).size;
}

async function main(): Promise<void> {
  startWatchdog(Number(flags['max-seconds']), 'index-speed');
  const workDir = flags['work-dir']!;
  const indexDir = flags['index-dir']! + (QUICK ? '-quick' : '');
  const corpusPath = ensureCorpus(workDir, { installPackages: flags['install-packages']! });
  const limit = Number(flags['limit-docs'] ?? (QUICK ? 20_000 : Number.MAX_SAFE_INTEGER));
  const documents = await readCorpus(corpusPath, limit);
  console.log(`corpus: ${documents.length} documents`);

  const queries = makeQueries(documents, QUICK ? 50 : 100);
  const excluded = biggestDomains(documents, 3);
  if (flags['dump-queries']) {
    const modes: FilterMode[] = ['none', 'restrictive', 'exclude'];
    const dump = Object.fromEntries(modes.map((mode) => [mode, queries.map((query) => indexQuery(query, mode, 'all', excluded))]));
    writeFileSync(flags['dump-queries'], JSON.stringify(dump));
    console.log(`wrote ${flags['dump-queries']}`);
    process.exit(0);
  }

  let indexing: Awaited<ReturnType<typeof buildIndex>> | { reused: true } = { reused: true };
  let index: LocalIndex;
  if (!flags['reuse-index'] || !(await holdsCorpus(indexDir, documents))) {
    console.log('indexing…');
    indexing = await buildIndex(indexDir, documents, Number(flags['batch-size']));
    console.log(`indexed ${documents.length} pages: ${JSON.stringify({ ...indexing, batches: undefined })}`);
  }

  const open = await timed(() => openLocalIndex(indexDir));
  index = open.result;
  const firstQuery = await timed(() => index.search({ query: 'configuration file', limit: TOP_K, offset: 0, includeDomains: [], excludeDomains: [], window: null }));
  const stats = await index.stats();

  const rounds = Number(flags.rounds);
  const scenarios: ScenarioResult[] = [];
  const plans: { filter: FilterMode; match: 'all' | 'any' }[] = [
    { filter: 'none', match: 'all' },
    { filter: 'restrictive', match: 'all' },
    { filter: 'exclude', match: 'all' },
    { filter: 'none', match: 'any' },
  ];
  for (const plan of plans) {
    const requests = queries.map((query) => indexQuery(query, plan.filter, plan.match, excluded));
    await runScenario(index, requests, 8, plan); // warm-up: caches, JIT
    for (const clients of CLIENTS) {
      const repeated = Array.from({ length: clients === 1 ? 1 : rounds }, () => requests).flat();
      const result = await runScenario(index, repeated, clients, plan);
      scenarios.push(result);
      console.log(JSON.stringify(result));
    }
  }
  // The corpus itself is held in this process, so RSS overstates what serving needs.
  const rssMiB = round(process.memoryUsage().rss / 2 ** 20, 0);
  const loadAverageAfterQueries = os.loadavg().map((load) => round(load, 2));

  console.log('maintenance…');
  const maintenance = await measureMaintenance(index, documents, Math.min(Number(flags['maintenance-pages']), documents.length - 1));
  console.log(JSON.stringify(maintenance));
  await index.close();
  const reopen = await timed(async () => {
    const reopened = await openLocalIndex(indexDir);
    await reopened.search({ query: 'memory allocation', limit: TOP_K, offset: 0, includeDomains: [], excludeDomains: [], window: null });
    await reopened.close();
  });

  const report = {
    benchmark: 'index-speed',
    date: new Date().toISOString(),
    machine: machineDescription(),
    engine: 'LanceDB 0.37.1 FTS (title + text fields, English stemming and stop words), snippets in JS',
    corpus: { path: corpusPath, documents: documents.length, excludedDomains: excluded },
    indexing,
    index: { documents: stats.documents, domains: stats.domains, bytesOnDisk: stats.bytesOnDisk, openSeconds: open.seconds, firstQuerySeconds: firstQuery.seconds },
    queries: { count: queries.length, topK: TOP_K, roundsAt8Clients: rounds, sample: queries.slice(0, 5).map((query) => query.text).concat(queries.slice(-5).map((query) => query.text)) },
    scenarios,
    rssMiBAfterQueries: rssMiB,
    loadAverageAfterQueries,
    maintenance,
    reopenAndFirstQuerySeconds: reopen.seconds,
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${OUT}`);
  process.exit(0);
}

await main();
