/**
 * What unindexed rows cost a query (issue 20 item 4, issue 24): a write that is not folded leaves
 * its rows to LanceDB's flat scan, which every search then pays for. This measures the search path
 * of the embedded default (hybridSearch: the full-text and vector legs, then the calibrated fusion)
 * and each leg alone, on one index of --pages synthetic pages with vectors, as unindexed rows are
 * added to it (--steps, cumulative), then the fold that indexes them: the figures behind
 * DEFAULT_MAX_UNINDEXED_ROWS. Everything runs in one process, one query at a time, side by side
 * in one run; the load average is recorded at each step.
 *
 * --rows-per-append sets how the unindexed rows come: in commits of that many rows each (a crawl's
 * trickle is many small commits, each its own fragment), or by default in commits of 5,000.
 *
 * Vectors are random unit vectors of the embedded model's width (the model's own time per query
 * does not depend on the index, and would hide what does); a query's vector is one of them.
 *
 *   npm run bench:unindexed-rows -- [--pages 50000] [--steps 0,100,1000,5000,20000] [--queries 100]
 *        [--rows-per-append 5000] [--work-dir /tmp/searchgate-bench/unindexed-rows] [--out bench/results/unindexed-rows.json]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_HYBRID_WEIGHTS, hybridSearch } from '../src/local/index/hybrid.js';
import { openLocalIndex } from '../src/local/index/index.js';
import type { EmbeddedPage, IndexQuery, LocalIndex } from '../src/local/types.js';
import { seededRandom } from '../src/util/random.js';
import { machineDescription, startWatchdog, SYNTHETIC_VOCABULARY, syntheticPages } from './index-bench-common.js';
import { sampleLatency } from './latency.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The width of all-minilm-l6-v2's vectors, the embedded model. */
const DIMENSIONS = 384;
const MODEL = 'bench-random-vectors';
const BATCH = 5_000;

const { values: flags } = parseArgs({
  options: {
    pages: { type: 'string', default: '50000' },
    steps: { type: 'string', default: '0,100,1000,5000,20000' },
    queries: { type: 'string', default: '100' },
    'rows-per-append': { type: 'string', default: '5000' },
    'work-dir': { type: 'string', default: '/tmp/searchgate-bench/unindexed-rows' },
    out: { type: 'string', default: join(REPO_ROOT, 'bench/results/unindexed-rows.json') },
  },
});
startWatchdog(3600, 'bench/unindexed-rows');

const random = seededRandom(24);
function unitVector(): Float32Array {
  const vector = Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

const CORPUS = { hosts: 2000, fromMs: Date.UTC(2015, 0, 1), toMs: Date.UTC(2026, 0, 1) };
function embeddedPages(firstPage: number, pages: number): EmbeddedPage[] {
  return syntheticPages({ ...CORPUS, pages, firstPage }).map((page) => ({ ...page, vectors: { model: MODEL, windows: [unitVector()], title: unitVector() } }));
}

async function appendPages(index: LocalIndex, firstPage: number, pages: number, batch = BATCH): Promise<void> {
  for (let start = 0; start < pages; start += batch) await index.append(embeddedPages(firstPage + start, Math.min(batch, pages - start)));
}

const loadAverage = () => os.loadavg().map((value) => Math.round(value * 100) / 100);
const pageCount = Number(flags.pages);
const steps = flags.steps!.split(',').map(Number);
const queryCount = Number(flags.queries);
const work = resolve(flags['work-dir']!);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const machine = machineDescription();

// maxUnindexedRows above every step: each step's rows are scanned, as they would be under that limit.
const index = await openLocalIndex(join(work, 'index'), { keepVersionsMs: 0, maxUnindexedRows: Number.MAX_SAFE_INTEGER });
let started = performance.now();
await appendPages(index, 0, pageCount);
await index.fold({ keepVersionsMs: 0 });
const buildSeconds = (performance.now() - started) / 1000;

// Two words, one common and one rarer, as a short web query; the same queries at every step.
const words = (i: number) => `${SYNTHETIC_VOCABULARY[(i * 7) % 200]} ${SYNTHETIC_VOCABULARY[200 + ((i * 31) % 2000)]}`;
const queryVectors = new Map<string, Float32Array>();
const vectorOf = (query: string) => queryVectors.get(query) ?? queryVectors.set(query, unitVector()).get(query)!;
const asQuery = (i: number, fields: Partial<IndexQuery> = {}): IndexQuery => ({ query: words(i), limit: 10, offset: 0, includeDomains: [], excludeDomains: [], window: null, ...fields });
const embedder = { model: MODEL, reads: [MODEL], dimensions: DIMENSIONS, embedQuery: async (query: string) => vectorOf(query) };
const hybrid = (i: number) => hybridSearch(index, asQuery(i), { weights: DEFAULT_HYBRID_WEIGHTS, candidates: 40, embedder });
const sampling = { count: queryCount, warmUp: 10 };

const results = [];
let unindexed = 0;
for (const step of steps) {
  if (step > unindexed) {
    await appendPages(index, 10_000_000 + unindexed, step - unindexed, Number(flags['rows-per-append']));
    unindexed = step;
  }
  const rows = await index.unindexedRows();
  const fullText = await sampleLatency((i) => index.search(asQuery(i)), sampling);
  const fullTextFiltered = await sampleLatency((i) => index.search(asQuery(i, { excludeDomains: ['site0.com'], window: { fromMs: Date.UTC(2020, 0, 1), toMs: Date.UTC(2023, 6, 15) } })), sampling);
  const vector = await sampleLatency((i) => index.vectorSearch({ ...asQuery(i, { limit: 40 }), vector: vectorOf(words(i)), models: [MODEL] }), sampling);
  const both = await sampleLatency(hybrid, sampling);
  const measured = { unindexedRows: rows, fullText, fullTextFiltered, vector, hybrid: both, loadAverage: loadAverage() };
  console.log(JSON.stringify(measured));
  results.push(measured);
}

started = performance.now();
await index.fold({ keepVersionsMs: 0 });
const foldSeconds = (performance.now() - started) / 1000;
const afterFold = await sampleLatency(hybrid, sampling);
const stats = await index.stats();
await index.close();

const result = {
  command: `node dist/bench/unindexed-rows.js ${process.argv.slice(2).join(' ')}`.trim(),
  machine,
  pages: pageCount,
  rowsPerAppend: Number(flags['rows-per-append']),
  buildSeconds: Math.round(buildSeconds * 10) / 10,
  steps: results,
  foldOfLastStep: { seconds: Math.round(foldSeconds * 10) / 10, hybridAfter: afterFold, documents: stats.documents, bytesOnDisk: stats.bytesOnDisk, loadAverage: loadAverage() },
};
mkdirSync(dirname(flags.out!), { recursive: true });
writeFileSync(flags.out!, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result.foldOfLastStep));
